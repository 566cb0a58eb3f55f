// Time windows: the evidence window after a dial, the late-evidence window, the
// device cooldown, and local calendar days.
//
// Every window is half-open, [start, end): an instant exactly at the end is
// outside. Durations are given in seconds, as the configuration names them
// (EVIDENCE_WINDOW_S, LATE_EVIDENCE_S, DEVICE_COOLDOWN_S).
//
// Days are local days of the operating timezone, Africa/Douala: UTC+1 all year
// (no daylight saving), so a fixed offset is exact and needs no tz database.

import { DAY_MS, LOCAL_OFFSET_MS, localDayOf, localMidnight } from "@transferops/kit/pure";
import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";

export { localDayOf };

export const OPERATING_TIMEZONE = "Africa/Douala";
export const MAX_WINDOW_DAYS = 365;

export interface TimeRange {
  /** Inclusive start: local midnight opening the first day. */
  readonly from: Date;
  /** Exclusive end: local midnight after the last day. */
  readonly to: Date;
}

export interface OpenTimeRange {
  readonly from: Date | null;
  readonly to: Date | null;
}

// ---------------------------------------------------------------------------
// Evidence, late evidence and cooldown

/** When the evidence window of an operation that finished dialling closes (reported as `evidence_expires_at`). */
export function evidenceExpiresAt(finishedAt: Date, evidenceWindowS: number): Date {
  return new Date(finishedAt.getTime() + evidenceWindowS * 1000);
}

/** The sweep's test: an `awaiting_evidence` operation whose window has closed becomes `no_evidence`. */
export function hasEvidenceWindowExpired(finishedAt: Date, now: Date, evidenceWindowS: number): boolean {
  return now.getTime() >= evidenceExpiresAt(finishedAt, evidenceWindowS).getTime();
}

/**
 * Whether a `no_evidence` operation may still be confirmed by an SMS (and is
 * reported `self_resolving`). Measured from `finished_at`, as the contract says;
 * an operation that never finished has no late window.
 */
export function isWithinLateWindow(finishedAt: Date | null, now: Date, lateEvidenceS: number): boolean {
  if (finishedAt === null) return false;
  return now.getTime() < finishedAt.getTime() + lateEvidenceS * 1000;
}

/** A device that finished an operation less than `cooldownS` ago gets 204 on poll. */
export function isInCooldown(lastFinishedAt: Date | null, now: Date, cooldownS: number): boolean {
  if (lastFinishedAt === null) return false;
  return now.getTime() < lastFinishedAt.getTime() + cooldownS * 1000;
}

// ---------------------------------------------------------------------------
// Local days

/** ISO 8601 in local time with its offset and whole seconds, for texts people read: `2026-11-22T10:15:00+01:00`. */
export function formatLocalIso(instant: Date): string {
  const shifted = new Date(instant.getTime() + LOCAL_OFFSET_MS).toISOString();
  return `${shifted.slice(0, 19)}+01:00`;
}

/** Validates a calendar day written YYYY-MM-DD (a real date: 2026-02-30 is refused). */
export function parseLocalDay(text: string, field = "date"): Result<string> {
  if (localMidnight(text) !== null) return ok(text);
  return fail(
    refusal("invalid_request", `${field} must be a calendar day in the form YYYY-MM-DD, got '${text}'`, {
      field,
      value: text,
    }),
  );
}

/** One local day, midnight to midnight: the `date` filter of the operations list. */
export function localDayRange(day: string, field = "date"): Result<TimeRange> {
  const parsed = parseLocalDay(day, field);
  if (!parsed.ok) return parsed;
  const from = localMidnight(parsed.value)!;
  return ok({ from, to: new Date(from.getTime() + DAY_MS) });
}

export interface DateRangeOptions {
  /** Names used in refusal texts, e.g. `date_from` and `date_to` on the operations list. */
  readonly fromField?: string;
  readonly toField?: string;
  /** When given, a range starting after this instant is refused (the analytics rule). */
  readonly now?: Date;
}

/**
 * Inclusive local days `from`..`to`, either end open. The end is the midnight
 * after `to`, so the whole of the last day is inside.
 */
export function localDateRange(
  fromDay: string | null | undefined,
  toDay: string | null | undefined,
  options: DateRangeOptions = {},
): Result<OpenTimeRange> {
  const fromField = options.fromField ?? "from";
  const toField = options.toField ?? "to";
  const from = fromDay == null ? ok(null) : localDayRange(fromDay, fromField);
  if (!from.ok) return from;
  const to = toDay == null ? ok(null) : localDayRange(toDay, toField);
  if (!to.ok) return to;
  const start = from.value?.from ?? null;
  const end = to.value?.to ?? null;
  if (start !== null && end !== null && start.getTime() >= end.getTime()) {
    return fail(
      refusal("invalid_request", `${fromField} (${fromDay}) is after ${toField} (${toDay})`, {
        [fromField]: fromDay,
        [toField]: toDay,
      }),
    );
  }
  if (start !== null && options.now !== undefined && start.getTime() > options.now.getTime()) {
    return fail(refusal("invalid_request", `${fromField} (${fromDay}) is in the future`, { [fromField]: fromDay }));
  }
  return ok({ from: start, to: end });
}

/** `days` local calendar days ending with today: 1 is today alone, 7 is today and the six days before. */
export function daysBackRange(days: number, now: Date, maxDays = MAX_WINDOW_DAYS): Result<TimeRange> {
  if (!Number.isInteger(days) || days < 1 || days > maxDays) {
    return fail(
      refusal("invalid_request", `days must be an integer from 1 to ${maxDays}, got ${days}`, {
        field: "days",
        value: days,
      }),
    );
  }
  const todayStart = localMidnight(localDayOf(now))!;
  return ok({
    from: new Date(todayStart.getTime() - (days - 1) * DAY_MS),
    to: new Date(todayStart.getTime() + DAY_MS),
  });
}
