import type { Violation } from "@transferops/kit/pure";
import { isOpType, type OpType } from "./vocabulary.ts";

// Access grants (the contract's "access profile"): the SIMs and operation types an agent
// may use and the ceiling of one operation. Fleet records them; dispatch enforces them.

export const DEFAULT_OP_TYPES: readonly OpType[] = ["deposit", "balance"];
export const DEFAULT_MAX_AMOUNT = 500_000;

export interface GrantInput {
  allowed_sim_ids: readonly string[];
  /** Empty means the default types. */
  allowed_op_types: readonly string[];
  /** Undefined means the default ceiling. */
  max_amount?: number;
}

export interface Grant {
  allowed_sim_ids: string[];
  allowed_op_types: OpType[];
  max_amount: number;
}

export type GrantCheck =
  | { ok: true; grant: Grant }
  | { ok: false; violations: Violation[]; rejected: { sim_ids: string[]; op_types: string[] } };

/**
 * Validates a grant against the SIMs that exist: at least one SIM, every SIM known, every
 * type known, a ceiling above 0. Duplicates are dropped; order is kept. Every problem is
 * reported at once, naming what was rejected.
 */
export function checkGrant(input: GrantInput, existingSimIds: ReadonlySet<string>): GrantCheck {
  const simIds = unique(input.allowed_sim_ids);
  const opTypes = input.allowed_op_types.length ? unique(input.allowed_op_types) : [...DEFAULT_OP_TYPES];
  const maxAmount = input.max_amount ?? DEFAULT_MAX_AMOUNT;
  const rejectedSims = simIds.filter((id) => !existingSimIds.has(id));
  const rejectedTypes = opTypes.filter((t) => !isOpType(t));
  const violations: Violation[] = [];
  if (!simIds.length) violations.push({ field: "allowed_sim_ids", message: "must name at least one SIM" });
  if (rejectedSims.length)
    violations.push({ field: "allowed_sim_ids", message: `unknown SIM ids: ${rejectedSims.join(", ")}` });
  if (rejectedTypes.length)
    violations.push({ field: "allowed_op_types", message: `unknown operation types: ${rejectedTypes.join(", ")}` });
  if (!Number.isInteger(maxAmount) || maxAmount <= 0)
    violations.push({ field: "max_amount", message: "must be an integer above 0" });
  if (violations.length) return { ok: false, violations, rejected: { sim_ids: rejectedSims, op_types: rejectedTypes } };
  return { ok: true, grant: { allowed_sim_ids: simIds, allowed_op_types: opTypes as OpType[], max_amount: maxAmount } };
}

function unique(values: readonly string[]): string[] {
  return [...new Set(values)];
}
