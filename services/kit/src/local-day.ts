// Local calendar days of the business, and the `days` / `from` / `to` / `all` window the
// board's lists take. Local time is Africa/Douala: UTC+1 all year (no daylight saving), so
// a fixed offset is exact and needs no tz database.

export const LOCAL_OFFSET_MS = 60 * 60 * 1000;
export const DAY_MS = 24 * 60 * 60 * 1000;

/** YYYY-MM-DD of the local day holding `instant`. */
export function localDayOf(instant: Date): string {
  return new Date(instant.getTime() + LOCAL_OFFSET_MS).toISOString().slice(0, 10);
}

/** Local midnight opening a YYYY-MM-DD day, or null when the text is not a real calendar day (2026-02-30 is not). */
export function localMidnight(day: string): Date | null {
  const m = /^(\d{4})-(\d{2})-(\d{2})$/.exec(day);
  if (!m) return null;
  const [y, mo, d] = [Number(m[1]), Number(m[2]), Number(m[3])];
  const utc = new Date(Date.UTC(y, mo - 1, d));
  if (utc.getUTCFullYear() !== y || utc.getUTCMonth() !== mo - 1 || utc.getUTCDate() !== d) return null;
  return new Date(utc.getTime() - LOCAL_OFFSET_MS);
}

export interface DayWindowRequest {
  /** 0 means the default. */
  days: number;
  /** YYYY-MM-DD or "". */
  from: string;
  /** YYYY-MM-DD or "". */
  to: string;
  all: boolean;
}

export interface DayWindowProblem {
  field: "from" | "to" | "days";
  message: string;
  value: string | number;
}

/**
 * The window [from, to), either end open, of a list's `days` / `from` / `to` / `all`.
 * Precedence: `from` or `to` (an explicit range of whole local days, `to` inclusive; it
 * wins over `days`) > `all` (everything) > `days` (default `defaultDays`, 1 to `maxDays`,
 * ending with today). The problems come in the order from, to, then days; each service
 * turns them into its own refusal.
 */
export function dayWindow(
  req: DayWindowRequest,
  now: Date,
  limits: { defaultDays: number; maxDays: number },
): { from: Date | null; to: Date | null; problems: DayWindowProblem[] } {
  const problems: DayWindowProblem[] = [];
  if (req.from || req.to) {
    const from = req.from ? localMidnight(req.from) : null;
    if (req.from && !from)
      problems.push({ field: "from", message: "must be a calendar day YYYY-MM-DD", value: req.from });
    const toStart = req.to ? localMidnight(req.to) : null;
    if (req.to && !toStart) problems.push({ field: "to", message: "must be a calendar day YYYY-MM-DD", value: req.to });
    // `to` is inclusive of the whole local day: the window ends at the next midnight.
    const to = toStart ? new Date(toStart.getTime() + DAY_MS) : null;
    if (from && to && from.getTime() >= to.getTime()) {
      problems.push({ field: "from", message: `is after to (${req.to})`, value: req.from });
    }
    return { from, to, problems };
  }
  if (req.all) return { from: null, to: null, problems };
  const days = req.days || limits.defaultDays;
  if (!Number.isInteger(days) || days < 1 || days > limits.maxDays) {
    problems.push({ field: "days", message: `must be an integer from 1 to ${limits.maxDays}`, value: req.days });
  }
  const today = localMidnight(localDayOf(now))!;
  return { from: new Date(today.getTime() - (days - 1) * DAY_MS), to: null, problems };
}
