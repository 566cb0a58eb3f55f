import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The unproven operations in the arbitration queue's order (store/queues.ts, `listUnproven`):
 * `operations_no_evidence_page` (`finished_at desc, operation_id`, on `no_evidence`) replaces
 * `operations_no_evidence` (`finished_at`). The queue's branch for them is ordered by
 * `finished_at desc, operation_id`; on `finished_at` alone the ties needed a sort, and the
 * queue's statement is prepared: under its generic plan, which guesses a window of a few rows,
 * the planner sorted the window's whole backlog rather than walking it. An agent's scope (its
 * own operations and its grant's SIMs) then read every unproven entry of the 30-day window:
 * 5,919 rows for 50 at 1,000,000 operations, 202 ms (docs/decisions/history.md, "Found by the
 * small history"); in proportion to the window's traffic, 10 times more at the rate. In
 * the index's order the branch is a walk that stops at its page: a fleet page reads 50 entries,
 * an agent's about 50 over its share of the fleet.
 *
 * Built and dropped concurrently after the migrations (kit `concurrentIndexes`,
 * `concurrentDrops`; the build first since Migration0016ScopedQueues, so the old index serves the
 * queue until the new one is built): SHARE UPDATE EXCLUSIVE on dispatch.operations, whose reads
 * and writes go on meanwhile. The same entries as the index it replaces (one a transfer left
 * unproven), each an id wider.
 *
 * `down()` puts back the schema before it (the test compares the schema dumps): `drop index`
 * and `create index` (ACCESS EXCLUSIVE, then SHARE until they commit). Not part of a release: it
 * lets the benchmark run the migration again on a history.
 */
export class Migration0015UnprovenOrder extends Migration {
  override name = "Migration0015UnprovenOrder";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_no_evidence_page",
      on: `dispatch.operations (finished_at desc, operation_id) where status = 'no_evidence'`,
    },
  ];

  static readonly concurrentDrops: readonly string[] = ["operations_no_evidence"];

  up(): void {
    // Nothing in the migrator's transaction: the index is built and the old one dropped after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_no_evidence_page`);
    this.addSql(
      `create index operations_no_evidence on dispatch.operations (finished_at) where status = 'no_evidence'`,
    );
  }
}
