import { fromTs, on, Topics, type EntityManager, type EventMeta } from "@transferops/kit";
import { OperationChangedSchema, type OperationChanged } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { settles, transactionIdOf } from "../domain/index.ts";
import { findTransaction, updateWhere } from "../store/transactions.ts";
import type { Ports } from "../flows/ports.ts";
import { publishTransactionChange } from "./transactions.ts";

export const operationTopics = [Topics.operations];

/** Who settled, when no agent did (operator proof, handset outcome, sweep). */
export const SYSTEM_SETTLER = { id: "system", name: "System" };

/**
 * Settlement: a launched transaction becomes `done` when its operation reaches a
 * terminal status. OperationChanged reports every transition with its actor; dispatch
 * publishes the public OperationConfirmed / OperationFailed beside it, in the same
 * outbox transaction and under the same key, so they add nothing here. The inbox makes a
 * redelivery a no-op, and `settles` makes a repeated status one too.
 */
export function operationHandlers(ports: Ports) {
  return [
    on(
      OperationChangedSchema,
      (em, event, meta) => settleByOperation(em, event, meta, ports),
      // Most operations are not a transaction's (created on the board, by an API key): their
      // changes cost intake no transaction at all.
      (event) => transactionOf(event) !== null,
    ),
  ];
}

function transactionOf(event: OperationChanged): string | null {
  return event.operation ? transactionIdOf(event.operation.requestId) : null;
}

async function settleByOperation(em: EntityManager, event: OperationChanged, meta: EventMeta, ports: Ports) {
  const op = event.operation;
  const id = transactionOf(event);
  if (!op || !id) return;
  const t = await findTransaction(em, id, true);
  if (!t || (t.operation_id !== null && t.operation_id !== op.operationId)) return;
  if (!settles(t.state, t.outcome, op.status)) return;
  const agentId = event.actorAgentId;
  const name = agentId ? ((await ports.agentName(agentId)) ?? "") : SYSTEM_SETTLER.name;
  const after = await updateWhere(em, "board", t.id, {
    state: "done",
    outcome: op.status,
    operation_id: op.operationId,
    settled_at: fromTs(event.changedAt) ?? meta.occurredAt,
    settled_by: agentId || SYSTEM_SETTLER.id,
    settled_by_name: name,
  });
  await publishTransactionChange(em, after!, { trigger: "settle", previousState: t.state, actorAgentId: agentId });
}
