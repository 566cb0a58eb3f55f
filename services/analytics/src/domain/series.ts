import { addDays, mondayOf } from "./local-time.ts";
import { WEEKLY_AFTER_DAYS } from "./window.ts";

/** Whether a series of this many days is bucketed by week. */
export const isWeekly = (days: number) => days > WEEKLY_AFTER_DAYS;

/**
 * Every bucket of the series from `firstDay` to `lastDay` (inclusive): each day, or each
 * week dated by the Monday opening it. Buckets without a row get `empty(day)`.
 */
export function fillSeries<T extends { day: string }>(
  firstDay: string,
  lastDay: string,
  weekly: boolean,
  found: T[],
  empty: (day: string) => T,
): T[] {
  const byDay = new Map(found.map((r) => [r.day, r]));
  const out: T[] = [];
  for (let d = weekly ? mondayOf(firstDay) : firstDay; d <= lastDay; d = addDays(d, weekly ? 7 : 1)) {
    out.push(byDay.get(d) ?? empty(d));
  }
  return out;
}

/** Operations per ISO weekday (1 Monday … 7 Sunday), every weekday present, from hourly buckets. */
export function weekdayTotals(hours: { weekday: number; operations: bigint }[]) {
  return [1, 2, 3, 4, 5, 6, 7].map((weekday) => ({
    weekday,
    operations: hours.filter((h) => h.weekday === weekday).reduce((s, h) => s + h.operations, 0n),
  }));
}
