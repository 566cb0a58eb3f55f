import { describe, expect, it } from "vitest";
import { checkOperator, deriveOperator } from "./operators.ts";
import type { Operator, OpType } from "./vocabulary.ts";

describe("checkOperator", () => {
  it.each<[string, Operator, string, OpType, string | null, string | null]>([
    ["accepts a matching prefix", "operator_b", "690000001", "deposit", null, null],
    ["accepts an international spelling", "operator_a", "+237 670 000 001", "withdrawal", null, null],
    [
      "refuses a prefix of the other operator",
      "operator_a",
      "690000001",
      "deposit",
      "operator_mismatch",
      "Operator mismatch: 690000001 is operator_b, but the operation declares operator_a",
    ],
    [
      "names the number in local form when refusing",
      "operator_b",
      "+237670000001",
      "float_deposit",
      "operator_mismatch",
      "Operator mismatch: 670000001 is operator_a, but the operation declares operator_b",
    ],
    [
      "refuses a 66x prefix as undetermined",
      "operator_a",
      "660000001",
      "deposit",
      "operator_undetermined",
      "Cannot determine the operator for 660000001",
    ],
    [
      "refuses a number that is not 9 digits",
      "operator_a",
      "6700001",
      "deposit",
      "invalid_msisdn",
      "Destination 6700001 is not a 9-digit local number",
    ],
    ["skips the check for a balance check", "operator_a", "660000001", "balance", null, null],
    ["skips the check for a mini statement", "operator_b", "670000001", "mini_statement", null, null],
  ])("%s", (_rule, declared, msisdn, opType, code, detail) => {
    const error = checkOperator(declared, msisdn, opType);
    if (code === null) {
      expect(error).toBeNull();
    } else {
      expect(error).toMatchObject({ reason: code, message: detail });
    }
  });

  it("puts the number and both operators in the context of a mismatch", () => {
    expect(checkOperator("operator_a", "690000001", "deposit")?.context).toEqual({
      reason: "operator_mismatch",
      msisdn: "690000001",
      operator: "operator_b",
      declared_operator: "operator_a",
    });
  });
});

describe("deriveOperator", () => {
  it("derives the operator and the local number of a matching operation's beneficiary", () => {
    expect(deriveOperator("237 655 000 001")).toEqual({
      ok: true,
      value: { msisdn: "655000001", operator: "operator_b" },
    });
  });

  it("refuses an undetermined prefix", () => {
    const result = deriveOperator("661000000");
    expect(result.ok ? null : result.error.message).toBe("Cannot determine the operator for 661000000");
  });
});
