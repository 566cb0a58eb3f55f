import { Migration, outboxAutovacuumSql } from "@transferops/kit";

/**
 * Autovacuum of the outbox, by count (docs/decisions/history.md, "Autovacuum"). `alter table ... set (...)`
 * takes SHARE UPDATE EXCLUSIVE: no read or write waits on it.
 */
export class Migration0006Autovacuum extends Migration {
  override name = "Migration0006Autovacuum";

  up(): void {
    for (const sql of outboxAutovacuumSql("fleet")) this.addSql(sql);
  }
}
