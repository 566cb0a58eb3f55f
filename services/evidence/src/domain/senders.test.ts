import { describe, expect, it } from "vitest";
import { loadEvidenceConfig } from "../config.ts";
import { DEFAULT_SENDER_IDS, isKnownSender, parseSenderList, senderKey } from "./senders.ts";

describe("operator sender ids", () => {
  it("recognises each operator's own ids, whatever the case, spaces or punctuation", () => {
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_a", "MobileMoney")).toBe(true);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_a", "MTN MoMo")).toBe(true);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", "OrangeMoney")).toBe(true);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", "orange-money")).toBe(true);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", " ORANGE MONEY ")).toBe(true);
  });

  it("refuses an ordinary number, another operator's id, an empty or look-alike sender", () => {
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", "+237670000000")).toBe(false);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", "MobileMoney")).toBe(false);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_a", "OrangeMoney")).toBe(false);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_a", "")).toBe(false);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_a", "--")).toBe(false);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", "OrangeMoney1")).toBe(false);
    expect(isKnownSender(DEFAULT_SENDER_IDS, "operator_b", "0rangeMoney")).toBe(false);
  });

  it("reads the setting as a comma-separated list", () => {
    expect(parseSenderList("MobileMoney, MTN MoMo,,  ,8000")).toEqual(["MobileMoney", "MTN MoMo", "8000"]);
    expect(isKnownSender({ operator_a: ["8000"], operator_b: [] }, "operator_a", "8000")).toBe(true);
    expect(senderKey("Orange\u00a0Money")).toBe("orangemoney");
  });
});

describe("sender id settings", () => {
  it("defaults to the operators' sender names and reads OPERATOR_A_SENDERS / OPERATOR_B_SENDERS", () => {
    expect(loadEvidenceConfig({}).senders).toEqual(DEFAULT_SENDER_IDS);
    const c = loadEvidenceConfig({ OPERATOR_A_SENDERS: "MTN MoMo, 8000", OPERATOR_B_SENDERS: "OM-CM" });
    expect(c.senders).toEqual({ operator_a: ["MTN MoMo", "8000"], operator_b: ["OM-CM"] });
  });

  it("refuses an empty list", () => {
    expect(() => loadEvidenceConfig({ OPERATOR_B_SENDERS: " , " })).toThrow(
      /OPERATOR_B_SENDERS: at least one sender id/,
    );
  });
});
