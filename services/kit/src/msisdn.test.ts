import { describe, expect, it } from "vitest";
import { checkDestination, normaliseMsisdn, operatorOf } from "./msisdn.ts";

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
