import { create } from "@bufbuild/protobuf";
import { enqueueEvent, raiseAlert, resolveAlert, Topics, ts, type EntityManager, opt, big } from "@transferops/kit";
import {
  MessageCorrelatedSchema,
  MessageDismissedSchema,
  MessageLinkedSchema,
  MessagesPurgedSchema,
  MessageStoredSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/events_pb";
import type { ChainBreak } from "../domain/balance-chain.ts";
import type { MessageRecord } from "../domain/message.ts";
import type { Operator } from "../domain/parsers/types.ts";
import { toEvidence } from "../flows/mappers.ts";

const SCHEMA = "evidence";

/** Every new message, in the transaction that stores it. Keyed by message id. */
export async function messageStored(em: EntityManager, m: MessageRecord): Promise<void> {
  await enqueueEvent(em, SCHEMA, {
    topic: Topics.messages,
    key: m.id,
    schema: MessageStoredSchema,
    message: create(MessageStoredSchema, { evidence: toEvidence(m) }),
  });
}

/** The end of correlation, whatever its outcome (also for messages never correlated). */
export async function messageCorrelated(em: EntityManager, m: MessageRecord): Promise<void> {
  await enqueueEvent(em, SCHEMA, {
    topic: Topics.messages,
    key: m.id,
    schema: MessageCorrelatedSchema,
    message: create(MessageCorrelatedSchema, {
      messageId: m.id,
      simId: m.sim_id,
      outcome: m.outcome,
      isAmbiguous: m.is_ambiguous,
      operationId: m.operation_id ?? "",
      kind: opt(m.kind),
      amount: big(m.amount),
      receivedAt: ts(m.received_at),
      correlatedAt: ts(m.correlated_at ?? new Date()),
    }),
  });
}

/** Every link of a message to an operation: proof, restatement or a person's attach. */
export async function messageLinked(em: EntityManager, m: MessageRecord): Promise<void> {
  await enqueueEvent(em, SCHEMA, {
    topic: Topics.messages,
    key: m.id,
    schema: MessageLinkedSchema,
    message: create(MessageLinkedSchema, {
      messageId: m.id,
      simId: m.sim_id,
      operationId: m.operation_id ?? "",
      link: m.outcome === "attached" ? "attached" : (m.link ?? ""),
      amount: big(m.amount),
      fee: big(m.fee),
      balanceAfter: big(m.balance_after),
      operatorRef: opt(m.operator_ref),
      kind: opt(m.kind),
      receivedAt: ts(m.received_at),
      linkedAt: ts(m.linked_at ?? new Date()),
      linkedBy: m.linked_by ?? "",
    }),
  });
}

export async function messageDismissed(em: EntityManager, m: MessageRecord): Promise<void> {
  await enqueueEvent(em, SCHEMA, {
    topic: Topics.messages,
    key: m.id,
    schema: MessageDismissedSchema,
    message: create(MessageDismissedSchema, {
      messageId: m.id,
      simId: m.sim_id,
      reason: m.dismiss_reason ?? "",
      dismissedBy: m.dismissed_by ?? "",
      dismissedAt: ts(m.dismissed_at),
    }),
  });
}

export async function messagesPurged(
  em: EntityManager,
  p: { simId: string; reason: "sim_deleted" | "reset"; messages: number },
): Promise<void> {
  await enqueueEvent(em, SCHEMA, {
    topic: Topics.messages,
    key: p.simId || "all",
    schema: MessagesPurgedSchema,
    message: create(MessagesPurgedSchema, {
      simId: p.simId,
      reason: p.reason,
      messages: BigInt(p.messages),
      purgedAt: ts(new Date()),
    }),
  });
}

/**
 * A message whose amount or MSISDN contradicts its operation: fleet turns it into a
 * notification. The dedupe key is the message, so a re-drive never notifies twice.
 */
export async function divergenceAlert(
  em: EntityManager,
  m: MessageRecord,
  operation: { operationId: string; montant: bigint; msisdnDest: string } | undefined,
): Promise<void> {
  // Dispatch raises the same alert (same dedupe key) in the transaction that decided the
  // divergence, and whichever copy reaches fleet first is the notification: the same fields in
  // both (dispatch's flows/proof.ts, raiseDivergence), with the operator's reference besides.
  const context: Record<string, string | number | null> = {
    message_id: m.id,
    amount: m.amount,
    operator_ref: m.operator_ref,
    found_msisdn: m.counterparty_msisdn,
  };
  if (operation) {
    context.expected_msisdn = operation.msisdnDest;
    if (m.amount !== null && BigInt(m.amount) !== operation.montant) {
      context.expected_amount = Number(operation.montant);
      context.found_amount = m.amount;
    }
  }
  await raiseAlert(em, SCHEMA, {
    kind: "evidence_divergent",
    severity: "warning",
    message: operation
      ? `Operator message ${m.id} on SIM ${m.sim_id} diverges from operation ${operation.operationId} (amount or MSISDN); nothing was confirmed`
      : `Operator message ${m.id} on SIM ${m.sim_id} diverges from its operation (amount or MSISDN); nothing was confirmed`,
    sim_id: m.sim_id,
    operation_id: operation?.operationId || null,
    context,
    raised_at: new Date(),
    dedupe_key: `evidence_divergent:${m.id}`,
  });
}

/**
 * A message that does not come from one of the operator's sender ids: stored, never matched.
 * Someone may be forging the operator's wording to get a transfer confirmed.
 */
export async function unknownSenderAlert(em: EntityManager, m: MessageRecord, operator: Operator): Promise<void> {
  await raiseAlert(em, SCHEMA, {
    kind: "evidence_unknown_sender",
    severity: "critical",
    message: `Message ${m.id} on SIM ${m.sim_id} reads like ${operator} but came from "${m.sender}", not one of its sender ids; it confirms nothing`,
    sim_id: m.sim_id,
    context: {
      message_id: m.id,
      sender: m.sender,
      operator,
      kind: m.kind,
      amount: m.amount,
      counterparty_msisdn: m.counterparty_msisdn,
      operator_ref: m.operator_ref,
    },
    raised_at: new Date(),
    dedupe_key: `evidence_unknown_sender:${m.id}`,
  });
}

/**
 * A break in a SIM's balance chain: the balance one message printed does not follow from the
 * previous one (a message lost, withheld, out of order, or forged). One alert per pair.
 */
export async function chainBreakAlert(em: EntityManager, simId: string, b: ChainBreak): Promise<void> {
  await raiseAlert(em, SCHEMA, {
    kind: "balance_chain_break",
    severity: "warning",
    message: `Balance chain of SIM ${simId} breaks between messages ${b.previous_message_id} and ${b.message_id}: expected ${b.expected_balance} FCFA, the operator printed ${b.found_balance} FCFA (gap ${b.gap})`,
    sim_id: simId,
    context: { ...b },
    raised_at: new Date(),
    dedupe_key: `balance_chain_break:${b.previous_message_id}:${b.message_id}`,
  });
}

/**
 * A message that arrived late and now sits between the two messages of an earlier break: that
 * link no longer exists, so its alert is resolved (the links the late message makes are
 * checked on their own and alerted if they break).
 */
export async function chainBreakResolved(
  em: EntityManager,
  simId: string,
  b: ChainBreak,
  lateMessageId: string,
  closed: boolean,
): Promise<void> {
  await resolveAlert(em, SCHEMA, {
    kind: "balance_chain_break",
    sim_id: simId,
    dedupe_key: `balance_chain_break:${b.previous_message_id}:${b.message_id}`,
    reason: closed
      ? `message ${lateMessageId} arrived late between them and closes the gap of ${b.gap} FCFA`
      : `message ${lateMessageId} arrived late between them; what is still missing is alerted on its own links`,
    resolved_at: new Date(),
  });
}
