import { check } from "@transferops/kit";
import { checkQueueScope, seesFleet, type Actor } from "../domain/index.ts";
import type { OperationRecord } from "../store/operations.ts";
import {
  listSettledOnWord as settledOnWordRows,
  listUnproven as unprovenRows,
  type QueueFilter,
  type SettledOnWordRecord,
  type UnprovenRecord,
} from "../store/queues.ts";
import type { DispatchDeps } from "./ports.ts";
import { refuseWordOverPaidChain, watchRetryChain } from "./proof.ts";
import { lockOrNotFound, move } from "./transitions.ts";

/** SIMs the caller's grant assigns it (from fleet); none are needed for the fleet-wide callers. */
export async function grantedSims(deps: DispatchDeps, actor: Actor): Promise<string[]> {
  if (seesFleet(actor) || !actor.agent_id) return [];
  return (await deps.fleet.agentScope(actor.agent_id)).allowed_sim_ids;
}

/** The unproven operations the filter selects, each with its count of ambiguous messages. */
export async function listUnproven(deps: DispatchDeps, filter: QueueFilter): Promise<UnprovenRecord[]> {
  return unprovenRows(deps.db.em(), filter);
}

/** The operations settled on an agent's word the filter selects. */
export async function listSettledOnWord(deps: DispatchDeps, filter: QueueFilter): Promise<SettledOnWordRecord[]> {
  return settledOnWordRows(deps.db.em(), filter);
}

/** An agent's word on an unproven operation of its scope: arrived or did not arrive. */
export async function settleOperation(
  deps: DispatchDeps,
  actor: Actor,
  operationId: string,
  outcome: "arrived" | "did_not_arrive",
  note: string,
): Promise<OperationRecord> {
  const granted = await grantedSims(deps, actor);
  const now = deps.now();
  const arrived = outcome === "arrived";
  const after = await deps.db.tx(async (em) => {
    const before = await lockOrNotFound(em, operationId);
    check(checkQueueScope(actor, before, granted));
    // After the status rule (move refuses what is not no_evidence): a word that would pay twice.
    if (arrived && before.status === "no_evidence")
      await refuseWordOverPaidChain(em, before, "retry_chain_may_have_paid");
    const op = await move(
      em,
      before,
      { type: "settle", outcome },
      {
        decision: outcome,
        decision_note: note,
        decided_by: actor.agent_id,
        decided_by_name: actor.full_name,
        decided_at: now,
        ...(arrived ? { confirmed_by: "settle" as const } : { failure_reason: "did_not_arrive" }),
      },
      {
        trigger: "settle",
        actor_agent_id: actor.agent_id,
        note,
        decision: outcome,
        failure_reason: "did_not_arrive",
        at: now,
      },
    );
    if (arrived) await watchRetryChain(em, op, { decided_by_name: actor.full_name, decision: "settled arrived" }, now);
    return op;
  });
  deps.published();
  return after;
}

/** An admin's decision on an operation: confirmed or failed. */
export async function arbitrateOperation(
  deps: DispatchDeps,
  actor: Actor,
  operationId: string,
  decision: "confirmed" | "failed",
  note: string,
): Promise<OperationRecord> {
  const now = deps.now();
  const confirmed = decision === "confirmed";
  const after = await deps.db.tx(async (em) => {
    const before = await lockOrNotFound(em, operationId);
    if (confirmed && before.status === "no_evidence")
      await refuseWordOverPaidChain(em, before, "arbitration_retry_chain_may_have_paid");
    const op = await move(
      em,
      before,
      { type: "arbitrate", decision },
      {
        decision,
        decision_note: note,
        decided_by: actor.agent_id,
        decided_by_name: actor.full_name,
        decided_at: now,
        ...(confirmed ? { confirmed_by: "arbitrate" as const } : { failure_reason: "arbitrated_failed" }),
      },
      {
        trigger: "arbitrate",
        actor_agent_id: actor.agent_id,
        note,
        decision,
        failure_reason: "arbitrated_failed",
        at: now,
      },
    );
    if (confirmed)
      await watchRetryChain(em, op, { decided_by_name: actor.full_name, decision: "arbitrated confirmed" }, now);
    return op;
  });
  deps.published();
  return after;
}
