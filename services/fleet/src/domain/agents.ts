import { refusal } from "./reasons.ts";

import { ROLES, type Role } from "@transferops/kit/pure";

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

type GuardedCaller = { kind: string; role?: string; isActive?: boolean; deviceId?: string } | undefined;

// The caller guards, in the precedence of the reasons table: no caller first, then the
// credential kind, then the agent's state, then the role.

/** Admin routes: a session of an active admin. The API key and devices are refused. */
export function requireAdmin(caller: GuardedCaller): void {
  requireSession(caller);
  if (caller!.role !== "admin") throw refusal("admin_required", "This route requires the admin role");
}

/** Board routes: a session of an active agent of any role. */
export function requireSession(caller: GuardedCaller): void {
  requireKind(caller, "session");
  if (!caller!.isActive) throw refusal("agent_inactive", "This agent is inactive");
}

/** Handset routes: a device token's caller, whose own device is the only scope. */
export function requireDevice(caller: GuardedCaller): string {
  requireKind(caller, "device");
  if (!caller!.deviceId) throw refusal("device_required", "This route requires a device token");
  return caller!.deviceId;
}

/** Routes of the automation caller alone (the balance reading). */
export function requireApiKey(caller: GuardedCaller): void {
  requireKind(caller, "api_key");
}

const KIND_REFUSALS = {
  session: ["session_required", "This route requires a board session"],
  device: ["device_required", "This route requires a device token"],
  api_key: ["api_key_required", "This route requires the API key"],
} as const;

function requireKind(caller: GuardedCaller, kind: keyof typeof KIND_REFUSALS): void {
  if (!caller?.kind) throw refusal("credentials_missing", "Sign in first");
  const [reason, detail] = KIND_REFUSALS[kind];
  if (caller.kind !== kind) throw refusal(reason, detail);
}

export function sessionExpiry(issuedAt: Date, ttlS: number): Date {
  return new Date(issuedAt.getTime() + ttlS * 1000);
}
