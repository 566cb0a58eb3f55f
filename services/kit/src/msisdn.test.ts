import { describe, expect, it } from "vitest";
import { checkDestination, isSameNumber, normaliseMsisdn, operatorOf } from "./msisdn.ts";

describe("normaliseMsisdn", () => {
  it.each<[string, string | null, string]>([
    ["690000001", "690000001", "keeps a 9-digit local number"],
    ["+237690000001", "690000001", "drops +237"],
    ["00237690000001", "690000001", "drops 00237"],
    ["237690000001", "690000001", "drops 237 when 9 digits follow"],
    ["+237 6 90 00 00 01", "690000001", "drops spaces"],
    ["237000001", "237000001", "never cuts 237 off a 9-digit number"],
    ["69000000", null, "refuses 8 digits"],
    ["6900000012", null, "refuses 10 digits"],
    ["69000000a", null, "refuses a letter"],
    ["690-000-001", null, "does not rewrite dashes"],
    ["", null, "refuses empty text"],
  ])("%s -> %s (%s)", (raw, expected, _rule) => {
    expect(normaliseMsisdn(raw)).toBe(expected);
  });
});

describe("operatorOf", () => {
  it.each([
    ["670000000", "operator_a"],
    ["679999999", "operator_a"],
    ["650000000", "operator_a"],
    ["654000000", "operator_a"],
    ["680000000", "operator_a"],
    ["682000000", "operator_a"],
    ["683000000", "operator_a"],
    ["690000000", "operator_b"],
    ["699999999", "operator_b"],
    ["640000000", "operator_b"],
    ["649000000", "operator_b"],
    ["655000000", "operator_b"],
    ["659000000", "operator_b"],
    ["681000000", "operator_b"],
    ["684000000", "operator_b"],
    ["689000000", "operator_b"],
    ["+237670000000", "operator_a"],
    ["660000000", null],
    ["669000000", null],
    ["620000000", null],
    ["222000000", null],
    ["700000000", null],
    ["12345", null],
  ] as const)("%s belongs to %s", (msisdn, operator) => {
    expect(operatorOf(msisdn)).toBe(operator);
  });
});

describe("checkDestination", () => {
  it.each([
    ["690000001", { kind: "ok", msisdn: "690000001", operator: "operator_b" }],
    ["+237 670 000 001", { kind: "ok", msisdn: "670000001", operator: "operator_a" }],
    ["660000001", { kind: "operator_undetermined", msisdn: "660000001" }],
    ["6700001", { kind: "invalid_msisdn" }],
  ] as const)("%s", (raw, expected) => {
    expect(checkDestination(raw)).toEqual(expected);
  });
});

describe("isSameNumber: a number printed in an SMS against a destination", () => {
  it.each<[string, boolean | null, string]>([
    ["690000001", true, "the local number"],
    ["+237 690 000 001", true, "+237 with spaces"],
    ["237690000001", true, "237 without +"],
    ["00237690000001", true, "00237"],
    ["690000009", false, "another local number"],
    ["237690000009", false, "another number in international form"],
    ["2290167744314", false, "a Benin number: never a Cameroon destination"],
    ["+243812345678", false, "a Congo number"],
    ["69000000", false, "8 digits: no reading gives the destination"],
    ["229690000001", false, "a foreign code before the destination's digits"],
    ["69****001", true, "masked, the visible digits agree"],
    ["237690XXXX01", true, "international and masked, the visible digits agree"],
    ["69****009", false, "masked, a visible digit contradicts"],
    ["67XXXX001", false, "masked, the prefix contradicts"],
    ["690000001 ext", false, "letters beside the digits are not a number we sent to"],
    ["ORANGE", null, "no digit: nothing to compare"],
    ["", null, "empty"],
  ])("%s -> %s (%s)", (printed, expected, _rule) => {
    expect(isSameNumber(printed, "690000001")).toBe(expected);
  });
});
