import { refusal } from "./reasons.ts";

import { callerGuards, ROLES, type GuardedCaller as KitGuardedCaller, type Role } from "@transferops/kit/pure";

export { ROLES, type Role };

export const isRole = (v: string): v is Role => (ROLES as readonly string[]).includes(v);

export interface AgentRecord {
  id: string;
  login: string;
  full_name: string;
  role: Role;
  is_active: boolean;
  must_change_password: boolean;
  password_hash: string;
  created_at: Date;
}

type GuardedCaller = KitGuardedCaller | undefined;

// The caller guards (the kit's family), in the precedence of the reasons table: no caller
// first, then the credential kind, then the agent's state, then the role.
const guards = callerGuards(refusal, {
  missing: ["credentials_missing", "Sign in first"],
  kind: {
    session: ["session_required", "This route requires a board session"],
    device: ["device_required", "This route requires a device token"],
    api_key: ["api_key_required", "This route requires the API key"],
  },
  inactive: ["agent_inactive", "This agent is inactive"],
  admin: ["admin_required", "This route requires the admin role"],
});

/** Admin routes: a session of an active admin. The API key and devices are refused. */
export function requireAdmin(caller: GuardedCaller): void {
  guards.requireAdmin(caller);
}

/** Board routes: a session of an active agent of any role. */
export function requireSession(caller: GuardedCaller): void {
  guards.requireSession(caller);
}

/** Handset routes: a device token's caller, whose own device is the only scope. */
export function requireDevice(caller: GuardedCaller): string {
  return guards.requireDevice(caller).deviceId;
}

/** Routes of the automation caller alone (the balance reading). */
export function requireApiKey(caller: GuardedCaller): void {
  guards.requireKind(caller, "api_key");
}

export function sessionExpiry(issuedAt: Date, ttlS: number): Date {
  return new Date(issuedAt.getTime() + ttlS * 1000);
}
