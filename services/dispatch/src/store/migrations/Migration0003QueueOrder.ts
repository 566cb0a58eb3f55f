import { Migration } from "@transferops/kit";

/**
 * A claim takes the device's oldest queued operation, ties broken by id. The queued index
 * held only `created_at`, so each claim sorted the first group of entries of equal time
 * prefix before locking one (an incremental sort); with the id in the index, the first
 * entry it can lock is the answer, in index order.
 */
export class Migration0003QueueOrder extends Migration {
  override name = "Migration0003QueueOrder";

  up(): void {
    this.addSql(`drop index dispatch.operations_queued_by_device`);
    this.addSql(
      `create index operations_queued_by_device on dispatch.operations (device_id, created_at, operation_id) where status = 'queued'`,
    );
  }
}
