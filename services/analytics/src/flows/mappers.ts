import type { MessageInitShape } from "@bufbuild/protobuf";
import { ts } from "@transferops/kit";
import type {
  AgentPointSchema,
  AnalyticsReportSchema,
  DailyPointSchema,
  HandsetUnprovenSchema,
  KnownAgentSchema,
  LoadSchema,
  ProjectionStatusSchema,
  UnprovenByHandsetReportSchema,
} from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import type { AnalyticsWindow } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import type { AnalyticsConfig } from "../config.ts";
import { resolveWindow, windowSince, windowUntil, type Window } from "../domain/window.ts";
import type { KnownAgentRow } from "../store/agents.ts";
import type { HandsetUnprovenRow, LoadRow, TxTotals } from "../store/report.ts";
import type { ReportFigures } from "../store/figures.ts";
import type { AgentActivityRow, DayRow } from "../store/rollups.ts";

/** A point of the daily series; its day keys the bucket (domain/series.ts). */
type DailyPoint = MessageInitShape<typeof DailyPointSchema> & { day: string };

/** The request's window, resolved against `now` (refusals: domain/window.ts). */
export function windowOf(w: AnalyticsWindow | undefined, now: Date): Window {
  return resolveWindow({ days: w?.days, from: w?.from, to: w?.to, all: w?.all }, now);
}

export function toKnownAgent(a: KnownAgentRow): MessageInitShape<typeof KnownAgentSchema> {
  return { agentId: a.agent_id, fullName: a.full_name, role: a.role, isActive: a.is_active };
}

export function toDailyPoint(d: DayRow): DailyPoint {
  return {
    day: d.day,
    operations: d.operations,
    transfers: d.transfers,
    balanceChecks: d.balance_checks,
    valueXaf: d.value_xaf,
    confirmed: d.confirmed,
    autoConfirmed: d.auto_confirmed,
    failed: d.failed,
    unproven: d.unproven,
  };
}

/** A bucket of the series without a row: every count zero. */
export function emptyDailyPoint(day: string): DailyPoint {
  return {
    day,
    operations: 0n,
    transfers: 0n,
    balanceChecks: 0n,
    valueXaf: 0n,
    confirmed: 0n,
    autoConfirmed: 0n,
    failed: 0n,
    unproven: 0n,
  };
}

const rate = (part: bigint, whole: bigint) =>
  whole > 0n ? Math.round((Number(part) / Number(whole)) * 10000) / 10000 : undefined;

/** Hours from `at` to `now`, to the hundredth; none without a moment. */
const hoursSince = (at: Date | null, now: Date) =>
  at ? Math.round(((now.getTime() - at.getTime()) / 3600_000) * 100) / 100 : undefined;

/** EUR to XAF over the transactions with a EUR amount; none without any. */
const realisedRate = (t: TxTotals) => (t.rate_eur > 0 ? t.rate_xaf / t.rate_eur : undefined);

export function toAgentActivity(a: AgentActivityRow): MessageInitShape<typeof AgentPointSchema> {
  return { agentId: a.agent_id, name: a.name, operations: a.operations, valueXaf: a.value_xaf };
}

export function toLoad(l: LoadRow, now: Date): MessageInitShape<typeof LoadSchema> {
  return {
    unprovenWaiting: l.unproven_waiting,
    messagesWaiting: l.messages_waiting,
    oldestUnprovenHours: hoursSince(l.oldest_unproven, now),
    oldestMessageHours: hoursSince(l.oldest_message, now),
    dismissed: l.dismissed,
    settled: l.settled,
    simsUnmeasured: l.sims_unmeasured,
    simsStale: l.sims_stale,
    simsFrozen: l.sims_frozen,
    simsUnassigned: l.sims_unassigned,
  };
}

export function toHandsetUnproven(h: HandsetUnprovenRow, now: Date): MessageInitShape<typeof HandsetUnprovenSchema> {
  return {
    deviceId: h.device_id,
    label: h.label,
    dialled: h.dialled,
    unproven: h.unproven,
    unprovenXaf: h.unproven_xaf,
    waiting: h.waiting,
    waitingXaf: h.waiting_xaf,
    settledArrived: h.settled_arrived,
    settledNotArrived: h.settled_not_arrived,
    // A handset is listed only with a transfer unproven, so it dialled at least one.
    unprovenRate: rate(h.unproven, h.dialled) ?? 0,
    oldestWaitingHours: hoursSince(h.oldest_waiting, now),
  };
}

/** What a report answers beside its figures: whose work, which windows, the computed series. */
export interface ReportFrame {
  fleet: boolean;
  window: Window;
  /** The window just before, as long; none for all time. */
  previous: Window | undefined;
  daily: DailyPoint[];
  byWeekday: { weekday: number; operations: bigint }[];
  /** When the figures were read (the load's ages). */
  now: Date;
}

/**
 * The report as the contract shapes it: one field per line, from the figures read. The
 * realised rate (EUR to XAF) is the fleet's alone.
 */
export function toAnalyticsReport(
  f: ReportFigures,
  r: ReportFrame,
  config: Pick<AnalyticsConfig, "evidenceWindowS" | "lateEvidenceS">,
): MessageInitShape<typeof AnalyticsReportSchema> {
  const { totals: t, tx, prev, prevTx } = f;
  return {
    fleet: r.fleet,
    since: ts(windowSince(r.window)),
    until: ts(windowUntil(r.window)),
    money: {
      sentXaf: t.sent_xaf,
      transfers: t.confirmed_transfers,
      medianTransfer: t.median_transfer,
      largestTransfer: t.largest_transfer,
      eurTaken: tx.eur,
      receivedXaf: tx.xaf,
      realisedRate: r.fleet ? realisedRate(tx) : undefined,
      feesXaf: t.fees_xaf,
      feesKnownFor: t.fees_known_for,
      atRiskXaf: t.at_risk_xaf,
      atRiskCount: t.at_risk_count,
      lostXaf: t.lost_xaf,
      lostCount: t.lost_count,
    },
    activity: {
      operations: t.operations,
      transfers: t.transfers,
      balanceChecks: t.balance_checks,
      activeSims: t.active_sims,
      activeAgents: t.active_agents,
      daily: r.daily,
      byWeekday: r.byWeekday,
      byHour: f.hours,
      byAgent: f.agents.map(toAgentActivity),
    },
    reliability: {
      confirmed: t.confirmed,
      autoConfirmed: t.auto_confirmed,
      autoConfirmRate: rate(t.auto_confirmed, t.confirmed),
      settledByHand: t.settled_by_hand,
      failed: t.failed,
      unproven: t.unproven,
      proofDelayMedianS: t.proof_delay_median_s,
      proofDelayP90S: t.proof_delay_p90_s,
      totalMessages: f.messages.total,
      ambiguousMessages: f.messages.ambiguous,
      collisionRate: rate(f.messages.ambiguous, f.messages.total),
      thresholds: { evidenceWindowS: BigInt(config.evidenceWindowS), lateEvidenceS: BigInt(config.lateEvidenceS) },
      byStatus: f.byStatus,
    },
    load: toLoad(f.load, r.now),
    previous: {
      sentXaf: prev?.sent_xaf ?? 0n,
      transfers: prev?.confirmed_transfers ?? 0n,
      confirmed: prev?.confirmed ?? 0n,
      autoConfirmed: prev?.auto_confirmed ?? 0n,
      since: r.previous && ts(windowSince(r.previous)),
      until: r.previous && ts(windowUntil(r.previous)),
      medianTransfer: prev?.median_transfer ?? 0n,
      largestTransfer: prev?.largest_transfer ?? 0n,
      realisedRate: r.fleet && prevTx ? realisedRate(prevTx) : undefined,
    },
  };
}

export function toUnprovenByHandsetReport(
  fleet: boolean,
  w: Window,
  handsets: HandsetUnprovenRow[],
  now: Date,
): MessageInitShape<typeof UnprovenByHandsetReportSchema> {
  return {
    fleet,
    since: ts(windowSince(w)),
    until: ts(windowUntil(w)),
    handsets: handsets.map((h) => toHandsetUnproven(h, now)),
  };
}

export function toProjectionStatus(
  lastEventAt: Date | null,
  byTopic: Record<string, bigint> | undefined,
): MessageInitShape<typeof ProjectionStatusSchema> {
  return {
    lag: byTopic ? Object.values(byTopic).reduce((s, v) => s + v, 0n) : undefined,
    lagByTopic: byTopic ?? {},
    lastEventAt: lastEventAt ? ts(lastEventAt) : undefined,
  };
}
