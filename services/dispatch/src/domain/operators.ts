// Operator prefix rule: the declared operator must match the destination number.
//
// Numbers are handled in the contract's 9-digit local form. A caller may write the
// country code (`+237`, `00237` or `237` followed by the 9 local digits) and spaces;
// `normaliseMsisdn` reduces those to the local form before any rule runs, so the
// stored `msisdn_dest` and every detail text use the local form. Nothing else is
// rewritten: a number that is not 9 digits afterwards is refused as invalid.

import type { DomainError } from "./errors.ts";
import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";
import { isAccountQuery, type Operator, type OpType } from "./vocabulary.ts";

const LOCAL_LENGTH = 9;

/** Three-digit prefixes per operator, from the contract's table. Anything else (66x included) is undetermined. */
const PREFIX_RANGES: Readonly<Record<Operator, readonly (readonly [number, number])[]>> = {
  operator_a: [
    [670, 679],
    [650, 654],
    [680, 680],
    [682, 683],
  ],
  operator_b: [
    [690, 699],
    [640, 649],
    [655, 659],
    [681, 681],
    [684, 689],
  ],
};

/** The 9-digit local form, or null when the text is not a Cameroon number in any accepted spelling. */
export function normaliseMsisdn(raw: string): string | null {
  const compact = raw.replace(/\s+/g, "");
  const local = stripCountryCode(compact);
  return /^\d+$/.test(local) && local.length === LOCAL_LENGTH ? local : null;
}

function stripCountryCode(compact: string): string {
  // `237` is stripped only when 9 digits follow, so a local number is never cut.
  for (const prefix of ["+237", "00237", "237"]) {
    if (compact.startsWith(prefix) && compact.length === prefix.length + LOCAL_LENGTH) {
      return compact.slice(prefix.length);
    }
  }
  return compact;
}

/** The operator owning the number's prefix, or null when the number is malformed or the prefix is nobody's. */
export function operatorOf(msisdn: string): Operator | null {
  const local = normaliseMsisdn(msisdn);
  if (local === null) return null;
  const prefix = Number(local.slice(0, 3));
  for (const operator of Object.keys(PREFIX_RANGES) as Operator[]) {
    if (PREFIX_RANGES[operator].some(([low, high]) => prefix >= low && prefix <= high)) return operator;
  }
  return null;
}

/**
 * The create-operation gate. Account queries (balance, mini statement) have no
 * recipient, so they skip it whatever the destination field holds.
 */
export function checkOperator(declared: Operator, msisdn: string, opType: OpType): DomainError | null {
  if (isAccountQuery(opType)) return null;
  const derived = deriveOperator(msisdn);
  if (!derived.ok) return derived.error;
  const { msisdn: local, operator } = derived.value;
  if (operator !== declared) {
    return refusal(
      "operator_mismatch",
      `Operator mismatch: ${local} is ${operator}, but the operation declares ${declared}`,
      { msisdn: local, operator, declared_operator: declared },
    );
  }
  return null;
}

/**
 * The operator of a destination, for routes that take none from the caller
 * (a matching operation derives it from `beneficiary_msisdn`).
 */
export function deriveOperator(msisdn: string): Result<{ msisdn: string; operator: Operator }> {
  const local = normaliseMsisdn(msisdn);
  if (local === null) {
    return fail(refusal("invalid_msisdn", `Destination ${msisdn} is not a 9-digit local number`, { msisdn }));
  }
  const operator = operatorOf(local);
  if (operator === null) {
    return fail(refusal("operator_undetermined", `Cannot determine the operator for ${local}`, { msisdn: local }));
  }
  return ok({ msisdn: local, operator });
}
