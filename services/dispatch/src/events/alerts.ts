import { create } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { enqueueEvent, Topics, ts, type EntityManager } from "@transferops/kit";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";

export interface Alert {
  kind: "sim_absent" | "evidence_divergent";
  severity: "info" | "warning" | "critical";
  message: string;
  sim_id?: string | null;
  device_id?: string | null;
  operation_id?: string | null;
  context: JsonObject;
  dedupe_key: string;
  at: Date;
}

/** Raises an alert on the `alerts` topic (fleet turns it into a notification), in the caller's transaction. */
export async function raiseAlert(em: EntityManager, alert: Alert): Promise<void> {
  await enqueueEvent(em, "dispatch", {
    topic: Topics.alerts,
    key: alert.sim_id ?? alert.device_id ?? alert.operation_id ?? alert.dedupe_key,
    schema: AlertRaisedSchema,
    message: create(AlertRaisedSchema, {
      kind: alert.kind,
      severity: alert.severity,
      message: alert.message,
      simId: alert.sim_id ?? "",
      deviceId: alert.device_id ?? "",
      operationId: alert.operation_id ?? "",
      context: alert.context,
      raisedAt: ts(alert.at),
      dedupeKey: alert.dedupe_key,
    }),
  });
}
