import { describe, expect, it } from "vitest";
import { normalizeRaw, smsHash } from "./hash.ts";

describe("sms_hash", () => {
  const text = "Depot vers 699992396 ABDOU AZIZ reussi. Montant transaction : 16000FCFA";

  it("is the same for the same text on the same SIM without a client id", () => {
    expect(smsHash("sim-1", text)).toBe(smsHash("sim-1", text));
    expect(smsHash("sim-1", text)).toMatch(/^[0-9a-f]{64}$/);
  });

  it("ignores what handsets change: line ends, whitespace runs, trailing spaces, Unicode form", () => {
    expect(smsHash("sim-1", `  ${text.replace(/ /g, "\r\n")}  `)).toBe(smsHash("sim-1", text));
    expect(smsHash("sim-1", "re\u0301ussi")).toBe(smsHash("sim-1", "r\u00e9ussi"));
  });

  it("differs on another SIM, another text, or another client id", () => {
    const base = smsHash("sim-1", text, "c-1");
    expect(smsHash("sim-2", text, "c-1")).not.toBe(base);
    expect(smsHash("sim-1", text + ".", "c-1")).not.toBe(base);
    expect(smsHash("sim-1", text, "c-2")).not.toBe(base);
    expect(smsHash("sim-1", text)).not.toBe(base);
  });

  it("sets a copy from an unknown sender apart, and leaves the operator's copy unchanged", () => {
    const operatorCopy = smsHash("sim-1", text, "c-1");
    expect(smsHash("sim-1", text, "c-1", null)).toBe(operatorCopy);
    expect(smsHash("sim-1", text, "c-1", "+237670000000")).not.toBe(operatorCopy);
    expect(smsHash("sim-1", text, "c-1", "+237670000000")).not.toBe(smsHash("sim-1", text, "c-1", "+237670000001"));
  });

  it("treats an empty client id as none", () => {
    expect(smsHash("sim-1", text, "")).toBe(smsHash("sim-1", text, null));
    expect(smsHash("sim-1", text, undefined)).toBe(smsHash("sim-1", text));
  });

  it("cannot be forged by moving text between the SIM and the message", () => {
    expect(smsHash("a", "b c")).not.toBe(smsHash("a b", "c"));
  });

  it("normalizes to single spaces", () => {
    expect(normalizeRaw(" a\t\tb\n\nc ")).toBe("a b c");
  });
});
