import { httpStatus, type ErrorStatus } from "@transferops/kit";
import type { ResponseDoc } from "./route.ts";

export { GATEWAY_REASONS, type GatewayReason } from "./gateway-reasons.ts";

/** A service's reasons table: each reason's status and when it is given. */
export type ReasonTable<K extends string> = Record<K, { readonly status: ErrorStatus; readonly when: string }>;

/**
 * Adds the reasons a route can give to its documented responses, each under the HTTP status
 * its service's table gives it (a reason not in the table does not compile). A status the
 * route does not describe yet gets the tables' `when` texts as its description.
 */
export function withReasons<K extends string>(
  responses: Record<number, string | ResponseDoc>,
  table: ReasonTable<K>,
  reasons: readonly K[],
): Record<number, string | ResponseDoc> {
  const out: Record<number, string | ResponseDoc> = { ...responses };
  for (const reason of reasons) {
    const status = httpStatus(table[reason].status);
    const given = out[status];
    const doc: ResponseDoc = typeof given === "string" ? { description: given } : { ...(given ?? { description: "" }) };
    doc.description ||= table[reason].when;
    doc.reasons = [...(doc.reasons ?? []), reason];
    out[status] = doc;
  }
  return out;
}

/**
 * The reasons of one documented response, each from the table of the service (or the
 * gateway) that gives it: a reason the table does not hold does not compile.
 */
export function reasonsOf<K extends string>(_table: Readonly<Record<K, unknown>>, ...reasons: K[]): K[] {
  return reasons;
}

/** The day window every windowed board list takes, as its OpenAPI description. */
export const WINDOW_DESCRIPTION =
  "Windowed list: `from`/`to` (YYYY-MM-DD, an explicit range; `from` wins over `days`), else `all=true` (the whole backlog), else `days` (default 30, 1 to 365, ending today). `days` outside 1 to 365, a malformed date or `from` after `to` is 422 invalid_request, the same on every windowed list.";

/**
 * The documented responses of a route an admin's session alone may use: 401, 403
 * `admin_required` (checked first), then the route's own responses and reasons.
 */
export function adminOnly<K extends string>(
  responses: Record<number, string | ResponseDoc>,
  table: ReasonTable<K | "admin_required">,
  reasons: readonly K[] = [],
): Record<number, string | ResponseDoc> {
  return withReasons({ 401: "Not signed in", 403: "Admin required", ...responses }, table, [
    "admin_required",
    ...reasons,
  ]);
}
