// Local time of the business: Africa/Douala, UTC+1 all year (no daylight saving), so a
// fixed offset (the kit's) is exact.
import { DAY_MS, LOCAL_OFFSET_MS } from "@transferops/kit/pure";

export interface LocalFields {
  /** YYYY-MM-DD. */
  day: string;
  /** 1 Monday to 7 Sunday. */
  weekday: number;
  /** 0 to 23. */
  hour: number;
}

export function localFields(at: Date): LocalFields {
  const local = new Date(at.getTime() + LOCAL_OFFSET_MS);
  const dow = local.getUTCDay();
  return { day: local.toISOString().slice(0, 10), weekday: dow === 0 ? 7 : dow, hour: local.getUTCHours() };
}

/** The instant a local day starts (its midnight, UTC+1). */
export function localMidnight(day: string): Date {
  return new Date(Date.parse(`${day}T00:00:00Z`) - LOCAL_OFFSET_MS);
}

export function addDays(day: string, n: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + n * DAY_MS).toISOString().slice(0, 10);
}

/** Whole days from `a` to `b` (b - a). */
export function daysBetween(a: string, b: string): number {
  return Math.round((Date.parse(`${b}T00:00:00Z`) - Date.parse(`${a}T00:00:00Z`)) / DAY_MS);
}

/** Monday opening the week of a day. */
export function mondayOf(day: string): string {
  const dow = new Date(`${day}T00:00:00Z`).getUTCDay();
  return addDays(day, -((dow + 6) % 7));
}

/** A real calendar date in YYYY-MM-DD form. */
export function isLocalDate(s: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(s)) return false;
  const d = new Date(`${s}T00:00:00Z`);
  return !Number.isNaN(d.getTime()) && d.toISOString().slice(0, 10) === s;
}
