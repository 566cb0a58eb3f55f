import { create } from "@bufbuild/protobuf";
import { enqueueEvent, Topics, ts, type EntityManager, type OutboxEvent } from "@transferops/kit";
import {
  OperationChangedSchema,
  OperationConfirmedSchema,
  OperationFailedSchema,
} from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import type { OperationRecord } from "../store/operations.ts";
import { toOperation } from "../flows/mappers.ts";

export type ChangeTrigger =
  | "create"
  | "create_matching"
  | "claim"
  | "outcome"
  | "proof"
  | "attach"
  | "contradicted"
  | "cancel"
  | "cancel_matching"
  | "edit_matching"
  | "settle"
  | "arbitrate"
  | "sweep"
  | "running_timeout"
  | "dispatch_fault"
  | "device_deleted"
  | "sim_moved";

export interface ChangeFacts {
  trigger: ChangeTrigger;
  previous_status: string;
  device_outcome?: string | null;
  actor_agent_id?: string | null;
  note?: string | null;
  decision?: string | null;
  evidence_message_id?: string | null;
  /** Reason of the public operation.failed when the change ends the operation as failed or rejected. */
  failure_reason?: string | null;
  at: Date;
}

/**
 * The events of a transition: OperationChanged always, and the public OperationConfirmed /
 * OperationFailed when the operation has just become confirmed, or failed / rejected. A
 * change that leaves the status where it was (an attach to an operation settled on word)
 * emits no second public event.
 */
export function changeEvents(after: OperationRecord, facts: ChangeFacts): OutboxEvent[] {
  const operation = toOperation(after);
  const events: OutboxEvent[] = [
    {
      topic: Topics.operations,
      key: after.operation_id,
      schema: OperationChangedSchema,
      message: create(OperationChangedSchema, {
        operation,
        previousStatus: facts.previous_status,
        trigger: facts.trigger,
        deviceOutcome: facts.device_outcome ?? "",
        actorAgentId: facts.actor_agent_id ?? "",
        note: facts.note ?? "",
        decision: facts.decision ?? "",
        evidenceMessageId: facts.evidence_message_id ?? "",
        parentOperationId: after.parent_operation_id ?? "",
        partnerVerified: after.partner_verified,
        evidenceExpiresAt: ts(after.evidence_expires_at),
        changedAt: ts(facts.at),
      }),
    } as OutboxEvent,
  ];
  const moved = facts.previous_status !== after.status;
  if (moved && after.status === "confirmed") {
    events.push({
      topic: Topics.operations,
      key: after.operation_id,
      schema: OperationConfirmedSchema,
      message: create(OperationConfirmedSchema, { operation, trigger: facts.trigger, confirmedAt: ts(facts.at) }),
    } as OutboxEvent);
  }
  if (moved && (after.status === "failed" || after.status === "rejected")) {
    events.push({
      topic: Topics.operations,
      key: after.operation_id,
      schema: OperationFailedSchema,
      message: create(OperationFailedSchema, {
        operation,
        reason: facts.failure_reason ?? after.failure_reason ?? after.status,
        failedAt: ts(facts.at),
      }),
    } as OutboxEvent);
  }
  return events;
}

/** Publishes a transition's events (`changeEvents`) in the caller's transaction. */
export async function publishChange(em: EntityManager, after: OperationRecord, facts: ChangeFacts): Promise<void> {
  for (const event of changeEvents(after, facts)) await enqueueEvent(em, "dispatch", event);
}
