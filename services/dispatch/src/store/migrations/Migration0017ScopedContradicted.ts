import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The arbitration queue's contradicted part in an agent's scope, read SIM by SIM as its backlog
 * part is since Migration0016ScopedQueues (store/queues.ts, `scopedUnprovenPage`; docs/decisions/
 * history.md, "An agent's page, SIM by SIM"):
 *
 * - `operations_contradicted_sim`, `operations_contradicted_agent`: the operations an operator's
 *   message contradicts (a transfer said failed that a message proves, a `no_evidence` one a
 *   message then proved), by SIM and by agent, newest finished first. An agent's queue walked
 *   the fleet's (`operations_contradicted`) and read each row to keep its scope's: every
 *   contradicted operation of the window (of the history, with `all`) when the scope has fewer
 *   than a page, as nearly every scope has (about 6 in 10,000 transfers are contradicted).
 *
 * Partial on `contradicting_message_id is not null`, as `operations_contradicted`: a handful of
 * entries. What the queue reads besides (`status`, `started_at`, `origin`, `op_type`,
 * `contradicting_message_id`) is in the entry, so a grant of many SIMs reads entries, not rows
 * (index-only; at 10,000,000 operations an agent's part read 52 pages, against 804 for the
 * fleet's walk). Built concurrently (SHARE UPDATE EXCLUSIVE: creates, claims and proofs go on
 * while they build); until built, the queue reads as before. `down()` drops them.
 */
export class Migration0017ScopedContradicted extends Migration {
  override name = "Migration0017ScopedContradicted";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_contradicted_sim",
      on: `dispatch.operations (sim_id, finished_at desc, operation_id) include (op_type, status, started_at, origin, contradicting_message_id)
        where contradicting_message_id is not null`,
    },
    {
      name: "operations_contradicted_agent",
      on: `dispatch.operations (agent_id, finished_at desc, operation_id) include (op_type, status, started_at, origin, contradicting_message_id)
        where contradicting_message_id is not null`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_contradicted_sim`);
    this.addSql(`drop index if exists dispatch.operations_contradicted_agent`);
  }
}
