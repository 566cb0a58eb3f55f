import type { Caller } from "@transferops/kit/pure";
import { refusal } from "./reasons.ts";

/** Whose work a report covers: the fleet, or one agent's operations. */
export type Scope = { fleet: true } | { fleet: false; agentId: string };

/** An active session caller's scope: supervisors and admins see the fleet, an agent its own work. */
export function scopeOf(c: Caller | undefined): Scope {
  if (!c || c.kind !== "session" || !c.agentId) throw refusal("not_signed_in", "A session is required");
  if (!c.isActive) throw refusal("agent_inactive", "This agent is inactive");
  return c.role === "admin" || c.role === "supervisor" ? { fleet: true } : { fleet: false, agentId: c.agentId };
}

/** Only an active admin session lists the agents analytics knows. */
export function requireAdmin(c: Caller | undefined): void {
  if (!c || c.kind !== "session" || c.role !== "admin" || !c.isActive) {
    throw refusal("admin_required", "This route requires the admin role");
  }
}
