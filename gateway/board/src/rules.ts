// The contract's rules a form can check before sending (the server checks them again):
// a 9-digit local number whose prefix names its operator, a whole amount above 0, and a
// merchant code for withdrawals, float deposits and mini statements on operator_b.
import { t } from "./i18n.ts";

export type OperatorCode = "operator_a" | "operator_b";
export const OP_TYPES = ["deposit", "withdrawal", "balance", "float_deposit", "mini_statement"] as const;
export type OpType = (typeof OP_TYPES)[number];

const PREFIXES: Record<OperatorCode, (p: number) => boolean> = {
  operator_a: (p) => (p >= 670 && p <= 679) || (p >= 650 && p <= 654) || p === 680 || p === 682 || p === 683,
  operator_b: (p) =>
    (p >= 690 && p <= 699) || (p >= 640 && p <= 649) || (p >= 655 && p <= 659) || p === 681 || (p >= 684 && p <= 689),
};

/** Digits of a number as typed ("+237 690 11 12 22" → "690111222"). */
export function localDigits(s: string): string {
  const d = s.replace(/\D/g, "");
  return d.length === 12 && d.startsWith("237") ? d.slice(3) : d;
}

export function operatorOf(msisdn: string): OperatorCode | undefined {
  const d = localDigits(msisdn);
  if (d.length !== 9) return undefined;
  const p = Number(d.slice(0, 3));
  return (Object.keys(PREFIXES) as OperatorCode[]).find((o) => PREFIXES[o](p));
}

export function msisdnProblem(msisdn: string, declared?: OperatorCode): string | undefined {
  if (!/^\d{9}$/.test(localDigits(msisdn))) return t("v.msisdn");
  const actual = operatorOf(msisdn);
  if (!actual) return t("v.prefix");
  if (declared && actual !== declared) return t("v.operator", { operator: actual });
  return undefined;
}

export function amountProblem(amount: string): string | undefined {
  return /^\d+$/.test(amount.trim()) && Number(amount) > 0 && Number(amount) <= 2_147_483_647
    ? undefined
    : t("v.amount");
}

export const needsMerchantCode = (operator: OperatorCode, type: OpType) =>
  operator === "operator_b" && (type === "withdrawal" || type === "float_deposit" || type === "mini_statement");

/** Balance checks and mini statements dial no recipient: no prefix check, amount placeholder 1. */
export const dialsNoRecipient = (type: OpType) => type === "balance" || type === "mini_statement";
