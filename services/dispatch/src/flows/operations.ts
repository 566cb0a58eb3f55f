import { check } from "@transferops/kit";
import { checkOwnOperation, type Actor } from "../domain/index.ts";
import {
  findOperation as findOperationRow,
  listOperations as listOperationRows,
  type OperationListFilter,
  type OperationRecord,
} from "../store/operations.ts";
import type { DispatchDeps } from "./ports.ts";
import { cancelledBy, lockOrNotFound, move } from "./transitions.ts";

/** The operations the filter (already scoped to the caller) selects. */
export async function listOperations(deps: DispatchDeps, filter: OperationListFilter): Promise<OperationRecord[]> {
  return listOperationRows(deps.db.em(), filter);
}

/** The operation, if there is one. */
export async function findOperation(deps: DispatchDeps, operationId: string): Promise<OperationRecord | undefined> {
  return findOperationRow(deps.db.em(), operationId);
}

/** An agent's cancel of its own operation, under the operation's lock. */
export async function cancelOperation(deps: DispatchDeps, actor: Actor, operationId: string): Promise<OperationRecord> {
  const now = deps.now();
  const after = await deps.db.tx(async (em) => {
    const before = await lockOrNotFound(em, operationId);
    check(checkOwnOperation(actor, before));
    return move(
      em,
      before,
      { type: "cancel" },
      { reject_reason: cancelledBy(actor), finished_at: now },
      { trigger: "cancel", actor_agent_id: actor.agent_id, failure_reason: "cancelled_by_agent", at: now },
    );
  });
  deps.published();
  return after;
}
