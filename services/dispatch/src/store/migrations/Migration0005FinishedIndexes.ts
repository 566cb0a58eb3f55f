import { Migration } from "@transferops/kit";

/**
 * The two "last finish" indexes hold only finished operations. Their one reader each (the
 * poll's cooldown, `deviceQueueState`; selection's SIM load, `simLoads`) asks for the newest
 * entry with `finished_at is not null`, so an entry without a finish was never read: yet
 * the create's insert wrote one in `operations_sim_finished`, and the claim's update one in
 * each (no update of an operation is a HOT one). Three index entries of about 35 a transfer
 * writes are gone (docs/decisions/dispatch.md, "Cost of one transfer").
 */
export class Migration0005FinishedIndexes extends Migration {
  override name = "Migration0005FinishedIndexes";

  up(): void {
    this.addSql(`drop index dispatch.operations_device_finished`);
    this.addSql(
      `create index operations_device_finished on dispatch.operations (device_id, finished_at)
        where started_at is not null and finished_at is not null`,
    );
    this.addSql(`drop index dispatch.operations_sim_finished`);
    this.addSql(
      `create index operations_sim_finished on dispatch.operations (sim_id, finished_at) where finished_at is not null`,
    );
  }
}
