// The transaction state machine (transaction-state.md beside this file).

import { TERMINAL_OPERATION_STATUSES } from "@transferops/kit/pure";

export const TRANSACTION_STATES = ["pending", "launched", "done", "cancelled", "closed"] as const;
export type TransactionState = (typeof TRANSACTION_STATES)[number];

/** The operation statuses that end a launched transaction (the kit's, as dispatch names them). */
export { TERMINAL_OPERATION_STATUSES };

/** `outcome` of a transaction closed by receipt. */
export const CLOSED_BY_RECEIPT = "closed_by_receipt";

/** The operation request_id of a launch: protection (2), unique at dispatch. */
export const operationRequestId = (transactionId: string) => `tx-${transactionId}`;

/**
 * The transaction a dispatch operation belongs to, from its request_id; null for any other
 * operation. Anchored at both ends: only the launch's exact id settles a transaction
 * (dispatch also refuses `tx-` ids from anyone but intake).
 */
export function transactionIdOf(operationRequestId: string): string | null {
  const m = /^tx-([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})$/.exec(operationRequestId);
  return m ? m[1]! : null;
}

export function isTransactionState(value: string): value is TransactionState {
  return (TRANSACTION_STATES as readonly string[]).includes(value);
}

export function isTerminalOperationStatus(status: string): boolean {
  return (TERMINAL_OPERATION_STATUSES as readonly string[]).includes(status);
}

/**
 * Settlement of a launched transaction by its operation's terminal status. A `done`
 * transaction follows a later change of its operation's terminal status (no_evidence
 * confirmed by late proof or arbitration); the same status again changes nothing.
 */
export function settles(state: TransactionState, outcome: string | null, operationStatus: string): boolean {
  if (!isTerminalOperationStatus(operationStatus)) return false;
  if (state === "launched") return true;
  return state === "done" && outcome !== operationStatus;
}
