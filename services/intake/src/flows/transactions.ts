import { isUuid, type EntityManager } from "@transferops/kit";
import { canSee, refusal, type Actor } from "../domain/index.ts";
import { findTransaction, type TransactionRecord } from "../store/transactions.ts";

// The transaction lookups and guards that the board's actions and the launch share.

const notFound = (id: string) =>
  refusal("transaction_not_found", `Transaction ${id} not found`, { transaction_id: id });

/** The transaction as the actor may see it (locked for update when asked); 404 otherwise. */
export async function visibleTransaction(
  em: EntityManager,
  actor: Actor,
  id: string,
  lock = false,
): Promise<TransactionRecord> {
  if (!isUuid(id)) throw refusal("invalid_request", "transaction_id must be a UUID", { field: "transaction_id" });
  const t = await findTransaction(em, id, lock);
  if (!t || !canSee(actor, t)) throw notFound(id);
  return t;
}

export function requirePending(t: TransactionRecord): void {
  if (t.state !== "pending") {
    throw refusal("transaction_not_pending", `Transaction ${t.id} is ${t.state}, not pending`, {
      transaction_id: t.id,
      state: t.state,
    });
  }
}
