import { Migration } from "@transferops/kit";

/**
 * Two indexes of analytics.operations no statement reads any more, each written by every
 * insert and by every update that moves its columns: `operations_proof_delay` (the proof-delay
 * percentiles read `delay_seconds` since Migration0005DelaySeconds, whose fill of a database
 * migrated before it still finds the index: this drop runs after every migration) and
 * `operations_confirmed_amount` (the median and largest transfer read `amount_daily` since
 * Migration0006AmountCounts).
 *
 * Dropped concurrently after the migrations (kit `concurrentDrops`): `drop index concurrently`
 * takes SHARE UPDATE EXCLUSIVE on the table, so the consumers' writes and the routes' reads go
 * on while it waits for the transactions that may use the index; a plain `drop index` in the
 * migrator's transaction would hold ACCESS EXCLUSIVE on analytics.operations until the whole
 * migration commits (docs/decisions/history.md, "Migrations on a live history").
 */
export class Migration0008DropUnreadIndexes extends Migration {
  override name = "Migration0008DropUnreadIndexes";

  static readonly concurrentDrops: readonly string[] = ["operations_proof_delay", "operations_confirmed_amount"];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are dropped after it (openDatabase).
  }

  /**
   * The two indexes back as Migration0003Rollups built them, in the migrator's transaction (a
   * plain `create index`: SHARE on analytics.operations, writes wait for the builds). Not part of
   * a release: it lets the benchmark run the migration again on a history.
   */
  override down(): void {
    this.addSql(`create index operations_confirmed_amount on analytics.operations (montant, local_day)
      where is_transfer and status = 'confirmed'`);
    this.addSql(`create index operations_proof_delay on analytics.operations (proof_delay_s, local_day)
      where proof_delay_s is not null`);
  }
}
