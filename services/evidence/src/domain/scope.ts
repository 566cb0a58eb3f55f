// Who sees which messages. The gateway checks the credential kind; the rules of roles and
// grants live here. Scope always comes from the caller (the token), never a parameter.

import { callerGuards, type Caller } from "@transferops/kit/pure";
import { refusal } from "./reasons.ts";

/** The SIMs whose messages a board caller may read and dismiss. */
export type Scope = { fleet: true } | { fleet: false; simIds: ReadonlySet<string> };

// The kit's guard family on evidence's reasons: a missing caller gets the refusal of the
// kind the route wants.
const guards = callerGuards(refusal, {
  kind: {
    session: ["session_required", "This route requires a board session"],
    device: ["device_required", "This route requires a device token"],
  },
  inactive: ["agent_inactive", "This agent is inactive"],
  admin: ["admin_required", "This route requires the admin role"],
});

/** Board routes: an active agent's session of any role. */
export const requireBoard = (caller: Caller | undefined): Caller => guards.requireSession(caller);

/** Handset routes: a device token. */
export const requireDevice = (caller: Caller | undefined): Caller => guards.requireDevice(caller);

export const requireAdmin = (caller: Caller | undefined): Caller => guards.requireAdmin(caller);

/** Supervisors and admins see the fleet; an agent the SIMs of its grant (none without one). */
export function needsGrant(caller: Caller): boolean {
  return caller.role !== "supervisor" && caller.role !== "admin";
}

export function scopeOf(caller: Caller, grantSimIds: readonly string[]): Scope {
  return needsGrant(caller) ? { fleet: false, simIds: new Set(grantSimIds) } : { fleet: true };
}

export function inScope(scope: Scope, simId: string): boolean {
  return scope.fleet || scope.simIds.has(simId);
}

/** Contract: 403 when the SIM is not the calling device's (an unknown SIM is no one's). */
export function requireSimOfDevice(
  device: Caller,
  sim: { sim_id: string; device_id?: string } | undefined,
  simId: string,
): void {
  if (!sim || !sim.device_id || sim.device_id !== device.deviceId) {
    throw refusal("sim_not_assigned_to_device", `SIM ${simId} is not assigned to this device`, { sim_id: simId });
  }
}
