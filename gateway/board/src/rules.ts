// The contract's rules a form can check before sending (the server checks them again):
// a number the server reads as 9 local digits whose prefix names its operator, a whole
// amount above 0, and a merchant code for withdrawals, float deposits and mini statements on
// operator_b. The number rules and the vocabularies are the server's own files (the kit's
// msisdn.ts and vocabulary.ts, browser-safe), not a copy.
import { normaliseMsisdn, operatorOf } from "../../../services/kit/src/msisdn.ts";
import type { Operator, OpType } from "../../../services/kit/src/vocabulary.ts";
import { t } from "./i18n.ts";

export {
  DEFAULT_OP_TYPE,
  OPERATION_STATUSES,
  OPERATORS,
  OP_TYPES,
  PROVABLE_OPERATION_STATUSES,
  ROLES,
  TRANSFER_OP_TYPES,
  type Operator,
  type OpType,
  type Role,
} from "../../../services/kit/src/vocabulary.ts";

/** What a person types between the digits ("690 11-12.22", "(+237) 690111222"): dropped before the server's rule. */
const SEPARATORS = /[\s\-.()/]/g;

/**
 * The 9 local digits the server stores ("+237 690 11 12 22" → "690111222"), as the kit's
 * normaliseMsisdn reads the number once the separators are dropped; the digits as typed when
 * it is not a number (msisdnProblem says so first).
 */
export function localDigits(s: string): string {
  const typed = s.replace(SEPARATORS, "");
  return normaliseMsisdn(typed) ?? typed;
}

export function msisdnProblem(msisdn: string, declared?: Operator): string | undefined {
  const local = normaliseMsisdn(msisdn.replace(SEPARATORS, ""));
  if (local === null) return t("v.msisdn");
  const actual = operatorOf(local);
  if (!actual) return t("v.prefix");
  if (declared && actual !== declared) return t("v.operator", { operator: actual });
  return undefined;
}

export function amountProblem(amount: string): string | undefined {
  return /^\d+$/.test(amount.trim()) && Number(amount) > 0 && Number(amount) <= 2_147_483_647
    ? undefined
    : t("v.amount");
}

export const needsMerchantCode = (operator: Operator, type: OpType) =>
  operator === "operator_b" && (type === "withdrawal" || type === "float_deposit" || type === "mini_statement");

/** Balance checks and mini statements dial no recipient: no prefix check, amount placeholder 1. */
export const dialsNoRecipient = (type: OpType) => type === "balance" || type === "mini_statement";
