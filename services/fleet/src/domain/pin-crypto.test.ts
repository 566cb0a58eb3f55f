import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { KeyringError, open, parseKeyring, pinAad, seal, webhookSecretAad } from "./pin-crypto.ts";

const key = () => randomBytes(32).toString("base64");
const OLD = `old:${key()}`;
const NEW = `new:${key()}`;
const SIM_A = "11111111-1111-4111-8111-111111111111";
const SIM_B = "22222222-2222-4222-8222-222222222222";

describe("parseKeyring", () => {
  it("makes the first key the sealing key and keeps every key for opening", () => {
    const ring = parseKeyring(`${NEW}, ${OLD}`);
    expect(ring.currentKeyId).toBe("new");
    expect([...ring.keys.keys()]).toEqual(["new", "old"]);
  });

  it.each([
    ["an empty list", ""],
    ["a pair without id", `:${key()}`],
    ["a key of 16 bytes", `short:${randomBytes(16).toString("base64")}`],
    ["a repeated id", `${OLD},${OLD}`],
    ["a missing separator", key()],
  ])("refuses %s", (_name, spec) => {
    expect(() => parseKeyring(spec)).toThrow(KeyringError);
  });
});

describe("seal and open", () => {
  const ring = parseKeyring(OLD);

  it("round-trips under the SIM id, with a fresh IV each time, and never holds the plaintext", () => {
    const a = seal(ring, "48261937", pinAad(SIM_A));
    const b = seal(ring, "48261937", pinAad(SIM_A));
    expect(a.keyId).toBe("old");
    expect(a.ciphertext.equals(b.ciphertext)).toBe(false);
    expect(a.ciphertext.toString("latin1")).not.toContain("48261937");
    expect(open(ring, a, pinAad(SIM_A))).toBe("48261937");
  });

  it.each([
    ["another SIM's id as associated data", (s: Buffer) => s, pinAad(SIM_B)],
    [
      "a flipped ciphertext bit",
      (s: Buffer) => Buffer.from(s.map((v, i) => (i === s.length - 1 ? v ^ 1 : v))),
      pinAad(SIM_A),
    ],
    ["a flipped tag bit", (s: Buffer) => Buffer.from(s.map((v, i) => (i === 12 ? v ^ 1 : v))), pinAad(SIM_A)],
    ["a truncated value", (s: Buffer) => s.subarray(0, 20), pinAad(SIM_A)],
    ["a webhook's associated data", (s: Buffer) => s, webhookSecretAad(SIM_A)],
  ])("refuses %s without revealing the plaintext", (_name, tamper, aad) => {
    const sealed = seal(ring, "1234", pinAad(SIM_A));
    const attempt = () => open(ring, { keyId: sealed.keyId, ciphertext: tamper(sealed.ciphertext) }, aad);
    expect(attempt).toThrow(KeyringError);
    try {
      attempt();
    } catch (err) {
      expect((err as Error).message).not.toContain("1234");
    }
  });

  it("keeps old values readable after a rotation and seals new ones under the new key", () => {
    const before = seal(parseKeyring(OLD), "2468", pinAad(SIM_A));
    const rotated = parseKeyring(`${NEW},${OLD}`);
    expect(open(rotated, before, pinAad(SIM_A))).toBe("2468");
    const after = seal(rotated, "1357", pinAad(SIM_B));
    expect(after.keyId).toBe("new");
    expect(open(rotated, after, pinAad(SIM_B))).toBe("1357");
    expect(() => open(parseKeyring(OLD), after, pinAad(SIM_B))).toThrow(/no configured key has id new/);
    expect(() => open(parseKeyring(NEW), before, pinAad(SIM_A))).toThrow(/no configured key has id old/);
  });
});
