// No imports: the board types its reason texts against this list too.

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
