import { dayWindow, isUuid, MAX_PAGE_LIMIT, type Violation } from "@transferops/kit/pure";
import { invalid } from "./reasons.ts";

// The audit log as admins read it: filters, the day window, paging, and redaction.
//
// Window: local calendar days in UTC+1 (Africa/Douala, no daylight saving), on the entry's
// time, as every windowed list of the board: `from`/`to` (YYYY-MM-DD, inclusive; `from`
// wins over `days`) > `all` (the whole log) > `days` (default 30, 1 to 365, ending today):
// the kit's dayWindow, every problem reported at once with the others.

export const DEFAULT_AUDIT_DAYS = 30;
const MAX_DAYS = 365;
export const DEFAULT_AUDIT_LIMIT = 50;

export interface AuditQueryRequest {
  action: string;
  target: string;
  actor: string;
  window?: { days: number; from: string; to: string; all: boolean };
  limit: number;
  before: string;
}

/** What the store filters on; every field already checked. */
export interface AuditFilter {
  /** Exact action, or (prefix) the start of one. */
  action: { exact: string } | { prefix: string } | null;
  target: string | null;
  actor: string | null;
  /** [from, to) on `at`; either end open. */
  from: Date | null;
  to: Date | null;
  /** Only ids below this one. */
  before: string | null;
  limit: number;
}

/** Checks a list request; 422 invalid_request with every problem at once. */
export function auditFilterOf(req: AuditQueryRequest, now: Date): AuditFilter {
  const problems: Violation[] = [];
  const w = req.window ?? { days: 0, from: "", to: "", all: false };
  const {
    from,
    to,
    problems: windowProblems,
  } = dayWindow(w, now, { defaultDays: DEFAULT_AUDIT_DAYS, maxDays: MAX_DAYS });
  for (const { field, message } of windowProblems) problems.push({ field, message });
  const limit = req.limit || DEFAULT_AUDIT_LIMIT;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE_LIMIT)
    problems.push({ field: "limit", message: `must be an integer from 1 to ${MAX_PAGE_LIMIT}` });
  if (req.actor && !isUuid(req.actor)) problems.push({ field: "actor", message: "must be an agent id (UUID)" });
  if (req.before && !/^[1-9]\d{0,17}$/.test(req.before))
    problems.push({ field: "before", message: "must be an entry id" });
  if (req.action.length > 100) problems.push({ field: "action", message: "must be at most 100 characters" });
  if (req.target.length > 200) problems.push({ field: "target", message: "must be at most 200 characters" });
  if (problems.length) throw invalid(problems);
  const action = !req.action
    ? null
    : req.action.endsWith("*")
      ? { prefix: req.action.slice(0, -1) }
      : { exact: req.action };
  return {
    action,
    target: req.target || null,
    actor: req.actor || null,
    from,
    to,
    before: req.before || null,
    limit,
  };
}

export const REDACTED = "[redacted]";

// A key naming a secret: its value is never shown. Keys ending in `_id` name an identifier
// (`pin_key_id` is the id of the key that sealed a PIN, not the PIN) and are kept.
const SECRET_KEY =
  /(^|_)(pin|pins|password|passwords|secret|secrets|token|tokens|ciphertext|hash|api_key|apikey)(_|$)/i;

const isSecretKey = (key: string) => SECRET_KEY.test(key) && !/_id$/i.test(key);

/** A URL's query and credentials may carry a token: only scheme, host and path are shown. */
function redactUrl(value: string): string {
  if (!/^https?:\/\//i.test(value)) return value;
  try {
    const u = new URL(value);
    if (!u.search && !u.username && !u.password && !u.hash) return value;
    return `${u.protocol}//${u.host}${u.pathname}${u.search ? `?${REDACTED}` : ""}`;
  } catch {
    return value;
  }
}

/**
 * The details of an entry as shown: no row written today holds a secret, but the log is
 * kept forever and written by many handlers, so the reader removes any value under a
 * secret's name and the query of any URL, at any depth.
 */
export function redactDetails(value: unknown): unknown {
  if (typeof value === "string") return redactUrl(value);
  if (Array.isArray(value)) return value.map(redactDetails);
  if (value && typeof value === "object") {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>).map(([k, v]) => [
        k,
        isSecretKey(k) ? REDACTED : redactDetails(v),
      ]),
    );
  }
  return value;
}
