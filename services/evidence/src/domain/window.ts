// The `days` / `from` / `to` / `all` window of the unmatched and movements lists, on the
// message's received_at. Days are local calendar days in UTC+1 (Africa/Douala, no daylight
// saving), so a fixed offset is exact.
//
// Precedence: `from` or `to` (an explicit range; `from` wins over `days`) > `all` (the whole
// backlog) > `days` (default 30, 1 to 365, ending with today).

import { invalid } from "./reasons.ts";

export const LOCAL_OFFSET_MS = 60 * 60 * 1000;
const DAY_MS = 24 * 60 * 60 * 1000;

export const DEFAULT_WINDOW_DAYS = 30;
export const MAX_WINDOW_DAYS = 365;

export const DEFAULT_LIST_LIMIT = 50;
export const MAX_LIST_LIMIT = 250;

export interface WindowRequest {
  /** 0 means the default. */
  days: number;
  /** YYYY-MM-DD or "". */
  from: string;
  /** YYYY-MM-DD or "". */
  to: string;
  all: boolean;
}

/** [from, to): either end open (null). */
export interface Window {
  from: Date | null;
  to: Date | null;
}

/** YYYY-MM-DD of the local day holding `instant`. */
export function localDayOf(instant: Date): string {
  return new Date(instant.getTime() + LOCAL_OFFSET_MS).toISOString().slice(0, 10);
}

/** Local midnight opening a YYYY-MM-DD day, or null when the text is not a real calendar day. */
export function localMidnight(day: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const utc = new Date(Date.UTC(y, mo - 1, d));
  if (utc.getUTCFullYear() !== y || utc.getUTCMonth() !== mo - 1 || utc.getUTCDate() !== d) return null;
  return new Date(utc.getTime() - LOCAL_OFFSET_MS);
}

export function windowOf(req: WindowRequest, now: Date): Window {
  if (req.from || req.to) {
    const from = req.from ? localMidnight(req.from) : null;
    if (req.from && !from) throw invalid("from", "must be a calendar day YYYY-MM-DD", req.from);
    const toStart = req.to ? localMidnight(req.to) : null;
    if (req.to && !toStart) throw invalid("to", "must be a calendar day YYYY-MM-DD", req.to);
    // `to` is inclusive of the whole local day: the window ends at the next midnight.
    const to = toStart ? new Date(toStart.getTime() + DAY_MS) : null;
    if (from && to && from.getTime() >= to.getTime()) throw invalid("from", `is after to (${req.to})`, req.from);
    return { from, to };
  }
  if (req.all) return { from: null, to: null };
  const days = req.days || DEFAULT_WINDOW_DAYS;
  if (!Number.isInteger(days) || days < 1 || days > MAX_WINDOW_DAYS) {
    throw invalid("days", `must be an integer from 1 to ${MAX_WINDOW_DAYS}`, req.days);
  }
  const today = localMidnight(localDayOf(now))!;
  return { from: new Date(today.getTime() - (days - 1) * DAY_MS), to: null };
}

export function limitOf(limit: number): number {
  if (limit === 0) return DEFAULT_LIST_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIST_LIMIT) {
    throw invalid("limit", `must be an integer from 1 to ${MAX_LIST_LIMIT}`, limit);
  }
  return limit;
}
