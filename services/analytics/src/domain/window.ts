import { addDays, daysBetween, isLocalDate, localFields, localMidnight } from "./local-time.ts";
import { refusal } from "./reasons.ts";

export const DEFAULT_DAYS = 7;
export const MAX_DAYS = 365;
/** Past this many days the daily series is bucketed by week. */
export const WEEKLY_AFTER_DAYS = 120;

export interface WindowInput {
  days?: number;
  from?: string;
  to?: string;
  all?: boolean;
}

/**
 * A window of whole local days. `firstDay`/`lastDay` are inclusive; `all` has no bounds
 * (its series runs from the first day with data, found by the query).
 */
export type Window = { all: false; firstDay: string; lastDay: string } | { all: true };

/**
 * Resolves the contract's parameters: `from` wins over `days`; `to` alone ends a
 * `days`-long window on that day; `all` (without `from`/`to`) reaches everything.
 * A reversed range or one starting after today is 422.
 */
export function resolveWindow(input: WindowInput, now: Date): Window {
  const days = input.days || DEFAULT_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_DAYS) {
    throw refusal("invalid_window", `days must be between 1 and ${MAX_DAYS}`, { days });
  }
  for (const [name, v] of [
    ["from", input.from],
    ["to", input.to],
  ] as const) {
    if (v && !isLocalDate(v)) throw refusal("invalid_window", `${name} must be a date YYYY-MM-DD`, { [name]: v });
  }
  const today = localFields(now).day;
  if (input.all && !input.from && !input.to) return { all: true };
  const lastDay = input.to || today;
  const firstDay = input.from || addDays(lastDay, -(days - 1));
  if (input.from && input.to && input.from > input.to) {
    throw refusal("reversed_range", "from is after to", { from: input.from, to: input.to });
  }
  if (firstDay > today) throw refusal("future_range", "The range starts in the future", { from: firstDay, today });
  return { all: false, firstDay, lastDay };
}

/** The window of the same length just before (the `previous` block). */
export function previousWindow(w: Window): Window | undefined {
  if (w.all) return undefined;
  const length = daysBetween(w.firstDay, w.lastDay) + 1;
  return { all: false, firstDay: addDays(w.firstDay, -length), lastDay: addDays(w.firstDay, -1) };
}

export const windowSince = (w: Window) => (w.all ? undefined : localMidnight(w.firstDay));
export const windowUntil = (w: Window) => (w.all ? undefined : localMidnight(addDays(w.lastDay, 1)));

/**
 * A window's days as the monthly rollups read them (store/window-rows.ts): the calendar months
 * it holds whole (`months`, their first days, inclusive; absent when it holds none) and the days
 * outside them (`days`, at most two ranges, at its edges). `all` holds every month whole.
 */
export type WindowParts =
  | { all: true }
  | { all: false; months?: { first: string; last: string }; days: { firstDay: string; lastDay: string }[] };

const firstOfMonth = (day: string) => `${day.slice(0, 7)}-01`;
const nextMonth = (day: string) => {
  const [y, m] = [Number(day.slice(0, 4)), Number(day.slice(5, 7))];
  return m === 12 ? `${y + 1}-01-01` : `${y}-${String(m + 1).padStart(2, "0")}-01`;
};

export function windowParts(w: Window): WindowParts {
  if (w.all) return { all: true };
  // The first month starting on or after the window's first day, and the first month after its last day's.
  const start = w.firstDay === firstOfMonth(w.firstDay) ? w.firstDay : nextMonth(w.firstDay);
  const end = nextMonth(w.lastDay) === addDays(w.lastDay, 1) ? nextMonth(w.lastDay) : firstOfMonth(w.lastDay);
  if (start >= end) return { all: false, days: [{ firstDay: w.firstDay, lastDay: w.lastDay }] };
  const days = [];
  if (w.firstDay < start) days.push({ firstDay: w.firstDay, lastDay: addDays(start, -1) });
  if (end <= w.lastDay) days.push({ firstDay: end, lastDay: w.lastDay });
  return { all: false, months: { first: start, last: addDays(end, -1).slice(0, 7) + "-01" }, days };
}
