// The closed vocabularies of the contract that more than one service (and the gateway's
// schemas and the board) check, defined once, as const tuples: checked at run time, narrowed at compile
// time. A vocabulary only one service uses stays in that service's domain/. Browser-safe:
// the board imports this file (and msisdn.ts) as it is.

export const OPERATORS = ["operator_a", "operator_b"] as const;
export type Operator = (typeof OPERATORS)[number];

export const OP_TYPES = ["deposit", "withdrawal", "balance", "float_deposit", "mini_statement"] as const;
export type OpType = (typeof OP_TYPES)[number];
/** The operation type of a request that names none (the contract's default). */
export const DEFAULT_OP_TYPE: OpType = "deposit";

export const ROLES = ["agent", "supervisor", "admin"] as const;
export type Role = (typeof ROLES)[number];

/**
 * An operation's status: dispatch's state machine (services/dispatch/src/domain/
 * operation-state.ts and .md) moves it; intake, evidence and the board read it.
 */
export const OPERATION_STATUSES = [
  "queued",
  "running",
  "awaiting_evidence",
  "awaiting_manual_dial",
  "confirmed",
  "failed",
  "no_evidence",
  "rejected",
] as const;
export type OperationStatus = (typeof OPERATION_STATUSES)[number];

/** Terminal as the routes name them. `no_evidence` is terminal yet can still be confirmed (late SMS, attach, settle, arbitrate). */
export const TERMINAL_OPERATION_STATUSES = [
  "confirmed",
  "failed",
  "no_evidence",
  "rejected",
] as const satisfies readonly OperationStatus[];

/** A SIM's status in fleet, as dispatch reads it too. */
export const SIM_STATUSES = ["active", "frozen", "retired"] as const;
export type SimStatus = (typeof SIM_STATUSES)[number];

export function isOperator(value: string): value is Operator {
  return (OPERATORS as readonly string[]).includes(value);
}
