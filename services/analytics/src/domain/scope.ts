import { callerGuards, type Caller, type GuardRefusal } from "@transferops/kit/pure";
import { refusal } from "./reasons.ts";

/** Whose work a report covers: the fleet, or one agent's operations. */
export type Scope = { fleet: true } | { fleet: false; agentId: string };

/** An active session caller's scope: supervisors and admins see the fleet, an agent its own work. */
export function scopeOf(c: Caller | undefined): Scope {
  if (!c || c.kind !== "session" || !c.agentId) throw refusal("not_signed_in", "A session is required");
  if (!c.isActive) throw refusal("agent_inactive", "This agent is inactive");
  return c.role === "admin" || c.role === "supervisor" ? { fleet: true } : { fleet: false, agentId: c.agentId };
}

/** Any caller but an active admin's session gets the one refusal. */
const ADMIN_REQUIRED: GuardRefusal<"admin_required"> = ["admin_required", "This route requires the admin role"];
const guards = callerGuards(refusal, {
  kind: { session: ADMIN_REQUIRED },
  inactive: ADMIN_REQUIRED,
  admin: ADMIN_REQUIRED,
});

/** Only an active admin session lists the agents analytics knows. */
export function requireAdmin(c: Caller | undefined): void {
  guards.requireAdmin(c);
}
