import { create } from "@bufbuild/protobuf";
import { fromTs, ts, opt, big, type Caller } from "@transferops/kit";
import {
  DeviceOperationSchema,
  EvidenceSummarySchema,
  OperationSchema,
  SettledOnWordRowSchema,
  SimOperationSchema,
  UnprovenOperationSchema,
  type DeviceOperation,
  type EvidenceSummary,
  type Operation,
  type SettledOnWordRow,
  type SimOperation,
  type UnprovenOperation,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { retryFlags, ROLES, type Actor, type ActorKind, type Role } from "../domain/index.ts";
import type { OperationRecord } from "../store/operations.ts";
import type { SimOperationRecord } from "../store/fleet-facing.ts";
import type { SettledOnWordRecord, UnprovenRecord } from "../store/queues.ts";
import type { EvidenceFacts } from "../domain/evidence-facts.ts";

export function toEvidence(o: OperationRecord): EvidenceSummary | undefined {
  if (o.evidence_message_id === null) return undefined;
  return create(EvidenceSummarySchema, {
    operatorRef: opt(o.evidence_operator_ref),
    amount: BigInt(o.evidence_amount ?? 0),
    fee: big(o.evidence_fee),
    balanceAfter: big(o.evidence_balance_after),
    rawText: o.evidence_raw_text ?? "",
    receivedAt: ts(o.evidence_received_at),
    kind: opt(o.evidence_kind),
    isAmbiguous: o.evidence_is_ambiguous ?? false,
  });
}

/** A message's summary as evidence sends it with an attach. */
export function factsOfSummary(messageId: string, e: EvidenceSummary | undefined): EvidenceFacts {
  return {
    message_id: messageId,
    operator_ref: e?.operatorRef || null,
    amount: Number(e?.amount ?? 0n),
    fee: e?.fee === undefined ? null : Number(e.fee),
    balance_after: e?.balanceAfter === undefined ? null : Number(e.balanceAfter),
    raw_text: e?.rawText ?? "",
    received_at: fromTs(e?.receivedAt) ?? null,
    kind: e?.kind || null,
    is_ambiguous: e?.isAmbiguous ?? false,
  };
}

/** The contract's operation detail. */
export function toOperation(o: OperationRecord): Operation {
  const retry = retryFlags(o.status, o.has_retry, o);
  return create(OperationSchema, {
    operationId: o.operation_id,
    requestId: o.request_id,
    status: o.status,
    origin: o.origin,
    opType: o.op_type,
    simId: opt(o.sim_id),
    contactId: opt(o.contact_id),
    deviceId: opt(o.device_id),
    deviceLabel: opt(o.device_label),
    agentId: o.agent_id,
    operator: o.operator,
    montant: BigInt(o.montant),
    msisdnDest: o.msisdn_dest,
    destName: opt(o.dest_name),
    ussdString: opt(o.ussd_string),
    ussdResponse: opt(o.ussd_response),
    rejectReason: opt(o.reject_reason),
    failureReason: opt(o.failure_reason),
    evidence: toEvidence(o),
    retryAllowed: retry.retry_allowed,
    retryRequiresConfirmation: opt(retry.retry_requires_confirmation),
    createdAt: ts(o.created_at),
    startedAt: ts(o.started_at),
    finishedAt: ts(o.finished_at),
  });
}

export function toDeviceOperation(o: OperationRecord): DeviceOperation {
  return create(DeviceOperationSchema, {
    operationId: o.operation_id,
    status: o.status,
    opType: o.op_type,
    operator: o.operator,
    montant: BigInt(o.montant),
    msisdnDest: o.msisdn_dest,
    destName: opt(o.dest_name),
    simId: opt(o.sim_id),
    simSlot: opt(o.subscription_slot),
    rejectReason: opt(o.reject_reason),
    failureReason: opt(o.failure_reason),
    startedAt: ts(o.started_at),
    finishedAt: ts(o.finished_at),
    evidenceExpiresAt: ts(o.evidence_expires_at),
    smsKind: opt(o.evidence_kind),
    updatedAt: ts(o.updated_at),
  });
}

export function toUnproven(o: UnprovenRecord, selfResolving: boolean): UnprovenOperation {
  return create(UnprovenOperationSchema, {
    operationId: o.operation_id,
    requestId: o.request_id,
    simId: opt(o.sim_id),
    deviceId: opt(o.device_id),
    opType: o.op_type,
    montant: BigInt(o.montant),
    msisdnDest: o.msisdn_dest,
    destName: opt(o.dest_name),
    contactId: opt(o.contact_id),
    finishedAt: ts(o.finished_at),
    ussdResponse: opt(o.ussd_response),
    evidenceCount: o.ambiguous,
    selfResolving,
    status: o.status,
    contradictingMessageId: opt(o.contradicting_message_id),
  });
}

export function toSettledOnWord(o: SettledOnWordRecord): SettledOnWordRow {
  return create(SettledOnWordRowSchema, {
    operationId: o.operation_id,
    requestId: o.request_id,
    simId: opt(o.sim_id),
    deviceId: opt(o.device_id),
    montant: BigInt(o.montant),
    msisdnDest: o.msisdn_dest,
    destName: opt(o.dest_name),
    contactId: opt(o.contact_id),
    finishedAt: ts(o.finished_at),
    arbitratedAt: ts(o.decided_at),
    arbitratedByName: o.decided_by_name ?? "",
    arbitrationNote: o.decision_note ?? "",
  });
}

export function toSimOperation(o: SimOperationRecord): SimOperation {
  return create(SimOperationSchema, {
    operationId: o.operation_id,
    status: o.status,
    opType: o.op_type,
    montant: BigInt(o.montant),
    msisdnDest: o.msisdn_dest,
    createdAt: ts(o.created_at),
    finishedAt: ts(o.finished_at),
  });
}

const KINDS: readonly ActorKind[] = ["api_key", "intake", "session", "device", "messaging_key", "service"];

/** The authenticated caller as the domain sees it; an absent caller is refused by every scoped rule. */
export function actorOf(caller: Caller | undefined): Actor {
  const kind = KINDS.includes(caller?.kind as ActorKind) ? (caller!.kind as ActorKind) : "service";
  const role = (ROLES as readonly string[]).includes(caller?.role ?? "") ? (caller!.role as Role) : null;
  return {
    kind: caller ? kind : "service",
    agent_id: caller?.agentId || null,
    role,
    full_name: caller?.fullName || null,
    device_id: caller?.deviceId || null,
  };
}

/** The role fleet reports for an agent; anything unknown counts as a plain agent. */
export function roleOf(value: string): Role {
  return (ROLES as readonly string[]).includes(value) ? (value as Role) : "agent";
}
