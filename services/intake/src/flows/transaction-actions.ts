import { randomUUID } from "node:crypto";
import { check, fromTs, type EntityManager } from "@transferops/kit";
import type {
  CreateTransactionRequest,
  ListTransactionsRequest,
  GetTransactionRequest,
  CorrectTransactionReceiverRequest,
  ConfirmTransactionPaymentRequest,
  UndoTransactionPaymentRequest,
  CancelTransactionRequest,
  CloseTransactionByReceiptRequest,
} from "@transferops/kit/gen/transferops/intake/v1/intake_service_pb";
import {
  checkBoardActor,
  checkIntakeActor,
  checkCreateTransaction,
  checkReceiverPhone,
  checkLength,
  CLOSED_BY_RECEIPT,
  isPartnersReceiver,
  type ReceiverFields,
  parseListQuery,
  refusal,
  type Actor,
} from "../domain/index.ts";
import { publishTransactionChange, type TransactionTrigger } from "../events/transactions.ts";
import {
  findByRequestId,
  insertReceiverChange,
  insertTransaction,
  listTransactions as listTransactionRows,
  receiverChanges,
  updateWhere,
  type ReceiverChangeRecord,
  type TransactionRecord,
} from "../store/transactions.ts";
import { actorOf, toReceiverChange, toTransaction } from "./mappers.ts";
import type { IntakeDeps } from "./ports.ts";
import { requirePending, visibleTransaction } from "./transactions.ts";

// The transaction use cases of intake's API: creates from automation, reads and board actions.

/** A board action on one visible transaction, under its row lock, with its event. */
async function boardAction(
  deps: IntakeDeps,
  actor: Actor,
  id: string,
  act: (
    em: EntityManager,
    t: TransactionRecord,
  ) => Promise<[TransactionRecord, TransactionTrigger, ReceiverChangeRecord?] | null>,
) {
  check(checkBoardActor(actor));
  const after = await deps.db.tx(async (em) => {
    const t = await visibleTransaction(em, actor, id, true);
    const changed = await act(em, t);
    if (!changed) return t;
    await publishTransactionChange(em, changed[0], {
      trigger: changed[1],
      previousState: t.state,
      actorAgentId: actor.agent_id,
      receiverChange: changed[2] && toReceiverChange(changed[2]),
    });
    return changed[0];
  });
  deps.published();
  return { transaction: toTransaction(after, await receiverChanges(deps.db.em(), after.id)) };
}

export async function createTransaction(deps: IntakeDeps, req: CreateTransactionRequest) {
  check(checkIntakeActor(actorOf(req.caller)));
  const phone = checkCreateTransaction({
    request_id: req.requestId,
    parent_request_id: req.parentRequestId,
    master_transaction_id: req.masterTransactionId,
    contact_id: req.contactId,
    customer_name: req.customerName,
    customer_phone: req.customerPhone,
    receiver_name: req.receiverName,
    receiver_phone: req.receiverPhone,
    operator: req.operator,
    received_amount_xaf: req.receivedAmountXaf,
    rate: req.rate,
    send_amount_eur: req.sendAmountEur,
  });
  if (!phone.ok) throw phone.error;
  const created = await deps.db.tx(async (em) => {
    const t = await insertTransaction(em, {
      id: randomUUID(),
      request_id: req.requestId,
      parent_request_id: req.parentRequestId ?? null,
      master_transaction_id: req.masterTransactionId ?? null,
      contact_id: req.contactId,
      customer_name: req.customerName ?? null,
      customer_phone: req.customerPhone ?? null,
      receiver_name: req.receiverName,
      receiver_phone: phone.msisdn,
      operator: req.operator,
      received_amount_xaf: req.receivedAmountXaf.toString(),
      rate: req.rate ?? null,
      send_amount_eur: req.sendAmountEur ?? null,
      partner_verify: req.partnerVerify,
      transaction_date: fromTs(req.transactionDate) ?? new Date(),
    });
    if (t) await publishTransactionChange(em, t, { trigger: "create", previousState: "" });
    return t;
  });
  if (!created) {
    // A replay is refused and changes nothing: the existing transaction is not requeued.
    const existing = await findByRequestId(deps.db.em(), req.requestId);
    throw refusal("request_id_exists", `request_id ${req.requestId} already exists`, {
      request_id: req.requestId,
      transaction_id: existing?.id ?? null,
    });
  }
  deps.published();
  return { transaction: toTransaction(created) };
}

export async function listTransactions(deps: IntakeDeps, req: ListTransactionsRequest) {
  const actor = actorOf(req.caller);
  check(checkBoardActor(actor));
  const q = parseListQuery(req.state, req.limit);
  if (!q.ok) throw q.error;
  const found = await listTransactionRows(deps.db.em(), {
    state: q.state,
    limit: q.limit,
    agentId: actor.role === "admin" ? null : actor.agent_id,
  });
  return { transactions: found.map((t) => toTransaction(t)) };
}

export async function getTransaction(deps: IntakeDeps, req: GetTransactionRequest) {
  const actor = actorOf(req.caller);
  check(checkBoardActor(actor));
  const t = await visibleTransaction(deps.db.em(), actor, req.transactionId);
  return { transaction: toTransaction(t, await receiverChanges(deps.db.em(), t.id)) };
}

export async function correctTransactionReceiver(deps: IntakeDeps, req: CorrectTransactionReceiverRequest) {
  const actor = actorOf(req.caller);
  check(checkBoardActor(actor));
  if (req.receiverName === undefined && req.receiverPhone === undefined && req.contactId === undefined) {
    throw refusal("no_receiver_field", "Give receiver_name, receiver_phone or contact_id", {});
  }
  check(
    checkLength("receiver_name", req.receiverName, 200, req.receiverName !== undefined) ??
      checkLength("receiver_phone", req.receiverPhone, 20, req.receiverPhone !== undefined) ??
      checkLength("contact_id", req.contactId, 200, req.contactId !== undefined),
  );
  return boardAction(deps, actor, req.transactionId, async (em, t) => {
    // Once launched, the operation was built from the receiver: a rewrite is refused (409).
    requirePending(t);
    const before: ReceiverFields = {
      receiver_name: t.receiver_name,
      receiver_phone: t.receiver_phone,
      contact_id: t.contact_id,
    };
    const after: ReceiverFields = { ...before };
    if (req.receiverName !== undefined) after.receiver_name = req.receiverName;
    if (req.contactId !== undefined) after.contact_id = req.contactId;
    if (req.receiverPhone !== undefined) {
      const phone = checkReceiverPhone(t.operator, req.receiverPhone);
      if (!phone.ok) throw phone.error;
      after.receiver_phone = phone.msisdn;
    }
    // The partner's receiver is the one before the first rewrite (domain/receiver.ts).
    const partners = (await receiverChanges(em, t.id))[0]?.before ?? before;
    const verified = isPartnersReceiver(partners, after);
    const values = { ...after, receiver_verified: verified };
    const updated = (await updateWhere(em, "board", t.id, values))!;
    const change = await insertReceiverChange(em, {
      id: randomUUID(),
      transaction_id: t.id,
      agent_id: actor.agent_id,
      agent_name: actor.full_name,
      before,
      after,
      receiver_verified: verified,
    });
    return [updated, "correct_receiver", change];
  });
}

export async function confirmTransactionPayment(deps: IntakeDeps, req: ConfirmTransactionPaymentRequest) {
  const actor = actorOf(req.caller);
  return boardAction(deps, actor, req.transactionId, async (em, t) => {
    requirePending(t);
    // Confirming twice returns the first confirmation, unchanged.
    if (t.payment_confirmed_at) return null;
    const values = { payment_confirmed_at: new Date(), payment_confirmed_by: actor.agent_id };
    return [(await updateWhere(em, "board", t.id, values))!, "confirm_payment"];
  });
}

export async function undoTransactionPayment(deps: IntakeDeps, req: UndoTransactionPaymentRequest) {
  const actor = actorOf(req.caller);
  return boardAction(deps, actor, req.transactionId, async (em, t) => {
    requirePending(t);
    if (!t.payment_confirmed_at) return null;
    const values = { payment_confirmed_at: null, payment_confirmed_by: null };
    return [(await updateWhere(em, "board", t.id, values))!, "undo_payment"];
  });
}

export async function cancelTransaction(deps: IntakeDeps, req: CancelTransactionRequest) {
  const actor = actorOf(req.caller);
  check(checkBoardActor(actor));
  check(checkLength("reason", req.reason, 500, true));
  return boardAction(deps, actor, req.transactionId, async (em, t) => {
    requirePending(t);
    const values = { state: "cancelled", cancelled_reason: req.reason };
    return [(await updateWhere(em, "board", t.id, values))!, "cancel"];
  });
}

export async function closeTransactionByReceipt(deps: IntakeDeps, req: CloseTransactionByReceiptRequest) {
  const actor = actorOf(req.caller);
  return boardAction(deps, actor, req.transactionId, async (em, t) => {
    requirePending(t);
    const values = {
      state: "closed",
      outcome: CLOSED_BY_RECEIPT,
      settled_at: new Date(),
      settled_by: actor.agent_id,
      settled_by_name: actor.full_name,
    };
    return [(await updateWhere(em, "board", t.id, values))!, "close_by_receipt"];
  });
}
