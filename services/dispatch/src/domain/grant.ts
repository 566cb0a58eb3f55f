// Access-grant gate (the contract's "access profile").
//
// Admins bypass the grant, not the balance rules; supervisors do not bypass it.
// For everyone else the checks run in this order, the first failure answering 403:
//   1. a grant exists                        no_grant
//   2. it grants at least one SIM            no_grant (an agent without SIMs can run nothing)
//   3. the operation type is allowed         not_in_grant_type
//   4. the amount is at most max_amount      over_max_amount
//   5. the SIM, when known, is granted       not_in_grant_sim
// The SIM comes last so the same function serves before selection (no SIM yet, or
// the SIM the caller named) and after it, with the same answer for rules 1-4.
//
// The grant also narrows which SIMs are candidates: `filterCandidatesByGrant`
// keeps only granted SIMs for non-admins, so selection never picks a SIM the agent
// may not use. When the grant names SIMs but none of the declared operator is
// among the candidates, the agent is refused with 403 not_in_grant_sim ("grants no
// {operator} SIM"): the fleet may have such SIMs, the agent may not use them. When
// granted SIMs of the operator exist but none is eligible (frozen, unassigned,
// unmeasured, stale, too poor), selection's 422 answers: the agent is allowed, the
// SIMs it holds are not ready, and the text tells it which.

import type { DomainError } from "./errors.ts";
import { refusal } from "./reasons.ts";
import type { Operator, OpType, Role } from "./vocabulary.ts";

/** The contract's default ceiling per operation when a grant carries none. */
export const DEFAULT_MAX_AMOUNT = 500_000;

export interface AccessGrant {
  readonly allowed_sim_ids: readonly string[];
  readonly allowed_op_types: readonly string[];
  /** FCFA per operation; null reads as the default ceiling. */
  readonly max_amount: number | null;
}

export function bypassesGrant(role: Role): boolean {
  return role === "admin";
}

export function checkGrant(
  grant: AccessGrant | null,
  role: Role,
  simId: string | null,
  opType: OpType,
  amount: number,
): DomainError | null {
  if (bypassesGrant(role)) return null;
  if (grant === null) {
    return refusal("no_grant", "Access profile missing: an agent without an access grant can run no operation");
  }
  if (grant.allowed_sim_ids.length === 0) {
    return refusal("no_grant", "Access profile grants no SIM: an agent without SIMs can run no operation");
  }
  if (!grant.allowed_op_types.includes(opType)) {
    return refusal("not_in_grant_type", `Access profile does not allow ${opType} operations`, {
      op_type: opType,
      allowed_op_types: [...grant.allowed_op_types],
    });
  }
  const maxAmount = grant.max_amount ?? DEFAULT_MAX_AMOUNT;
  if (amount > maxAmount) {
    return refusal("over_max_amount", `Access profile limits an operation to ${maxAmount} FCFA; requested ${amount}`, {
      requested: amount,
      max_amount: maxAmount,
    });
  }
  if (simId !== null && !grant.allowed_sim_ids.includes(simId)) {
    return refusal("not_in_grant_sim", `Access profile does not allow SIM ${simId}`, { sim_id: simId });
  }
  return null;
}

/** The candidates a caller may be given: every SIM for an admin, only granted SIMs otherwise. */
export function filterCandidatesByGrant<T extends { readonly sim_id: string }>(
  candidates: readonly T[],
  grant: AccessGrant | null,
  role: Role,
): T[] {
  if (bypassesGrant(role)) return [...candidates];
  const allowed = new Set(grant?.allowed_sim_ids ?? []);
  return candidates.filter((sim) => allowed.has(sim.sim_id));
}

/**
 * After filtering, for automatic selection: a non-admin whose grant holds no SIM
 * of the declared operator is refused by the grant (403), before selection could
 * answer "No active {operator} SIM available" about SIMs it may not use anyway.
 */
export function checkGrantCoversOperator(
  granted: readonly { readonly operator: Operator }[],
  role: Role,
  operator: Operator,
): DomainError | null {
  if (bypassesGrant(role)) return null;
  if (granted.some((sim) => sim.operator === operator)) return null;
  return refusal("not_in_grant_sim", `Access profile grants no ${operator} SIM`, { operator });
}
