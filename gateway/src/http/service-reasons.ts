// The services' reasons tables, for the OpenAPI document (withReasons in each route file).
export { REASONS as DISPATCH } from "@transferops/dispatch/reasons";
export { REASONS as EVIDENCE } from "@transferops/evidence/reasons";
export { REASONS as FLEET } from "@transferops/fleet/reasons";
export { REASONS as INTAKE } from "@transferops/intake/reasons";
export { REASONS as MESSAGING } from "@transferops/messaging/reasons";
export { REASONS as ANALYTICS } from "@transferops/analytics/reasons";
