import { DomainError, refusalsOf, type ReasonSpec, type Violation } from "@transferops/kit/pure";

// Fleet's closed set of refusals (`context.reason`). Every DomainError fleet raises is
// built here, from this table: its status is looked up, never chosen by the caller, so
// the reason-to-status mapping cannot drift between handlers. The gateway's OpenAPI
// document lists the reasons per route from this table.
//
// The table's order is the order of precedence (house style: a request breaking several
// rules always gets the same answer):
//
//   1. credentials and role (credentials_*, login_failed, *_required, agent_inactive)
//   2. validation of the body: `invalid(...)`, 422 invalid_request with the list of
//      problems and no context.reason, like the gateway's own validation; it includes
//      unknown SIM ids and op types of a grant, a lone device_id or subscription_slot,
//      a future observed_at, inverted thresholds
//   3. the named resources exist (agent_not_found, device_not_found, sim_not_found, ...)
//   4. the state allows it, in the order each rule lists below:
//        SIM create/assign: msisdn_exists, device_not_active, device_full, slot_occupied
//        unassign: sim_unassigned, sim_busy
//        freeze/unfreeze: sim_retired
//
// Contexts carry ids, never secrets.

export const REASONS = {
  // --- credentials and role -------------------------------------------------------
  // Same name and meaning as the gateway's: the request carries no caller at all.
  credentials_missing: { status: "unauthenticated", when: "The request carries no credential" },
  credentials_invalid: { status: "unauthenticated", when: "The credential is unknown, expired or revoked" },
  login_failed: { status: "unauthenticated", when: "Wrong login or password, or an inactive agent" },
  wrong_password: { status: "unauthenticated", when: "Current password is wrong" },
  bootstrap_refused: { status: "forbidden", when: "Bootstrap token absent, wrong or unset" },
  session_required: { status: "forbidden", when: "The route requires a board session" },
  agent_inactive: { status: "forbidden", when: "The agent is inactive" },
  admin_required: { status: "forbidden", when: "The route requires the admin role" },
  device_required: { status: "forbidden", when: "The route requires a device token" },
  api_key_required: { status: "forbidden", when: "The route requires the API key" },

  // --- confirmations ----------------------------------------------------------------
  reset_not_confirmed: { status: "refused", when: "The reset was not confirmed" },

  // --- the named resources exist ------------------------------------------------------
  agent_not_found: { status: "not_found", when: "No agent has this id" },
  device_not_found: { status: "not_found", when: "No device has this id" },
  sim_not_found: { status: "not_found", when: "No SIM has this id" },
  notification_not_found: { status: "not_found", when: "No notification has this id" },
  webhook_not_found: { status: "not_found", when: "No webhook has this id" },

  // --- the state allows it, in the order of each rule ----------------------------------
  login_exists: { status: "conflict", when: "The login is taken" },
  admin_exists: { status: "conflict", when: "An admin already exists" },
  msisdn_exists: { status: "conflict", when: "A SIM with this MSISDN exists" },
  device_not_active: { status: "conflict", when: "The device is not active (frozen)" },
  device_full: { status: "conflict", when: "The device already holds 2 SIMs" },
  slot_occupied: { status: "conflict", when: "The slot holds another SIM" },
  sim_unassigned: { status: "conflict", when: "The SIM is already unassigned" },
  sim_busy: { status: "conflict", when: "The SIM has operations queued or running" },
  sim_retired: { status: "conflict", when: "The SIM is retired" },

  // --- faults ---------------------------------------------------------------------------
  pin_unavailable: { status: "internal", when: "The SIM's PIN cannot be read" },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

export const REASON_CODES = Object.keys(REASONS) as Reason[];

/** Builds the DomainError for a reason; the status comes from the table. */
export const refusal = refusalsOf(REASONS);

/** Validation: 422 invalid_request, `detail` the list of problems (no reason, as at the gateway). */
export const invalid = (violations: Violation[], context: Record<string, unknown> = {}) =>
  new DomainError("invalid", violations.map((v) => `${v.field}: ${v.message}`).join("; "), { violations, context });

export const notFound = (what: "agent" | "device" | "sim" | "notification" | "webhook", id: string) => {
  const label = { agent: "Agent", device: "Device", sim: "SIM", notification: "Notification", webhook: "Webhook" }[
    what
  ];
  return refusal(`${what}_not_found`, `${label} ${id} not found`, { [`${what}_id`]: id });
};

export const msisdnExists = (msisdn: string) =>
  refusal("msisdn_exists", `A SIM with MSISDN ${msisdn} already exists`, { msisdn });

export const deviceNotActive = (deviceId: string, status: string) =>
  refusal("device_not_active", `Device ${deviceId} is ${status}, not active`, {
    device_id: deviceId,
    device_status: status,
  });

export const deviceFull = (deviceId: string, simIds: string[]) =>
  refusal("device_full", `Device ${deviceId} already holds 2 SIMs`, { device_id: deviceId, sim_ids: simIds });

export const slotOccupied = (deviceId: string, slot: number, simId: string) =>
  refusal("slot_occupied", `Slot ${slot} of device ${deviceId} is occupied by SIM ${simId}`, {
    device_id: deviceId,
    subscription_slot: slot,
    sim_id: simId,
  });

export const simUnassigned = (simId: string) =>
  refusal("sim_unassigned", `SIM ${simId} is already unassigned`, { sim_id: simId });

export const simBusy = (simId: string, queuedOrRunning: number) =>
  refusal("sim_busy", `SIM ${simId} has ${queuedOrRunning} operation(s) queued or running`, {
    sim_id: simId,
    queued_or_running: queuedOrRunning,
  });

export const simRetired = (simId: string) =>
  refusal("sim_retired", `SIM ${simId} is retired; set its status with the update route`, {
    sim_id: simId,
    sim_status: "retired",
  });

export const loginTaken = (login: string) => refusal("login_exists", `Login ${login} already exists`, { login });
