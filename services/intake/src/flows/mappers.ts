import { create } from "@bufbuild/protobuf";
import { ts, opt, type Caller } from "@transferops/kit";
import {
  ReceiverChangeSchema,
  TransactionSchema,
  type ReceiverChange,
  type Transaction,
} from "@transferops/kit/gen/transferops/intake/v1/intake_pb";
import type { Actor, ReceiverFields } from "../domain/index.ts";
import type { ReceiverChangeRecord, TransactionRecord } from "../store/transactions.ts";

/** The authenticated caller as the domain sees it. */
export function actorOf(caller: Caller | undefined): Actor {
  return {
    kind: caller?.kind ?? "",
    agent_id: caller?.agentId ?? "",
    role: caller?.role ?? "",
    is_active: caller?.isActive ?? false,
    full_name: caller?.fullName ?? "",
  };
}

const receiver = (f: ReceiverFields) => ({
  receiverName: f.receiver_name,
  receiverPhone: f.receiver_phone,
  contactId: f.contact_id,
});

export function toReceiverChange(c: ReceiverChangeRecord): ReceiverChange {
  return create(ReceiverChangeSchema, {
    agentId: c.agent_id,
    agentName: c.agent_name,
    changedAt: ts(c.changed_at),
    before: receiver(c.before),
    after: receiver(c.after),
    receiverVerified: c.receiver_verified,
  });
}

/** `changes`: the receiver rewrites, on the one-transaction answers only. */
export function toTransaction(r: TransactionRecord, changes: readonly ReceiverChangeRecord[] = []): Transaction {
  return create(TransactionSchema, {
    id: r.id,
    requestId: r.request_id,
    parentRequestId: opt(r.parent_request_id),
    masterTransactionId: opt(r.master_transaction_id),
    contactId: r.contact_id,
    customerName: opt(r.customer_name),
    customerPhone: opt(r.customer_phone),
    receiverName: r.receiver_name,
    receiverPhone: r.receiver_phone,
    operator: r.operator,
    receivedAmountXaf: BigInt(r.received_amount_xaf),
    rate: opt(r.rate),
    sendAmountEur: opt(r.send_amount_eur),
    partnerVerify: r.partner_verify,
    transactionDate: ts(r.transaction_date),
    state: r.state,
    launchedBy: opt(r.launched_by),
    launchedByName: opt(r.launched_by_name),
    launchedAt: ts(r.launched_at),
    operationId: opt(r.operation_id),
    outcome: opt(r.outcome),
    settledAt: ts(r.settled_at),
    settledBy: opt(r.settled_by),
    settledByName: opt(r.settled_by_name),
    paymentConfirmedAt: ts(r.payment_confirmed_at),
    paymentConfirmedBy: opt(r.payment_confirmed_by),
    cancelledReason: opt(r.cancelled_reason),
    createdAt: ts(r.created_at),
    updatedAt: ts(r.updated_at),
    receiverVerified: r.receiver_verified,
    receiverChanges: changes.map(toReceiverChange),
  });
}
