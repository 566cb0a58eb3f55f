import { httpStatus, type ErrorStatus } from "@transferops/kit";
import type { ResponseDoc } from "./route.ts";

/**
 * The reasons (`context.reason`) the gateway answers itself, before any service is asked.
 * openapi.ts adds them to every route they can concern.
 */
export const GATEWAY_REASONS = {
  credentials_missing: "credentials_missing",
  credential_not_accepted: "credential_not_accepted",
  agent_inactive: "agent_inactive",
  malformed_json: "malformed_json",
  body_too_large: "body_too_large",
  route_not_found: "route_not_found",
  rate_limited: "rate_limited",
  login_throttled: "login_throttled",
  password_change_required: "password_change_required",
  unsupported_encoding: "unsupported_encoding",
  malformed_request: "malformed_request",
  nul_character: "nul_character",
  nested_too_deeply: "nested_too_deeply",
  outcome_unknown: "outcome_unknown",
} as const;

export type GatewayReason = keyof typeof GATEWAY_REASONS;

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
