import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The fleet's arbitration queue (no scope) walks its contradicted part newest first and stops at
 * its page, as an agent's does SIM by SIM since Migration0017ScopedContradicted (store/queues.ts,
 * `listUnproven`; docs/decisions/history.md, "Where the goal stands"):
 *
 * - `operations_contradicted_page`: the operations an operator's message contradicts, in the
 *   queue's order (`finished_at desc, operation_id`), with what its filter reads (`status`,
 *   `started_at`, `origin`, `op_type`) and the page's `contradicting_message_id` in the entry.
 *   `operations_contradicted` is keyed on `finished_at` alone and holds none of them: under the
 *   generic plan, which counts a few rows in any window, the part fetched every contradicted
 *   operation of the window from the table and sorted them for a page (1,719 rows, 1,617 pages
 *   from disk, 172.8 ms at 10,000,000 operations).
 *
 * Partial on `contradicting_message_id is not null`: a handful of entries (about 6 in 10,000
 * transfers). Built concurrently (SHARE UPDATE EXCLUSIVE: creates, claims and proofs go on while
 * it builds); until built, the queue reads as before. `down()` drops it.
 */
export class Migration0018ContradictedPage extends Migration {
  override name = "Migration0018ContradictedPage";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_contradicted_page",
      on: `dispatch.operations (finished_at desc, operation_id) include (op_type, status, started_at, origin, contradicting_message_id)
        where contradicting_message_id is not null`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the index is built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_contradicted_page`);
  }
}
