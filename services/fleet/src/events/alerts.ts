import { randomUUID } from "node:crypto";
import { on, Topics, fromTs, raiseAlert as publish, type EntityManager } from "@transferops/kit";
import {
  AlertRaisedSchema,
  AlertResolvedSchema,
  type AlertRaised,
} from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import type { Alert } from "../domain/alerts.ts";
import { webhookBody } from "../domain/webhooks.ts";
import { insertNotification, resolveNotification } from "../store/notifications.ts";
import { enqueueDeliveries } from "../store/webhooks.ts";
import { struct } from "../flows/mappers.ts";

// Alerts travel one way whoever raises them: `AlertRaised` on the `alerts` topic. Fleet
// raises its own (device silent, SIM absent, balance out of band) into its outbox like
// any service, and its consumer stores every alert as a notification (once per dedupe
// key) and queues a webhook delivery of `alert.raised` for each subscribed endpoint.
// `AlertResolved` (same topic, same key, so consumed after the alert it resolves) closes the
// notification of its dedupe key when the condition no longer holds.

export const alertTopics = [Topics.alerts];

/** Publishes an alert in the caller's transaction, keyed by its subject. */
export const raiseAlert = (em: EntityManager, alert: Alert): Promise<void> =>
  publish(em, "fleet", { ...alert, context: struct(alert.context) ?? {} });

/** Stores an alert as a notification once per dedupe key, and queues its webhook deliveries. */
export async function storeAlert(
  em: EntityManager,
  alert: AlertRaised,
  eventId: string,
  occurredAt: Date,
): Promise<void> {
  const raisedAt = fromTs(alert.raisedAt) ?? occurredAt;
  const context: Record<string, unknown> = alert.context ?? {};
  const stored = await insertNotification(em, {
    id: randomUUID(),
    kind: alert.kind,
    severity: alert.severity || "warning",
    message: alert.message,
    sim_id: alert.simId || null,
    device_id: alert.deviceId || null,
    operation_id: alert.operationId || null,
    context,
    raised_at: raisedAt,
    dedupe_key: alert.dedupeKey || `event:${eventId}`,
  });
  if (!stored) return; // the same condition was already notified
  await enqueueDeliveries(em, {
    event_type: "alert.raised",
    event_id: stored.id,
    body: webhookBody("alert.raised", stored.id, raisedAt, {
      notification_id: stored.id,
      kind: stored.kind,
      severity: stored.severity,
      message: stored.message,
      sim_id: stored.sim_id,
      device_id: stored.device_id,
      operation_id: stored.operation_id,
      context,
      raised_at: raisedAt.toISOString(),
    }),
  });
}

export const alertHandlers = [
  on(AlertRaisedSchema, (em, event, meta) => storeAlert(em, event, meta.eventId, meta.occurredAt)),
  on(AlertResolvedSchema, async (em, event, meta) => {
    if (!event.dedupeKey) return;
    await resolveNotification(em, {
      dedupe_key: event.dedupeKey,
      reason: event.reason,
      resolved_at: fromTs(event.resolvedAt) ?? meta.occurredAt,
    });
  }),
];
