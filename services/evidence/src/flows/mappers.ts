import { create, fromBinary, type MessageInitShape } from "@bufbuild/protobuf";
import { ts, opt, big } from "@transferops/kit";
import { OperationSchema, type Operation } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { EvidenceSchema, type Evidence } from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import {
  BalanceChainLinkSchema,
  MessageResultSchema,
  type MessageResult,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { ChainLink } from "../domain/balance-chain.ts";
import type { MessageRecord } from "../domain/message.ts";
import type { EvidenceRecord } from "../store/messages.ts";
import type { MessageRefusal } from "../domain/submission.ts";
import { isMatched, isRestated } from "../domain/outcomes.ts";
import { proofStanding } from "../domain/proof-standing.ts";

export function toEvidence(m: EvidenceRecord): Evidence {
  return create(EvidenceSchema, {
    id: m.id,
    simId: m.sim_id,
    source: m.source,
    operatorRef: opt(m.operator_ref),
    amount: big(m.amount),
    isAmbiguous: m.is_ambiguous,
    rawText: m.raw_text,
    receivedAt: ts(m.received_at),
    counterpartyMsisdn: opt(m.counterparty_msisdn),
    counterpartyName: opt(m.counterparty_name),
    direction: opt(m.direction),
    kind: opt(m.kind),
    fee: big(m.fee),
    balanceAfter: big(m.balance_after),
    sender: m.sender,
    deviceReceivedAt: ts(m.device_received_at),
    clientMessageId: opt(m.client_message_id),
    operationId: opt(m.operation_id),
    link: m.link ?? "",
    outcome: m.outcome,
    dismissedAt: ts(m.dismissed_at),
    dismissReason: opt(m.dismiss_reason),
    dismissedBy: opt(m.dismissed_by),
    storedAt: ts(m.stored_at),
    language: opt(m.language),
    subscriptionSlot: opt(m.subscription_slot),
    ...standingOf(m),
  });
}

function standingOf(m: EvidenceRecord) {
  const s = proofStanding(m);
  return {
    senderIsOperator: s.sender_is_operator,
    canProve: s.can_prove,
    cannotProveReason: opt(s.cannot_prove_reason),
  };
}

export function operationOf(m: MessageRecord): Operation | undefined {
  return m.operation_snapshot ? fromBinary(OperationSchema, m.operation_snapshot) : undefined;
}

/** The result of a message refused on its own (nothing stored, no message id). */
export function refusedResult(refused: MessageRefusal, clientMessageId: string | undefined): MessageResult {
  return create(MessageResultSchema, {
    messageId: "",
    clientMessageId,
    outcome: "refused",
    refusedReason: refused.reason,
    refusedDetail: refused.detail,
  });
}

/** The result of one submitted message, from what is stored: a duplicate gets exactly this. */
export function toResult(m: MessageRecord, duplicate: boolean): MessageResult {
  return create(MessageResultSchema, {
    messageId: m.id,
    clientMessageId: opt(m.client_message_id),
    duplicate,
    matched: isMatched(m.outcome),
    restated: isRestated(m.outcome),
    kind: opt(m.kind),
    outcome: m.outcome,
    operationId: opt(m.operation_id),
    isAmbiguous: m.is_ambiguous,
    balance: big(m.balance),
    previousBalance: big(m.previous_balance),
    operation: operationOf(m),
  });
}

/** One link of a SIM's balance chain (domain ChainLink) as the proto's BalanceChainLink. */
export function toChainLink(l: ChainLink): MessageInitShape<typeof BalanceChainLinkSchema> {
  const m = l.message;
  return {
    messageId: m.id,
    receivedAt: ts(m.received_at),
    kind: opt(m.kind),
    direction: opt(m.direction),
    amount: big(m.amount),
    fee: big(m.fee),
    commission: big(m.commission),
    moved: big(l.moved),
    balanceBefore: big(l.balance_before),
    expectedBalance: big(l.expected_balance),
    balanceAfter: big(m.balance_after),
    outcome: m.outcome,
    operatorRef: opt(m.operator_ref),
    isBreak: l.break !== null,
    gap: big(l.break?.gap),
  };
}
