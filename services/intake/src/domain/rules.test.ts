import { describe, expect, it } from "vitest";
import {
  canSee,
  checkCreateTransaction,
  checkBoardActor,
  checkIntakeActor,
  checkReceiverPhone,
  parseListQuery,
  type Actor,
} from "./rules.ts";

const actor = (o: Partial<Actor> = {}): Actor => ({
  kind: "session",
  agent_id: "a1",
  role: "agent",
  is_active: true,
  full_name: "A",
  ...o,
});

describe("checkReceiverPhone", () => {
  it.each([
    ["operator_b", "690111222", null, "690111222"],
    ["operator_b", "+237 690 111 222", null, "690111222"],
    ["operator_a", "00237670111222", null, "670111222"],
    ["operator_b", "12345", "invalid_msisdn", null],
    ["operator_b", "6901112223", "invalid_msisdn", null],
    ["operator_a", "660111222", "operator_undetermined", null],
    ["operator_a", "690111222", "operator_mismatch", null],
    ["operator_b", "650111222", "operator_mismatch", null],
  ] as const)("%s %s -> %s", (operator, phone, reason, local) => {
    const r = checkReceiverPhone(operator, phone);
    if (reason === null) expect(r).toEqual({ ok: true, msisdn: local });
    else expect(r.ok ? null : r.error.reason).toBe(reason);
  });
});

describe("canSee", () => {
  it.each([
    ["agent", "pending", null, true],
    ["agent", "launched", "a1", true],
    ["agent", "done", "a1", true],
    ["agent", "launched", "a2", false],
    ["agent", "cancelled", null, false],
    ["agent", "closed", null, false],
    ["supervisor", "launched", "a2", false],
    ["admin", "launched", "a2", true],
    ["admin", "cancelled", null, true],
  ] as const)("%s sees %s launched by %s: %s", (role, state, launchedBy, visible) => {
    expect(canSee(actor({ role }), { state, launched_by: launchedBy })).toBe(visible);
  });
});

describe("actors", () => {
  it.each([
    [actor(), null],
    [actor({ is_active: false }), "agent_inactive"],
    [actor({ kind: "api_key", agent_id: "" }), "caller_not_allowed"],
    [actor({ kind: "device", agent_id: "" }), "caller_not_allowed"],
  ])("board route: %j -> %s", (a, reason) => {
    expect(checkBoardActor(a)?.reason ?? null).toBe(reason);
  });

  it("creates with the API key only", () => {
    expect(checkIntakeActor(actor({ kind: "api_key" }))).toBeNull();
    expect(checkIntakeActor(actor())?.reason).toBe("caller_not_allowed");
  });
});

describe("parseListQuery", () => {
  it.each([
    ["", 0, { ok: true, state: null, limit: 100 }],
    ["pending", 5, { ok: true, state: "pending", limit: 5 }],
    ["closed", 250, { ok: true, state: "closed", limit: 250 }],
  ] as const)("%s, %s", (state, limit, expected) => {
    expect(parseListQuery(state, limit)).toEqual(expected);
  });

  it.each([
    ["lost", 0],
    ["", 251],
    ["", -1],
  ])("refuses %s, %s", (state, limit) => {
    const r = parseListQuery(state, limit);
    expect(r.ok ? null : r.error.reason).toBe("invalid_request");
  });
});

describe("checkCreateTransaction: the first refusal in the order the checks answer", () => {
  const valid = {
    request_id: "r-1",
    contact_id: "c-1",
    receiver_name: "Marie",
    receiver_phone: "690111222",
    operator: "operator_b",
    received_amount_xaf: 5000n,
  };
  it.each<[string, Partial<typeof valid> & Record<string, unknown>, string | null, string]>([
    ["a valid create gives the local number", {}, null, "690111222"],
    [
      "request_id before everything else",
      { request_id: " ", operator: "x", received_amount_xaf: 0n },
      "request_id",
      "",
    ],
    [
      "receiver_phone's length before the operator",
      { receiver_phone: "6".repeat(21), operator: "x" },
      "receiver_phone",
      "",
    ],
    ["the operator before the amount", { operator: "operator_c", received_amount_xaf: 0n }, "operator", ""],
    ["the amount before the rate", { received_amount_xaf: 0n, rate: -1 }, "received_amount_xaf", ""],
    ["a rate of 0", { rate: 0 }, "rate", ""],
    ["a send amount that is not finite", { send_amount_eur: Number.NaN }, "send_amount_eur", ""],
    ["the number's operator last", { receiver_phone: "670111222" }, "operator_mismatch", ""],
  ])("%s", (_rule, change, refusedOn, msisdn) => {
    const r = checkCreateTransaction({ ...valid, ...change } as Parameters<typeof checkCreateTransaction>[0]);
    if (refusedOn === null) return expect(r).toEqual({ ok: true, msisdn });
    expect(r.ok).toBe(false);
    const e = (r as { ok: false; error: { reason?: string; context: Record<string, unknown> } }).error;
    expect(e.reason === "invalid_request" ? e.context.field : e.reason).toBe(refusedOn);
  });
});
