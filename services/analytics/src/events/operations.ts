import { fromTs, on, Topics } from "@transferops/kit";
import { OperationChangedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { localFields } from "../domain/local-time.ts";
import { isTransfer, operationFacts } from "../domain/operation-facts.ts";
import { applyOperation, beforeLastReset } from "../store/projections.ts";

export const operationTopics = [Topics.operations];

/** Every transition of an operation (OperationChanged carries the whole operation). */
export const operationHandlers = [
  on(OperationChangedSchema, async (em, event, meta) => {
    const op = event.operation;
    const createdAt = fromTs(op?.createdAt);
    if (!op || !createdAt || (await beforeLastReset(em, meta.occurredAt))) return;
    const changedAt = fromTs(event.changedAt) ?? meta.occurredAt;
    const local = localFields(createdAt);
    const facts = operationFacts({
      status: op.status,
      previousStatus: event.previousStatus,
      trigger: event.trigger,
      deviceOutcome: event.deviceOutcome,
      decision: event.decision,
      changedAt,
      evidenceReceivedAt: fromTs(op.evidence?.receivedAt),
      evidenceFee: op.evidence?.fee,
    });
    await applyOperation(em, {
      operation_id: op.operationId,
      agent_id: op.agentId,
      sim_id: op.simId ?? null,
      device_id: op.deviceId ?? null,
      device_label: op.deviceLabel ?? null,
      op_type: op.opType,
      is_transfer: isTransfer(op.opType),
      status: op.status,
      montant: op.montant,
      created_at: createdAt,
      local_day: local.day,
      local_dow: local.weekday,
      local_hour: local.hour,
      finished_at: fromTs(op.finishedAt) ?? null,
      changed_at: changedAt,
      ...facts,
    });
  }),
];
