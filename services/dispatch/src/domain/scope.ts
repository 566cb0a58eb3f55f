// Who may do what to which operation. Scope always comes from the credential (the
// authenticated caller), never from a request parameter; a filter may narrow a list,
// never widen it.
//
//   admin session         every operation
//   supervisor, agent     their own operations; for the unproven and settled-on-word
//                         queues and board settlement, also transfers on SIMs their
//                         access grant assigns them; supervisors may also attach
//                         evidence to any operation (contract, Attach evidence)
//   API key               every operation (it names the owning agent itself)
//   intake                as the API key (its launches name the launching agent); the
//                         only caller that may create `tx-` request_ids (idempotency.ts)
//   device                only operations assigned to it (handset routes)

import { callerGuards } from "@transferops/kit/pure";
import type { DomainError } from "./errors.ts";
import { refusal } from "./reasons.ts";
import type { Role } from "./vocabulary.ts";

export type ActorKind = "api_key" | "intake" | "session" | "device" | "messaging_key" | "service";

/** The caller as the domain sees it. */
export interface Actor {
  readonly kind: ActorKind;
  readonly agent_id: string | null;
  readonly role: Role | null;
  readonly full_name: string | null;
  readonly device_id: string | null;
}

export interface ScopedOperation {
  readonly operation_id: string;
  readonly agent_id: string;
  readonly sim_id: string | null;
}

export function isAdmin(actor: Actor): boolean {
  return actor.kind === "session" && actor.role === "admin";
}

/** Every operation is visible to the API key, intake and admins. */
export function seesFleet(actor: Actor): boolean {
  return actor.kind === "api_key" || actor.kind === "intake" || isAdmin(actor);
}

// The caller guards (the kit's family), worded with the action refused: one reason,
// caller_not_allowed, whose context names the caller's kind and what was wanted.
const guards = callerGuards(refusal, {
  kind: {},
  notAccepted: ({ caller, accepted, action }) => [
    "caller_not_allowed",
    `A ${caller?.kind} credential cannot ${action}`,
    { caller_kind: caller?.kind, accepted: [...accepted] },
  ],
  notAdmin: ({ caller, action }) => [
    "caller_not_allowed",
    `The admin role is required to ${action}`,
    { caller_kind: caller?.kind, role: caller?.role },
  ],
});

export function requireKind(actor: Actor, kinds: readonly ActorKind[], action: string): DomainError | null {
  return guards.refuseUnlessKind(actor, kinds, action);
}

export function requireAdmin(actor: Actor, action: string): DomainError | null {
  return guards.refuseUnlessAdmin(actor, action);
}

/** Read, cancel: admins and the API key any operation, others their own only. */
export function checkOwnOperation(actor: Actor, operation: ScopedOperation): DomainError | null {
  if (seesFleet(actor)) return null;
  if (actor.kind === "session" && actor.agent_id === operation.agent_id) return null;
  return notInScope(operation);
}

/**
 * The agent filter of a list: an admin (or the API key) may name anyone or no one; a
 * non-admin is always narrowed to itself, and naming another agent is 403.
 */
export function listAgentScope(actor: Actor, requested: string | null): { agent_id: string | null } | DomainError {
  if (seesFleet(actor)) return { agent_id: requested };
  if (requested !== null && requested !== actor.agent_id) {
    return refusal("not_in_scope", "Only an admin can list another agent's operations", { agent_id: requested });
  }
  return { agent_id: actor.agent_id };
}

/** The unproven and settled-on-word queues and board settlement: own operations plus those on granted SIMs. */
export interface QueueScope {
  readonly agent_id: string | null;
  readonly sim_ids: readonly string[];
}

export function queueScope(actor: Actor, grantedSimIds: readonly string[]): QueueScope | null {
  if (seesFleet(actor)) return null; // null: the whole fleet
  return { agent_id: actor.agent_id, sim_ids: [...grantedSimIds] };
}

export function checkQueueScope(
  actor: Actor,
  operation: ScopedOperation,
  grantedSimIds: readonly string[],
): DomainError | null {
  if (seesFleet(actor)) return null;
  if (actor.agent_id === operation.agent_id) return null;
  if (operation.sim_id !== null && grantedSimIds.includes(operation.sim_id)) return null;
  return notInScope(operation);
}

/**
 * Attach evidence: the agent named on the operation, supervisors and admins. Anyone else gets
 * the very answer of an id no operation has (404 `operation_not_found`, same text and context),
 * so attach never tells whether an operation outside the caller's scope exists.
 */
export function checkAttachScope(actor: Actor, operation: ScopedOperation): DomainError | null {
  if (actor.kind !== "session") return requireKind(actor, ["session"], "attach evidence");
  if (actor.role === "admin" || actor.role === "supervisor") return null;
  if (actor.agent_id === operation.agent_id) return null;
  return operationNotFound(operation.operation_id);
}

/** The 404 of an operation id that names nothing the caller may see. */
export function operationNotFound(operationId: string): DomainError {
  return refusal("operation_not_found", `Operation ${operationId} not found`, { operation_id: operationId });
}

/** A device sees only the operations assigned to it; another device's answers 404, revealing nothing. */
export function belongsToDevice(actor: Actor, operation: { readonly device_id: string | null }): boolean {
  return actor.kind === "device" && actor.device_id !== null && actor.device_id === operation.device_id;
}

function notInScope(operation: ScopedOperation): DomainError {
  return refusal("not_in_scope", `Operation ${operation.operation_id} is outside your scope`, {
    operation_id: operation.operation_id,
  });
}
