import { isUuid, type EntityManager } from "@transferops/kit";

// An id that is not a UUID names no operation: 404 (the gateway already answers 422 for its path parameters).
export { isUuid };
import { operationNotFound, transition, unwrap, type Actor, type Trigger } from "../domain/index.ts";
import { changeEvents, type ChangeFacts } from "../events/operations.ts";
import { lockOperation, updateOperation, type OperationChange, type OperationRecord } from "../store/operations.ts";
import type { NewProof } from "../store/proof-rows.ts";

/**
 * Applies one transition to a locked operation: the domain decides the next status (or
 * refuses), the row is written and its events go to the outbox, with the message's proof
 * row when `proof` is given, all in the caller's transaction (one statement for a row
 * locked with its clock: `updateOperation`).
 */
export async function move(
  em: EntityManager,
  before: OperationRecord,
  trigger: Trigger,
  change: OperationChange,
  facts: Omit<ChangeFacts, "previous_status">,
  proof?: NewProof,
): Promise<OperationRecord> {
  const status = unwrap(transition({ operation_id: before.operation_id, status: before.status }, trigger));
  return updateOperation(
    em,
    before,
    { ...change, status },
    (after) => changeEvents(after, { ...facts, previous_status: before.status }),
    proof,
  );
}

/** Locks an operation by id or refuses with 404. */
export async function lockOrNotFound(em: EntityManager, operationId: string): Promise<OperationRecord> {
  const found = await lockOperation(em, operationId);
  if (!found) throw notFound(operationId);
  return found;
}

export function notFound(operationId: string) {
  return operationNotFound(operationId);
}

/** Full name used in `Cancelled by <full_name>.`; a caller without one is named by its kind. */
export function cancelledBy(actor: Actor): string {
  return `Cancelled by ${actor.full_name ?? actor.kind}.`;
}
