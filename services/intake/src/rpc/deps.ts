import { isUuid, type Caller, type Database, type DomainError, type Logger } from "@transferops/kit";
import { refusal, type Actor } from "../domain/index.ts";
import type { IntakeConfig } from "../config.ts";
import { findTransaction, type TransactionRecord } from "../store/transactions.ts";
import { canSee } from "../domain/index.ts";
import type { EntityManager } from "@transferops/kit";
import type { Ports } from "./ports.ts";

export interface IntakeDeps {
  db: Database;
  config: IntakeConfig;
  ports: Ports;
  log: Logger;
  /** Asks the outbox relay for a pass after a commit. */
  published(): void;
}

export function actorOf(caller: Caller | undefined): Actor {
  return {
    kind: caller?.kind ?? "",
    agent_id: caller?.agentId ?? "",
    role: caller?.role ?? "",
    is_active: caller?.isActive ?? false,
    full_name: caller?.fullName ?? "",
  };
}

export function check(error: DomainError | null): void {
  if (error) throw error;
}

export const notFound = (id: string) =>
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
