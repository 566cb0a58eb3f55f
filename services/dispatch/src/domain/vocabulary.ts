// The closed vocabularies of the contract, as const tuples so that a value
// can be both checked at run time and narrowed at compile time.

// Operators, operation types, roles and SIM statuses are the platform's (the kit's); dispatch's own follow.
import {
  isOperator,
  OPERATORS,
  OP_TYPES,
  ROLES,
  SIM_STATUSES,
  type Operator,
  type OpType,
  type Role,
  type SimStatus,
} from "@transferops/kit/pure";

export { isOperator, OPERATORS, OP_TYPES, ROLES, SIM_STATUSES, type Operator, type OpType, type Role, type SimStatus };

export const ORIGINS = ["aggregated", "assisted", "matching"] as const;
export type Origin = (typeof ORIGINS)[number];

/**
 * Account queries: they read the SIM's own account and have no recipient, so
 * the destination's operator prefix is not checked, no name is verified, and
 * their `montant` is the contract's placeholder of 1, not money.
 */
export const ACCOUNT_QUERY_OP_TYPES: readonly OpType[] = ["balance", "mini_statement"];

/**
 * Operation types that move e-money out of the agent's SIM. Only these need the
 * SIM's measured balance to cover the amount: a withdrawal (cash-out) credits the
 * agent's SIM, and account queries move nothing.
 */
export const DEBITING_OP_TYPES: readonly OpType[] = ["deposit", "float_deposit"];

/** A matching operation (POST /operations/matching) is a deposit the agent dials by hand. */
export const MATCHING_OP_TYPE = "deposit" as const satisfies OpType;

export function isOpType(value: string): value is OpType {
  return (OP_TYPES as readonly string[]).includes(value);
}

export function isAccountQuery(opType: OpType): boolean {
  return ACCOUNT_QUERY_OP_TYPES.includes(opType);
}

export function isDebiting(opType: OpType): boolean {
  return DEBITING_OP_TYPES.includes(opType);
}

/**
 * Statuses whose debit the SIM's measured balance does not yet show for certain: queued
 * and running (not dialled yet, or being dialled), awaiting_evidence (dialled, SMS not
 * in) and awaiting_manual_dial (a person is about to dial it). Their amounts are held back
 * from the free balance until the debit is proven (confirmed) or ends (failed, rejected,
 * no_evidence: see docs/decisions/dispatch.md, rule 11).
 */
export const HOLDING_STATUSES = ["queued", "running", "awaiting_evidence", "awaiting_manual_dial"] as const;
