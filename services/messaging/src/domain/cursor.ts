// Opaque cursors of the lists. A list is ordered by an immutable, increasing sequence
// number given at insert, so a row inserted or updated while a client pages is neither
// skipped nor repeated (inserts land after the last page; updates do not move rows).
// The cursor is the base64url of `<list>:<seq>`; a cursor of another list is refused.

import type { DomainError } from "@transferops/kit/pure";
import { refusal } from "./reasons.ts";

export const PAGE = { defaultLimit: 50, maxLimit: 200 } as const;

export function encodeCursor(list: string, seq: string | number): string {
  return Buffer.from(`${list}:${seq}`).toString("base64url");
}

export type Decoded = { ok: true; seq: string } | { ok: false; error: DomainError };

/** The sequence number after which the page starts ("0" for the first page). */
export function decodeCursor(list: string, cursor: string): Decoded {
  if (!cursor) return { ok: true, seq: "0" };
  const text = /^[A-Za-z0-9_-]{1,64}$/.test(cursor) ? Buffer.from(cursor, "base64url").toString() : "";
  const m = /^([a-z_]+):(\d{1,18})$/.exec(text);
  if (!m || m[1] !== list) return { ok: false, error: refusal("invalid_cursor", "cursor is not one of this list") };
  return { ok: true, seq: m[2] };
}

/** The route's limit: 0 is the default; anything above the maximum is clamped. */
export function pageLimit(limit: number): number {
  if (!limit || limit < 1) return PAGE.defaultLimit;
  return Math.min(limit, PAGE.maxLimit);
}
