import { DomainError, type ErrorStatus, type Violation } from "@transferops/kit";

// Fleet's closed set of refusals. Each has a stable code; a request breaking several
// rules gets the first in this order of precedence:
//
//   1. credentials and role (unauthenticated, session_required, agent_inactive, admin_required)
//   2. validation of the body (invalid_request), including unknown SIM ids and op types
//      of a grant, a lone device_id or subscription_slot, a future observed_at
//   3. the named resources exist (agent_not_found, device_not_found, sim_not_found, ...)
//   4. the state allows it, in the order each rule lists below:
//        SIM create/assign: msisdn_exists, device_not_active, device_full, slot_occupied
//        unassign: sim_unassigned, sim_busy
//        freeze/unfreeze: sim_retired
//
// The codes travel to the gateway in the error detail; contexts carry ids, never secrets.

export const invalid = (violations: Violation[], context: Record<string, unknown> = {}) =>
  new DomainError("invalid", violations.map((v) => `${v.field}: ${v.message}`).join("; "), { violations, context });

export const notFound = (what: "agent" | "device" | "sim" | "notification" | "webhook", id: string) => {
  const label = { agent: "Agent", device: "Device", sim: "SIM", notification: "Notification", webhook: "Webhook" }[
    what
  ];
  return new DomainError("not_found", `${label} ${id} not found`, {
    reason: `${what}_not_found`,
    context: { [`${what}_id`]: id },
  });
};

export const conflict = (code: string, detail: string, context: Record<string, unknown>) =>
  new DomainError("conflict", detail, { reason: code, context });

export const msisdnExists = (msisdn: string) =>
  conflict("msisdn_exists", `A SIM with MSISDN ${msisdn} already exists`, { msisdn });

export const deviceNotActive = (deviceId: string, status: string) =>
  conflict("device_not_active", `Device ${deviceId} is ${status}, not active`, {
    device_id: deviceId,
    device_status: status,
  });

export const deviceFull = (deviceId: string, simIds: string[]) =>
  conflict("device_full", `Device ${deviceId} already holds 2 SIMs`, { device_id: deviceId, sim_ids: simIds });

export const slotOccupied = (deviceId: string, slot: number, simId: string) =>
  conflict("slot_occupied", `Slot ${slot} of device ${deviceId} is occupied by SIM ${simId}`, {
    device_id: deviceId,
    subscription_slot: slot,
    sim_id: simId,
  });

export const simUnassigned = (simId: string) =>
  conflict("sim_unassigned", `SIM ${simId} is already unassigned`, { sim_id: simId });

export const simBusy = (simId: string, queuedOrRunning: number) =>
  conflict("sim_busy", `SIM ${simId} has ${queuedOrRunning} operation(s) queued or running`, {
    sim_id: simId,
    queued_or_running: queuedOrRunning,
  });

export const simRetired = (simId: string) =>
  conflict("sim_retired", `SIM ${simId} is retired; set its status with the update route`, {
    sim_id: simId,
    sim_status: "retired",
  });

/**
 * Fleet's closed set of reasons (`context.reason`) with their status, as the constructors
 * above and the rpc handlers raise them. The gateway's OpenAPI document lists them per route
 * from this table.
 */
export const REASONS = {
  wrong_password: { status: "unauthenticated", when: "Current password is wrong" },
  bootstrap_refused: { status: "forbidden", when: "Bootstrap token absent, wrong or unset" },
  admin_required: { status: "forbidden", when: "The route requires the admin role" },
  session_required: { status: "forbidden", when: "The route requires a board session" },
  device_required: { status: "forbidden", when: "The route requires a device token" },
  api_key_required: { status: "forbidden", when: "The route requires the API key" },
  agent_inactive: { status: "forbidden", when: "The agent is inactive" },
  agent_not_found: { status: "not_found", when: "No agent has this id" },
  device_not_found: { status: "not_found", when: "No device has this id" },
  sim_not_found: { status: "not_found", when: "No SIM has this id" },
  notification_not_found: { status: "not_found", when: "No notification has this id" },
  webhook_not_found: { status: "not_found", when: "No webhook has this id" },
  login_exists: { status: "conflict", when: "The login is taken" },
  admin_exists: { status: "conflict", when: "An admin already exists" },
  msisdn_exists: { status: "conflict", when: "A SIM with this MSISDN exists" },
  device_not_active: { status: "conflict", when: "The device is not active (frozen)" },
  device_full: { status: "conflict", when: "The device already holds 2 SIMs" },
  slot_occupied: { status: "conflict", when: "The slot holds another SIM" },
  sim_unassigned: { status: "conflict", when: "The SIM is already unassigned" },
  sim_busy: { status: "conflict", when: "The SIM has operations queued or running" },
  sim_retired: { status: "conflict", when: "The SIM is retired" },
  reset_not_confirmed: { status: "refused", when: "The reset was not confirmed" },
  pin_unavailable: { status: "internal", when: "The SIM's PIN cannot be read" },
} as const satisfies Record<string, { status: ErrorStatus; when: string }>;

export type FleetReason = keyof typeof REASONS;
