import { fromTs, on, Topics, toContractJson } from "@transferops/kit";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import {
  OperationConfirmedSchema,
  OperationFailedSchema,
} from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { enqueueDeliveries } from "../store/webhooks.ts";
import { webhookBody } from "../domain/webhooks.ts";

// The contract's public events `operation.confirmed` and `operation.failed`, published by
// dispatch on `operations`, become one webhook delivery per subscribed endpoint. The
// delivery's event id is the event's own, so a receiver can dedupe on it.

export const operationTopics = [Topics.operations];

export const operationHandlers = [
  on(OperationConfirmedSchema, async (em, event, meta) => {
    const at = fromTs(event.confirmedAt) ?? meta.occurredAt;
    await enqueueDeliveries(em, {
      event_type: "operation.confirmed",
      event_id: meta.eventId,
      body: webhookBody("operation.confirmed", meta.eventId, at, {
        trigger: event.trigger,
        confirmed_at: at.toISOString(),
        operation: event.operation ? toContractJson(OperationSchema, event.operation) : null,
      }),
    });
  }),
  on(OperationFailedSchema, async (em, event, meta) => {
    const at = fromTs(event.failedAt) ?? meta.occurredAt;
    await enqueueDeliveries(em, {
      event_type: "operation.failed",
      event_id: meta.eventId,
      body: webhookBody("operation.failed", meta.eventId, at, {
        reason: event.reason,
        failed_at: at.toISOString(),
        operation: event.operation ? toContractJson(OperationSchema, event.operation) : null,
      }),
    });
  }),
];
