import { create, type JsonObject } from "@bufbuild/protobuf";
import { ts, opt, big } from "@transferops/kit";
import {
  AccessGrantSchema,
  AgentSchema,
  AuditEntrySchema,
  CandidateSimSchema,
  DeviceHealthSchema,
  DeviceSchema,
  FleetLimitSchema,
  NotificationSchema,
  OwnSimSchema,
  SimSchema,
  SimSnapshotRowSchema,
  SimSummarySchema,
  WebhookDeliverySchema,
  WebhookSchema,
  type AccessGrant,
  type Agent,
  type AuditEntry,
  type CandidateSim,
  type Device,
  type DeviceHealth,
  type FleetLimit,
  type Notification,
  type OwnSim,
  type Sim,
  type SimSnapshotRow,
  type SimSummary,
  type Webhook,
  type WebhookDelivery,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import type { AgentRecord } from "../domain/agents.ts";
import { redactDetails } from "../domain/audit.ts";
import type { AuditRecord } from "../store/agents.ts";
import { type HealthIssue, summarize } from "../domain/device-health.ts";
import type { GrantRecord } from "../store/access.ts";
import type { DeviceRecord } from "../store/devices.ts";
import type { LimitRecord } from "../store/limits.ts";
import type { NotificationRecord } from "../store/notifications.ts";
import type { SimRecord, SimWithDevice } from "../store/sims.ts";
import type { AttemptRecord, DeliveryRecord, WebhookRecord } from "../store/webhooks.ts";

/** A JSON object for a google.protobuf.Struct field (plain JSON in protobuf-es v2). */
export const struct = (value: Record<string, unknown> | null | undefined): JsonObject | undefined =>
  value ? (JSON.parse(JSON.stringify(value)) as JsonObject) : undefined;

export function toAgent(a: AgentRecord): Agent {
  return create(AgentSchema, {
    agentId: a.id,
    login: a.login,
    fullName: a.full_name,
    role: a.role,
    isActive: a.is_active,
    createdAt: ts(a.created_at),
    mustChangePassword: a.must_change_password,
  });
}

/** An agent's grant; without one, empty lists and no max_amount. */
export function toGrant(
  agent: Pick<AgentRecord, "id" | "login" | "role" | "is_active">,
  g: GrantRecord | undefined,
): AccessGrant {
  return create(AccessGrantSchema, {
    agentId: agent.id,
    login: agent.login,
    role: agent.role,
    isActive: agent.is_active,
    allowedSimIds: g?.allowed_sim_ids ?? [],
    allowedOpTypes: g?.allowed_op_types ?? [],
    maxAmount: g ? BigInt(g.max_amount) : undefined,
  });
}

export function toSim(s: SimRecord): Sim {
  return create(SimSchema, {
    simId: s.id,
    operator: s.operator,
    msisdn: s.msisdn,
    status: s.status,
    deviceId: opt(s.device_id),
    subscriptionSlot: opt(s.subscription_slot),
    balanceMirror: big(s.balance_mirror),
    balanceUpdatedAt: ts(s.balance_updated_at),
    balanceSource: opt(s.balance_source),
    lowBalanceThreshold: big(s.low_balance_threshold),
    highBalanceThreshold: big(s.high_balance_threshold),
    createdAt: ts(s.created_at),
  });
}

export function toOwnSim(s: SimWithDevice): OwnSim {
  return create(OwnSimSchema, {
    simId: s.id,
    operator: s.operator,
    msisdn: s.msisdn,
    status: s.status,
    balanceMirror: big(s.balance_mirror),
    balanceUpdatedAt: ts(s.balance_updated_at),
    deviceId: opt(s.device_id),
    deviceLabel: opt(s.device_label),
    subscriptionSlot: opt(s.subscription_slot),
  });
}

export function toSnapshotRow(s: SimRecord): SimSnapshotRow {
  return create(SimSnapshotRowSchema, {
    id: s.id,
    deviceId: opt(s.device_id),
    subscriptionSlot: opt(s.subscription_slot),
    operator: s.operator,
    msisdn: s.msisdn,
    balanceMirror: big(s.balance_mirror),
    balanceUpdatedAt: ts(s.balance_updated_at),
    status: s.status,
    lowBalanceThreshold: big(s.low_balance_threshold),
    createdAt: ts(s.created_at),
  });
}

export function toCandidate(s: SimWithDevice): CandidateSim {
  return create(CandidateSimSchema, {
    simId: s.id,
    operator: s.operator,
    msisdn: s.msisdn,
    status: s.status,
    deviceId: opt(s.device_id),
    deviceStatus: opt(s.device_status),
    deviceLabel: opt(s.device_label),
    subscriptionSlot: opt(s.subscription_slot),
    balanceMirror: big(s.balance_mirror),
    balanceUpdatedAt: ts(s.balance_updated_at),
  });
}

export function toSimSummary(s: SimRecord): SimSummary {
  return create(SimSummarySchema, {
    simId: s.id,
    operator: s.operator,
    msisdn: s.msisdn,
    status: s.status,
    deviceId: opt(s.device_id),
    subscriptionSlot: opt(s.subscription_slot),
    balanceMirror: big(s.balance_mirror),
    balanceUpdatedAt: ts(s.balance_updated_at),
  });
}

export function toDevice(d: DeviceRecord, sims: SimRecord[], issues: HealthIssue[]): Device {
  const summary = summarize(issues);
  return create(DeviceSchema, {
    deviceId: d.id,
    label: d.label,
    status: d.status,
    lastSeenAt: ts(d.last_seen_at),
    createdAt: ts(d.created_at),
    sims: sims.map((s) => ({
      id: s.id,
      operator: s.operator,
      msisdn: s.msisdn,
      status: s.status,
      subscriptionSlot: s.subscription_slot ?? 0,
    })),
    appVersion: opt(d.app_version),
    androidVersion: opt(d.android_version),
    manufacturer: opt(d.manufacturer),
    model: opt(d.model),
    battery: opt(d.battery),
    network: opt(d.network),
    healthReportedAt: ts(d.health_reported_at),
    issues: { count: summary.count, worst: opt(summary.worst) },
    androidSdk: opt(d.android_sdk),
    batteryExempt: opt(d.battery_exempt),
  });
}

export function toDeviceHealth(d: DeviceRecord, issues: HealthIssue[]): DeviceHealth {
  return create(DeviceHealthSchema, {
    deviceId: d.id,
    label: d.label,
    lastSeenAt: ts(d.last_seen_at),
    reportedAt: ts(d.health_reported_at),
    appVersion: opt(d.app_version),
    androidVersion: opt(d.android_version),
    androidSdk: opt(d.android_sdk),
    manufacturer: opt(d.manufacturer),
    model: opt(d.model),
    battery: opt(d.battery),
    network: opt(d.network),
    batteryExempt: opt(d.battery_exempt),
    issues,
    report: struct(d.report),
  });
}

export function toLimit(l: LimitRecord): FleetLimit {
  return create(FleetLimitSchema, {
    operator: opt(l.operator),
    opType: l.op_type,
    maxAmount: BigInt(l.max_amount),
    maxDailyAgent: BigInt(l.max_daily_agent),
    maxDailySim: BigInt(l.max_daily_sim),
    effectiveFrom: ts(l.effective_from),
  });
}

export function toNotification(n: NotificationRecord): Notification {
  return create(NotificationSchema, {
    notificationId: n.id,
    kind: n.kind,
    severity: n.severity,
    message: n.message,
    simId: opt(n.sim_id),
    deviceId: opt(n.device_id),
    operationId: opt(n.operation_id),
    context: struct(n.context),
    raisedAt: ts(n.raised_at),
    acknowledgedAt: ts(n.acknowledged_at),
    acknowledgedBy: opt(n.acknowledged_by),
  });
}

export function toWebhook(w: WebhookRecord): Webhook {
  return create(WebhookSchema, {
    webhookId: w.id,
    url: w.url,
    events: w.events,
    createdAt: ts(w.created_at),
    createdBy: w.created_by ?? "",
  });
}

export function toDelivery(d: DeliveryRecord, attempts: AttemptRecord[]): WebhookDelivery {
  return create(WebhookDeliverySchema, {
    deliveryId: d.id,
    webhookId: d.webhook_id,
    eventType: d.event_type,
    eventId: d.event_id,
    status: d.status,
    attemptCount: d.attempt_count,
    nextAttemptAt: d.status === "pending" ? ts(d.next_attempt_at) : undefined,
    createdAt: ts(d.created_at),
    deliveredAt: ts(d.delivered_at),
    attempts: attempts.map((a) => ({
      attempt: a.attempt,
      attemptedAt: ts(a.attempted_at),
      statusCode: opt(a.status_code),
      error: opt(a.error),
      durationMs: a.duration_ms,
    })),
    payload: struct(JSON.parse(d.body) as Record<string, unknown>),
  });
}

/** An audit row as admins read it: details pass through the redaction (domain/audit.ts). */
export function toAuditEntry(a: AuditRecord): AuditEntry {
  return create(AuditEntrySchema, {
    entryId: a.id,
    at: ts(a.at),
    actorAgentId: opt(a.actor_agent_id),
    action: a.action,
    targetId: opt(a.target_id),
    details: struct(redactDetails(a.details) as Record<string, unknown>),
  });
}
