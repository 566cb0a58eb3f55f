import type { MessageInitShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@transferops/kit";
import type {
  AnalyticsReportSchema,
  UnprovenByHandsetReportSchema,
} from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import type { AnalyticsConfig } from "../config.ts";
import { daysBetween, localFields } from "../domain/local-time.ts";
import type { Scope } from "../domain/scope.ts";
import { fillSeries, isWeekly, weekdayTotals } from "../domain/series.ts";
import { previousWindow, type Window } from "../domain/window.ts";
import {
  dailyRows,
  firstDay,
  hourRows,
  loadFigures,
  operationTotals,
  statusCounts,
  transactionTotals,
  unprovenByHandset,
} from "../store/report.ts";
import {
  fleetAgentRows,
  fleetDailyRows,
  fleetHourRows,
  fleetStatusCounts,
  fleetTotals,
  messageTotalsFromRollup,
} from "../store/rollups.ts";
import { emptyDailyPoint, toAnalyticsReport, toDailyPoint, toUnprovenByHandsetReport } from "./mappers.ts";
import type { AnalyticsDeps } from "./ports.ts";

/** The days a report's series covers: all time runs from the scope's first day with work (or today). */
interface Span {
  first: string;
  last: string;
  weekly: boolean;
}

async function spanOf(em: EntityManager, scope: Scope, w: Window, now: Date): Promise<Span> {
  const today = localFields(now).day;
  const first = w.all ? ((await firstDay(em, scope)) ?? today) : w.firstDay;
  const last = w.all ? today : w.lastDay;
  return { first, last, weekly: isWeekly(daysBetween(first, last) + 1) };
}

export type ReportFigures = Awaited<ReturnType<typeof readFigures>>;

/** Every figure of a report, read at once: the fleet from the per-day rollups, an agent from its own rows. */
async function readFigures(
  em: EntityManager,
  config: AnalyticsConfig,
  scope: Scope,
  w: Window,
  prevW: Window | undefined,
  weekly: boolean,
  now: Date,
) {
  const totals = (win: Window) => (scope.fleet ? fleetTotals(em, win) : operationTotals(em, scope, win));
  const [t, days, hours, agents, msgs, tx, byStatus, load, prev, prevTx] = await Promise.all([
    totals(w),
    scope.fleet ? fleetDailyRows(em, w, weekly) : dailyRows(em, scope, w, weekly),
    scope.fleet ? fleetHourRows(em, w) : hourRows(em, scope, w),
    scope.fleet ? fleetAgentRows(em, w) : Promise.resolve([]),
    messageTotalsFromRollup(em, w, scope.fleet ? undefined : scope.agentId),
    transactionTotals(em, scope, w),
    scope.fleet ? fleetStatusCounts(em, w) : statusCounts(em, scope, w),
    loadFigures(em, scope, new Date(now.getTime() - config.balanceStalenessMs)),
    prevW ? totals(prevW) : undefined,
    prevW ? transactionTotals(em, scope, prevW) : undefined,
  ]);
  return { totals: t, days, hours, agents, messages: msgs, tx, byStatus, load, prev, prevTx };
}

/** The scope's report over the window, with the window just before it for comparison. */
export async function analyticsReport(
  { db, config }: Pick<AnalyticsDeps, "db" | "config">,
  scope: Scope,
  w: Window,
  now: Date,
): Promise<MessageInitShape<typeof AnalyticsReportSchema>> {
  const em = db.em();
  const span = await spanOf(em, scope, w, now);
  const prevW = previousWindow(w);
  const f = await readFigures(em, config, scope, w, prevW, span.weekly, now);
  const daily = fillSeries(span.first, span.last, span.weekly, f.days.map(toDailyPoint), emptyDailyPoint);
  const byWeekday = weekdayTotals(f.hours);
  return toAnalyticsReport(f, { fleet: scope.fleet, window: w, previous: prevW, daily, byWeekday, now }, config);
}

/** Per handset, the scope's transfers over the window that no operator message confirmed. */
export async function unprovenByHandsetReport(
  { db }: Pick<AnalyticsDeps, "db">,
  scope: Scope,
  w: Window,
  now: Date,
): Promise<MessageInitShape<typeof UnprovenByHandsetReportSchema>> {
  return toUnprovenByHandsetReport(scope.fleet, w, await unprovenByHandset(db.em(), scope, w), now);
}
