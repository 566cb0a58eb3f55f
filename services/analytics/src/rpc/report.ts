import type { MessageInitShape } from "@bufbuild/protobuf";
import { ts, type Caller, type Database } from "@transferops/kit";
import type {
  AnalyticsReportSchema,
  UnprovenByHandsetReportSchema,
} from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import type { AnalyticsWindow } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import type { AnalyticsConfig } from "../config.ts";
import { daysBetween, localFields } from "../domain/local-time.ts";
import { refuse } from "../domain/reasons.ts";
import { fillSeries, isWeekly } from "../domain/series.ts";
import { previousWindow, resolveWindow, windowSince, windowUntil, type Window } from "../domain/window.ts";
import {
  dailyRows,
  firstDay,
  hourRows,
  loadFigures,
  operationTotals,
  statusCounts,
  transactionTotals,
  unprovenByHandset,
  type Scope,
} from "../store/report.ts";
import {
  fleetAgentRows,
  fleetDailyRows,
  fleetHourRows,
  fleetStatusCounts,
  fleetTotals,
  messageTotalsFromRollup,
} from "../store/rollups.ts";

/** An active session caller's scope: supervisors and admins see the fleet, an agent its own work. */
export function scopeOf(c: Caller | undefined): Scope {
  if (!c || c.kind !== "session" || !c.agentId) throw refuse("not_signed_in", "A session is required");
  if (!c.isActive) throw refuse("agent_inactive", "This agent is inactive");
  return c.role === "admin" || c.role === "supervisor" ? { fleet: true } : { fleet: false, agentId: c.agentId };
}

export function windowOf(w: AnalyticsWindow | undefined, now: Date): Window {
  return resolveWindow({ days: w?.days, from: w?.from, to: w?.to, all: w?.all }, now);
}

const rate = (part: bigint, whole: bigint) =>
  whole > 0n ? Math.round((Number(part) / Number(whole)) * 10000) / 10000 : undefined;

export async function analyticsReport(
  db: Database,
  config: AnalyticsConfig,
  caller: Caller | undefined,
  input: AnalyticsWindow | undefined,
  now = new Date(),
): Promise<MessageInitShape<typeof AnalyticsReportSchema>> {
  const scope = scopeOf(caller);
  const w = windowOf(input, now);
  const em = db.em();
  const today = localFields(now).day;
  const first = w.all ? ((await firstDay(em, scope)) ?? today) : w.firstDay;
  const last = w.all ? today : w.lastDay;
  const weekly = isWeekly(daysBetween(first, last) + 1);
  const prevW = previousWindow(w);
  // The fleet reads the per-day rollups; an agent its own rows (through its index).
  const totals = (win: Window) => (scope.fleet ? fleetTotals(em, win) : operationTotals(em, scope, win));
  const [t, days, hours, agents, msgs, tx, byStatus, load, prev, prevTx] = await Promise.all([
    totals(w),
    scope.fleet ? fleetDailyRows(em, w, weekly) : dailyRows(em, scope, w, weekly),
    scope.fleet ? fleetHourRows(em, w) : hourRows(em, scope, w),
    scope.fleet ? fleetAgentRows(em, w) : Promise.resolve([]),
    messageTotalsFromRollup(em, w, scope.fleet ? undefined : scope.agentId),
    transactionTotals(em, scope, w),
    scope.fleet ? fleetStatusCounts(em, w) : statusCounts(em, scope, w),
    loadFigures(em, scope, now, new Date(now.getTime() - config.balanceStalenessMs)),
    prevW ? totals(prevW) : undefined,
    prevW ? transactionTotals(em, scope, prevW) : undefined,
  ]);
  const byWeekday = [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({
    weekday,
    operations: hours.filter((h) => h.weekday === weekday).reduce((s, h) => s + h.operations, 0n),
  }));
  const zero = (day: string) => ({
    day,
    operations: 0n,
    transfers: 0n,
    balanceChecks: 0n,
    valueXaf: 0n,
    confirmed: 0n,
    autoConfirmed: 0n,
    failed: 0n,
    unproven: 0n,
  });
  const daily = fillSeries(
    first,
    last,
    weekly,
    days.map((d) => ({
      day: d.day,
      operations: d.operations,
      transfers: d.transfers,
      balanceChecks: d.balance_checks,
      valueXaf: d.value_xaf,
      confirmed: d.confirmed,
      autoConfirmed: d.auto_confirmed,
      failed: d.failed,
      unproven: d.unproven,
    })),
    zero,
  );
  return {
    fleet: scope.fleet,
    since: ts(windowSince(w)),
    until: ts(windowUntil(w)),
    money: {
      sentXaf: t.sent_xaf,
      transfers: t.confirmed_transfers,
      medianTransfer: t.median_transfer,
      largestTransfer: t.largest_transfer,
      eurTaken: tx.eurTaken,
      receivedXaf: tx.receivedXaf,
      realisedRate: scope.fleet ? tx.realisedRate : undefined,
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
      daily,
      byWeekday,
      byHour: hours,
      byAgent: agents,
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
      totalMessages: msgs.total,
      ambiguousMessages: msgs.ambiguous,
      collisionRate: rate(msgs.ambiguous, msgs.total),
      thresholds: { evidenceWindowS: BigInt(config.evidenceWindowS), lateEvidenceS: BigInt(config.lateEvidenceS) },
      byStatus,
    },
    load,
    previous: {
      sentXaf: prev?.sent_xaf ?? 0n,
      transfers: prev?.confirmed_transfers ?? 0n,
      confirmed: prev?.confirmed ?? 0n,
      autoConfirmed: prev?.auto_confirmed ?? 0n,
      since: prevW && ts(windowSince(prevW)),
      until: prevW && ts(windowUntil(prevW)),
      medianTransfer: prev?.median_transfer ?? 0n,
      largestTransfer: prev?.largest_transfer ?? 0n,
      realisedRate: scope.fleet ? prevTx?.realisedRate : undefined,
    },
  };
}

export async function unprovenByHandsetReport(
  db: Database,
  caller: Caller | undefined,
  input: AnalyticsWindow | undefined,
  now = new Date(),
): Promise<MessageInitShape<typeof UnprovenByHandsetReportSchema>> {
  const scope = scopeOf(caller);
  const w = windowOf(input, now);
  return {
    fleet: scope.fleet,
    since: ts(windowSince(w)),
    until: ts(windowUntil(w)),
    handsets: await unprovenByHandset(db.em(), scope, w, now),
  };
}
