import { create } from "@bufbuild/protobuf";
import { enqueueEvent, Topics, ts, type EntityManager } from "@transferops/kit";
import { TransactionChangedSchema } from "@transferops/kit/gen/transferops/intake/v1/events_pb";
import type { ReceiverChange } from "@transferops/kit/gen/transferops/intake/v1/intake_pb";
import type { TransactionRecord } from "../store/transactions.ts";

export type TransactionTrigger =
  | "create"
  | "correct_receiver"
  | "confirm_payment"
  | "undo_payment"
  | "launch"
  | "operation_linked"
  | "launch_released"
  | "cancel"
  | "close_by_receipt"
  | "settle";

/**
 * Publishes TransactionChanged on `transactions`, keyed by transaction id, in the
 * caller's database transaction: the event exists if and only if the change commits.
 */
export async function publishTransactionChange(
  em: EntityManager,
  after: TransactionRecord,
  facts: {
    trigger: TransactionTrigger;
    previousState: string;
    actorAgentId?: string | null;
    /** On `correct_receiver`: who rewrote what (fleet's audit log). */
    receiverChange?: ReceiverChange;
  },
): Promise<void> {
  await enqueueEvent(em, "intake", {
    topic: Topics.transactions,
    key: after.id,
    schema: TransactionChangedSchema,
    message: create(TransactionChangedSchema, {
      transactionId: after.id,
      requestId: after.request_id,
      state: after.state,
      previousState: facts.previousState,
      trigger: facts.trigger,
      operator: after.operator,
      receivedAmountXaf: BigInt(after.received_amount_xaf),
      rate: after.rate ?? undefined,
      sendAmountEur: after.send_amount_eur ?? undefined,
      contactId: after.contact_id,
      operationId: after.operation_id ?? "",
      actorAgentId: facts.actorAgentId ?? "",
      launchedBy: after.launched_by ?? "",
      outcome: after.outcome ?? "",
      transactionDate: ts(after.transaction_date),
      changedAt: ts(after.updated_at),
      receiverChange: facts.receiverChange,
    }),
  });
}
