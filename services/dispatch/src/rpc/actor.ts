import type { Caller } from "@transferops/kit";
import { ROLES, type Actor, type ActorKind, type Role } from "../domain/index.ts";

const KINDS: readonly ActorKind[] = ["api_key", "intake", "session", "device", "messaging_key", "service"];

/** The authenticated caller as the domain sees it; an absent caller is refused by every scoped rule. */
export function actorOf(caller: Caller | undefined): Actor {
  const kind = KINDS.includes(caller?.kind as ActorKind) ? (caller!.kind as ActorKind) : "service";
  const role = (ROLES as readonly string[]).includes(caller?.role ?? "") ? (caller!.role as Role) : null;
  return {
    kind: caller ? kind : "service",
    agent_id: caller?.agentId || null,
    role,
    full_name: caller?.fullName || null,
    device_id: caller?.deviceId || null,
  };
}
