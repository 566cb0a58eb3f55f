// The filters of the board's lists, validated once. Unknown or malformed values are
// 422 invalid_request; a filter narrows the caller's scope, never widens it (scope.ts).

import { MAX_PAGE_LIMIT } from "@transferops/kit/pure";
import { fail, ok, type DomainError, type Result } from "./errors.ts";
import { OPERATION_STATUSES, type OperationStatus } from "./operation-state.ts";
import { refusal } from "./reasons.ts";
import { daysBackRange, localDateRange, localDayRange, MAX_WINDOW_DAYS } from "./windows.ts";

/** Contract limits of the operations, unproven, matching and settled-on-word lists (at most the kit's MAX_PAGE_LIMIT). */
export const LIST_DEFAULT_LIMIT = 50;
/** Operations claimed by the device. */
export const DEVICE_LIST_DEFAULT_LIMIT = 100;

/**
 * Days window of the unproven and settled-on-word queues when the caller gives none
 * (contract: "not shown"). 30 local days keeps a month of unsettled work in front of
 * people; `all` reaches the whole backlog.
 */
export const QUEUE_DEFAULT_DAYS = 30;

/** 0 (absent) is the default; anything else must already be within 1..max (the gateway validates it). */
export function clampLimit(limit: number, defaultLimit = LIST_DEFAULT_LIMIT, max = MAX_PAGE_LIMIT): number {
  if (!Number.isFinite(limit) || limit <= 0) return defaultLimit;
  return Math.min(Math.trunc(limit), max);
}

export interface OperationListQuery {
  readonly status: string;
  readonly sim_id: string;
  readonly date: string;
  readonly date_from: string;
  readonly date_to: string;
  readonly search: string;
  readonly limit: number;
}

export interface OperationListFilters {
  readonly status: OperationStatus | null;
  readonly sim_id: string | null;
  readonly from: Date | null;
  readonly to: Date | null;
  /** Lower-cased substring over dest_name, request_id and operation_id. */
  readonly search_text: string | null;
  /** Digits of the search, matched against the digits of msisdn_dest; null when it has none. */
  readonly search_digits: string | null;
  readonly limit: number;
}

export function parseOperationListQuery(query: OperationListQuery): Result<OperationListFilters> {
  const status = parseStatus(query.status);
  if (!status.ok) return status;
  const range = query.date !== "" ? localDayRange(query.date, "date") : dateFromTo(query.date_from, query.date_to);
  if (!range.ok) return range;
  const search = query.search.trim();
  const digits = search.replace(/\D/g, "");
  return ok({
    status: status.value,
    sim_id: query.sim_id === "" ? null : query.sim_id,
    from: range.value.from,
    to: range.value.to,
    search_text: search === "" ? null : search.toLowerCase(),
    search_digits: digits === "" ? null : digits,
    limit: clampLimit(query.limit),
  });
}

function parseStatus(value: string): Result<OperationStatus | null> {
  if (value === "") return ok(null);
  if ((OPERATION_STATUSES as readonly string[]).includes(value)) return ok(value as OperationStatus);
  return fail(
    refusal("invalid_request", `status must be one of ${OPERATION_STATUSES.join(", ")}, got '${value}'`, {
      field: "status",
      value,
    }),
  );
}

function dateFromTo(from: string, to: string) {
  return localDateRange(from === "" ? null : from, to === "" ? null : to, {
    fromField: "date_from",
    toField: "date_to",
  });
}

export interface DayWindowQuery {
  /** 0 means absent. */
  readonly days: number;
  readonly from: string;
  readonly to: string;
  readonly all: boolean;
}

/**
 * The `days`/`from`/`to`/`all` window of the queues. `from`/`to` win over `days`; `all`
 * without them reaches the whole backlog; otherwise `days` (default 30) local days
 * ending today. A reversed range is 422.
 */
export function parseDayWindow(
  query: DayWindowQuery,
  now: Date,
  defaultDays = QUEUE_DEFAULT_DAYS,
): Result<{ from: Date | null; to: Date | null }> {
  if (query.days !== 0 && (!Number.isInteger(query.days) || query.days < 1 || query.days > MAX_WINDOW_DAYS)) {
    return daysBackRange(query.days, now);
  }
  if (query.from !== "" || query.to !== "") return localDateRange(query.from || null, query.to || null);
  if (query.all) return ok({ from: null, to: null });
  const range = daysBackRange(query.days === 0 ? defaultDays : query.days, now);
  return range.ok ? ok({ from: range.value.from, to: range.value.to }) : range;
}

/** Settlement and arbitration notes: required, non-empty, at most 500 characters. */
export const NOTE_MAX_LENGTH = 500;

export function checkNote(note: string): DomainError | null {
  const trimmed = note.trim();
  if (trimmed !== "" && note.length <= NOTE_MAX_LENGTH) return null;
  return refusal(
    "invalid_request",
    trimmed === "" ? "note is required and must not be empty" : `note must be at most ${NOTE_MAX_LENGTH} characters`,
    { field: "note" },
  );
}
