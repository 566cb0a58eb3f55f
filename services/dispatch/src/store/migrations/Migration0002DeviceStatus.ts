import { Migration } from "@transferops/kit";

/**
 * Handset statuses as fleet publishes them (DeviceChanged): a handset frozen by the
 * circuit breaker is handed no queued work until it is restored. Only frozen handsets
 * need a row; an unknown handset is active.
 */
export class Migration0002DeviceStatus extends Migration {
  override name = "Migration0002DeviceStatus";

  up(): void {
    this.addSql(`create table dispatch.devices (
      device_id text primary key,
      status text not null,
      changed_at timestamptz not null default now()
    )`);
  }
}
