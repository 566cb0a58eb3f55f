// The `days` / `from` / `to` / `all` window of the unmatched and movements lists, on the
// message's received_at: the kit's day window (local days, UTC+1), whose first problem is
// the refusal. Precedence: `from` or `to` (an explicit range; `from` wins over `days`) >
// `all` (the whole backlog) > `days` (default 30, 1 to 365, ending with today).

import { dayWindow, localDayOf, localMidnight, MAX_PAGE_LIMIT, type DayWindowRequest } from "@transferops/kit/pure";
import { invalid } from "./reasons.ts";

export { localDayOf, localMidnight };

export const DEFAULT_WINDOW_DAYS = 30;
export const MAX_WINDOW_DAYS = 365;

export const DEFAULT_LIST_LIMIT = 50;

export type WindowRequest = DayWindowRequest;

/** [from, to): either end open (null). */
export interface Window {
  from: Date | null;
  to: Date | null;
}

export function windowOf(req: WindowRequest, now: Date): Window {
  const { from, to, problems } = dayWindow(req, now, { defaultDays: DEFAULT_WINDOW_DAYS, maxDays: MAX_WINDOW_DAYS });
  if (problems.length) throw invalid(problems[0].field, problems[0].message, problems[0].value);
  return { from, to };
}

export function limitOf(limit: number): number {
  if (limit === 0) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT) {
    throw invalid("limit", `must be an integer from 1 to ${MAX_PAGE_LIMIT}`, limit);
  }
  return limit;
}
