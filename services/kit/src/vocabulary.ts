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

/**
 * The types that move money (balance checks and mini statements do not): fleet's limits are
 * recorded for them, analytics counts them as transfers, the board offers them.
 */
export const TRANSFER_OP_TYPES = ["deposit", "withdrawal", "float_deposit"] as const satisfies readonly OpType[];
export type TransferOpType = (typeof TRANSFER_OP_TYPES)[number];

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

/** Statuses an SMS may confirm at any time (dispatch's correlation candidates, besides no_evidence in its late window). */
export const ACTIVE_OPERATION_STATUSES = [
  "queued",
  "running",
  "awaiting_evidence",
  "awaiting_manual_dial",
] as const satisfies readonly OperationStatus[];

/** The statuses a message can still prove (dispatch loads them as candidates; the board offers them to attach to). */
export const PROVABLE_OPERATION_STATUSES = [
  ...ACTIVE_OPERATION_STATUSES,
  "no_evidence",
] as const satisfies readonly OperationStatus[];

/** A SIM's status in fleet, as dispatch reads it too. */
export const SIM_STATUSES = ["active", "frozen", "retired"] as const;
export type SimStatus = (typeof SIM_STATUSES)[number];

export function isOperator(value: string): value is Operator {
  return (OPERATORS as readonly string[]).includes(value);
}
