import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * A SIM's operations newest first: the list's `sim_id` filter (store/operations.ts,
 * `listOperations`) and the SIM's history (store/fleet-facing.ts, `simActivity`) read a
 * page, where no index had the SIM's operations in time order: the planner either sorted
 * every operation the SIM ever had or walked the whole fleet's newest until a page of the
 * SIM's was found (npm run bench:history; docs/decisions/history.md).
 *
 * Built concurrently (SHARE UPDATE EXCLUSIVE: creates, claims and proofs go on while it
 * builds). One more entry per written row version of an operation: the price of a bounded
 * SIM page (docs/decisions/dispatch.md, "Cost of one transfer").
 */
export class Migration0008SimCreatedIndex extends Migration {
  override name = "Migration0008SimCreatedIndex";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "operations_sim_created", on: `dispatch.operations (sim_id, created_at desc, operation_id desc)` },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the index is built after it (openDatabase).
  }
}
