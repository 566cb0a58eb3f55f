import { create, type JsonObject } from "@bufbuild/protobuf";
import type { EntityManager } from "./db.ts";
import { enqueueEvent, Topics } from "./events.ts";
import { AlertRaisedSchema, AlertResolvedSchema } from "./gen/transferops/common/v1/alerts_pb.ts";
import { ts } from "./time.ts";

/** Something a person must look at, as any service raises it (fleet stores and delivers it). */
export interface Alert {
  kind: string;
  severity: "info" | "warning" | "critical";
  /** Text for the person reading it; never a secret. */
  message: string;
  sim_id?: string | null;
  device_id?: string | null;
  operation_id?: string | null;
  context: JsonObject;
  /** Same value for the same condition, so a repeat notifies once. */
  dedupe_key: string;
  raised_at: Date;
}

/** The `alerts` topic key of an alert and of its resolution: the same, so one is consumed after the other. */
function alertKey(a: Pick<Alert, "sim_id" | "device_id" | "operation_id" | "dedupe_key">): string {
  return a.sim_id ?? a.device_id ?? a.operation_id ?? a.dedupe_key;
}

/** Writes `AlertRaised` to the service's outbox on the `alerts` topic, in the caller's transaction. */
export async function raiseAlert(em: EntityManager, schemaName: string, alert: Alert): Promise<void> {
  await enqueueEvent(em, schemaName, {
    topic: Topics.alerts,
    key: alertKey(alert),
    schema: AlertRaisedSchema,
    message: create(AlertRaisedSchema, {
      kind: alert.kind,
      severity: alert.severity,
      message: alert.message,
      simId: alert.sim_id ?? "",
      deviceId: alert.device_id ?? "",
      operationId: alert.operation_id ?? "",
      context: alert.context,
      raisedAt: ts(alert.raised_at),
      dedupeKey: alert.dedupe_key,
    }),
  });
}

/** An alert whose condition no longer holds, named by the dedupe key it was raised with. */
export interface AlertResolution {
  kind: string;
  dedupe_key: string;
  sim_id?: string | null;
  device_id?: string | null;
  operation_id?: string | null;
  /** Why it no longer holds, for the person reading the notification. */
  reason: string;
  resolved_at: Date;
}

/**
 * Writes `AlertResolved` to the service's outbox on the `alerts` topic, in the caller's
 * transaction, keyed like the raised alert so that it is consumed after it.
 */
export async function resolveAlert(em: EntityManager, schemaName: string, r: AlertResolution): Promise<void> {
  await enqueueEvent(em, schemaName, {
    topic: Topics.alerts,
    key: alertKey(r),
    schema: AlertResolvedSchema,
    message: create(AlertResolvedSchema, {
      dedupeKey: r.dedupe_key,
      kind: r.kind,
      simId: r.sim_id ?? "",
      deviceId: r.device_id ?? "",
      operationId: r.operation_id ?? "",
      reason: r.reason,
      resolvedAt: ts(r.resolved_at),
    }),
  });
}
