// Checks on the create-operation request itself, before any SIM is looked at.

import type { DomainError } from "./errors.ts";
import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";
import type { Operator, OpType, Origin } from "./vocabulary.ts";

export type CallerKind = "api_key" | "session";

/**
 * The origin stored on a created operation. The API key may choose `aggregated`
 * (default) or `assisted`; a session is always `assisted` whatever it sends. `matching`
 * belongs to POST /operations/matching alone and is refused from either caller:
 * silently turning a request for a hand-dialled operation into a queued one would
 * dial something the caller meant to dial by hand.
 */
export function resolveOrigin(caller: CallerKind, requested: string | null | undefined): Result<Origin> {
  if (requested === "matching") {
    return fail(
      refusal("origin_matching_refused", "origin matching is set only by creating a matching operation", {
        origin: requested,
      }),
    );
  }
  if (caller === "session") return ok("assisted");
  if (requested == null) return ok("aggregated");
  if (requested === "aggregated" || requested === "assisted") return ok(requested);
  return fail(
    refusal("invalid_request", `origin must be aggregated or assisted, got '${requested}'`, {
      field: "origin",
      value: requested,
    }),
  );
}

/** operator_b menus for these types ask for the agent's merchant code (contract, Create operation). */
const MERCHANT_CODE_TYPES: Readonly<Record<Operator, readonly OpType[]>> = {
  operator_a: [],
  operator_b: ["withdrawal", "float_deposit", "mini_statement"],
};

export function requiresMerchantCode(operator: Operator, opType: OpType): boolean {
  return MERCHANT_CODE_TYPES[operator].includes(opType);
}

/**
 * Refused at creation (422) rather than left to fail at dispatch (500 when the USSD
 * steps cannot be built), so the caller learns it while it can still fix the request.
 */
export function checkMerchantCode(
  operator: Operator,
  opType: OpType,
  merchantCode: string | null | undefined,
): DomainError | null {
  if (!requiresMerchantCode(operator, opType)) return null;
  if (merchantCode != null && merchantCode.trim() !== "") return null;
  return refusal("merchant_code_required", `merchant_code is required for ${opType} on ${operator}`, {
    operator,
    op_type: opType,
  });
}

/** Amounts are whole FCFA above 0 (balance checks and mini statements send the placeholder 1). */
export function checkAmount(amount: number): DomainError | null {
  if (Number.isSafeInteger(amount) && amount > 0) return null;
  return refusal("invalid_request", `montant must be a whole number of FCFA above 0, got ${amount}`, {
    field: "montant",
    value: amount,
  });
}
