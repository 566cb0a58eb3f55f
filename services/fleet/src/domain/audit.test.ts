import { describe, expect, it } from "vitest";
import { DomainError } from "@transferops/kit";
import { auditFilterOf, redactDetails, REDACTED } from "./audit.ts";

const base = { action: "", target: "", actor: "", limit: 0, before: "" };
const now = new Date("2026-11-26T05:00:00Z");

describe("audit details redaction", () => {
  it("removes values under a secret's name at any depth, keeps ids", () => {
    const out = redactDetails({
      pin: "1234",
      new_pin: "9999",
      password: "Temp-pass-1",
      token: "tok",
      device_token: "dt",
      secret: "s",
      pin_ciphertext: "c",
      password_hash: "h",
      pin_key_id: "k1",
      sessions_revoked: 2,
      nested: [{ api_key: "ak", label: "ok" }],
    });
    expect(out).toEqual({
      pin: REDACTED,
      new_pin: REDACTED,
      password: REDACTED,
      token: REDACTED,
      device_token: REDACTED,
      secret: REDACTED,
      pin_ciphertext: REDACTED,
      password_hash: REDACTED,
      pin_key_id: "k1",
      sessions_revoked: 2,
      nested: [{ api_key: REDACTED, label: "ok" }],
    });
  });

  it("shows a URL without its query or credentials", () => {
    expect(redactDetails({ url: "https://h.example/hook?token=abc" })).toEqual({
      url: `https://h.example/hook?${REDACTED}`,
    });
    expect(redactDetails({ url: "https://u:p@h.example/x" })).toEqual({ url: "https://h.example/x" });
    expect(redactDetails({ url: "https://h.example/x" })).toEqual({ url: "https://h.example/x" });
  });
});

describe("audit list filter", () => {
  it("defaults to 30 local days and 50 entries; a trailing * is a prefix", () => {
    const f = auditFilterOf({ ...base, action: "sim.*" }, now);
    expect(f.limit).toBe(50);
    expect(f.from?.toISOString()).toBe("2026-10-27T23:00:00.000Z");
    expect(f.action).toEqual({ prefix: "sim." });
    expect(auditFilterOf({ ...base, action: "sim.freeze" }, now).action).toEqual({ exact: "sim.freeze" });
  });

  it("from/to are inclusive local days", () => {
    const f = auditFilterOf({ ...base, window: { days: 0, from: "2026-11-01", to: "2026-11-02", all: false } }, now);
    expect([f.from?.toISOString(), f.to?.toISOString()]).toEqual([
      "2026-10-31T23:00:00.000Z",
      "2026-11-02T23:00:00.000Z",
    ]);
  });

  it.each([
    [{ window: { days: 366, from: "", to: "", all: false } }, "days"],
    [{ window: { days: 0, from: "2026-02-30", to: "", all: false } }, "from"],
    [{ window: { days: 0, from: "2026-11-03", to: "2026-11-02", all: false } }, "from"],
    [{ limit: 251 }, "limit"],
    [{ actor: "nobody" }, "actor"],
    [{ before: "0" }, "before"],
  ])("refuses %o (422 on %s)", (bad, field) => {
    let err: unknown;
    try {
      auditFilterOf({ ...base, ...bad }, now);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(DomainError);
    expect((err as DomainError).status).toBe("invalid");
    expect((err as DomainError).violations.map((v) => v.field)).toContain(field);
  });
});
