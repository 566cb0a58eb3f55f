import { describe, expect, it } from "vitest";
import { checkAmount, checkMerchantCode, resolveOrigin, type CallerKind } from "./request-rules.ts";
import type { Operator, OpType } from "./vocabulary.ts";

describe("resolveOrigin", () => {
  it.each<[string, CallerKind, string | null | undefined, string | [string, string]]>([
    ["defaults the API key to aggregated", "api_key", undefined, "aggregated"],
    ["defaults the API key to aggregated on null", "api_key", null, "aggregated"],
    ["honours assisted from the API key", "api_key", "assisted", "assisted"],
    ["honours aggregated from the API key", "api_key", "aggregated", "aggregated"],
    ["makes a session assisted whatever it sends", "session", "aggregated", "assisted"],
    ["makes a session assisted when it sends nothing", "session", undefined, "assisted"],
    [
      "refuses matching from the API key",
      "api_key",
      "matching",
      ["origin_matching_refused", "origin matching is set only by creating a matching operation"],
    ],
    [
      "refuses matching from a session",
      "session",
      "matching",
      ["origin_matching_refused", "origin matching is set only by creating a matching operation"],
    ],
    [
      "refuses an unknown origin from the API key",
      "api_key",
      "batch",
      ["invalid_request", "origin must be aggregated or assisted, got 'batch'"],
    ],
  ])("%s", (_rule, caller, requested, expected) => {
    const result = resolveOrigin(caller, requested);
    expect(result.ok ? result.value : [result.error.reason, result.error.message]).toEqual(expected);
  });
});

describe("checkMerchantCode", () => {
  it.each<[string, Operator, OpType, string | null, string | null]>([
    [
      "requires it for a withdrawal on operator_b",
      "operator_b",
      "withdrawal",
      null,
      "merchant_code is required for withdrawal on operator_b",
    ],
    [
      "requires it for a float deposit on operator_b",
      "operator_b",
      "float_deposit",
      "",
      "merchant_code is required for float_deposit on operator_b",
    ],
    [
      "requires it for a mini statement on operator_b",
      "operator_b",
      "mini_statement",
      "  ",
      "merchant_code is required for mini_statement on operator_b",
    ],
    ["accepts one given on operator_b", "operator_b", "withdrawal", "515318", null],
    ["does not require it for a deposit on operator_b", "operator_b", "deposit", null, null],
    ["does not require it for a balance check on operator_b", "operator_b", "balance", null, null],
    ["does not require it on operator_a", "operator_a", "withdrawal", null, null],
  ])("%s", (_rule, operator, opType, code, detail) => {
    const error = checkMerchantCode(operator, opType, code);
    expect(error === null ? null : [error.reason, error.status, error.message]).toEqual(
      detail === null ? null : ["merchant_code_required", "refused", detail],
    );
  });
});

describe("checkAmount", () => {
  it.each<[string, number, string | null]>([
    ["accepts a whole amount above 0", 5000, null],
    ["accepts the placeholder 1 of account queries", 1, null],
    ["refuses 0", 0, "montant must be a whole number of FCFA above 0, got 0"],
    ["refuses a negative amount", -5, "montant must be a whole number of FCFA above 0, got -5"],
    ["refuses a fraction of a franc", 10.5, "montant must be a whole number of FCFA above 0, got 10.5"],
    ["refuses NaN", Number.NaN, "montant must be a whole number of FCFA above 0, got NaN"],
  ])("%s", (_rule, amount, detail) => {
    const error = checkAmount(amount);
    expect(error === null ? null : [error.reason, error.message]).toEqual(
      detail === null ? null : ["invalid_request", detail],
    );
  });
});
