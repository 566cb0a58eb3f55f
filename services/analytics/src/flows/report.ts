import type { MessageInitShape } from "@bufbuild/protobuf";
import type { EntityManager } from "@transferops/kit";
import type {
  AnalyticsReportSchema,
  UnprovenByHandsetReportSchema,
} from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import { daysBetween, localFields } from "../domain/local-time.ts";
import type { Scope } from "../domain/scope.ts";
import { fillSeries, isWeekly, weekdayTotals } from "../domain/series.ts";
import { previousWindow, type Window } from "../domain/window.ts";
import { readFigures } from "../store/figures.ts";
import { firstDay, unprovenByHandset } from "../store/report.ts";
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
