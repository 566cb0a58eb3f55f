// Operator prefix rule: the declared operator must match the destination number.
//
// The rule itself (local form, prefix table) is the kit's `msisdn.ts`, shared with
// intake; this module turns its answers into dispatch's refusals. The stored
// `msisdn_dest` and every detail text use the 9-digit local form.

import { checkDestination, normaliseMsisdn, operatorOf } from "@transferops/kit/pure";
import type { DomainError } from "./errors.ts";
import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";
import { isAccountQuery, type Operator, type OpType } from "./vocabulary.ts";

export { normaliseMsisdn, operatorOf };

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
  const checked = checkDestination(msisdn);
  if (checked.kind === "invalid_msisdn") {
    return fail(refusal("invalid_msisdn", `Destination ${msisdn} is not a 9-digit local number`, { msisdn }));
  }
  if (checked.kind === "operator_undetermined") {
    return fail(
      refusal("operator_undetermined", `Cannot determine the operator for ${checked.msisdn}`, {
        msisdn: checked.msisdn,
      }),
    );
  }
  return ok({ msisdn: checked.msisdn, operator: checked.operator });
}
