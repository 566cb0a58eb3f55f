import { DomainError } from "@transferops/kit";

export const ROLES = ["agent", "supervisor", "admin"] as const;
export type Role = (typeof ROLES)[number];

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

export interface CallerLike {
  kind: string;
  agent_id?: string;
  agentId?: string;
  role: string;
  isActive?: boolean;
}

/** Admin routes: a session of an active admin. The API key and devices are refused. */
export function requireAdmin(caller: { kind: string; role: string; isActive: boolean } | undefined): void {
  requireSession(caller);
  if (caller!.role !== "admin")
    throw new DomainError("forbidden", "This route requires the admin role", { reason: "admin_required" });
}

/** Board routes: a session of an active agent of any role. */
export function requireSession(caller: { kind: string; role: string; isActive: boolean } | undefined): void {
  if (!caller || !caller.kind) throw new DomainError("unauthenticated", "Sign in first");
  if (caller.kind !== "session")
    throw new DomainError("forbidden", "This route requires a board session", { reason: "session_required" });
  if (!caller.isActive) throw new DomainError("forbidden", "This agent is inactive", { reason: "agent_inactive" });
}

export function sessionExpiry(issuedAt: Date, ttlS: number): Date {
  return new Date(issuedAt.getTime() + ttlS * 1000);
}
