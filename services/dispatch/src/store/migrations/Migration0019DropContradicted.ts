import { Migration } from "@transferops/kit";

/**
 * `operations_contradicted` (Migration0007HeldDebits, keyed on `finished_at` alone) is read by
 * nothing since Migration0018ContradictedPage: the fleet's arbitration queue walks
 * `operations_contradicted_page`, an agent's `operations_contradicted_sim` and
 * `operations_contradicted_agent`, and the same partial predicate leads the page index with
 * `finished_at`, so a read that could use the old index can use it too (docs/decisions/history.md,
 * "Per table"). Dropped, one entry fewer for each contradicted operation's writes.
 *
 * Dropped concurrently (`drop index concurrently`, SHARE UPDATE EXCLUSIVE, after the
 * transactional migrations: creates, claims and proofs go on meanwhile; a plain `drop index`
 * would take ACCESS EXCLUSIVE and stop them). `down()` builds it again.
 */
export class Migration0019DropContradicted extends Migration {
  override name = "Migration0019DropContradicted";

  static readonly concurrentDrops: readonly string[] = ["operations_contradicted"];

  up(): void {
    // Nothing in the migrator's transaction: the index is dropped after it (openDatabase).
  }

  override down(): void {
    this.addSql(
      `create index if not exists operations_contradicted on dispatch.operations (finished_at) where contradicting_message_id is not null`,
    );
  }
}
