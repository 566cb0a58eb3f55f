import { Migration, outboxAutovacuumResetSql, outboxAutovacuumSql } from "@transferops/kit";

/**
 * Autovacuum of the outbox, by count (docs/decisions/history.md, "Autovacuum"). `alter table ... set (...)`
 * takes SHARE UPDATE EXCLUSIVE: no read or write waits on it. `down()` resets it to the server's
 * defaults (the schema of Migration0004InboxPurge; the same lock).
 */
export class Migration0005Autovacuum extends Migration {
  override name = "Migration0005Autovacuum";

  up(): void {
    for (const sql of outboxAutovacuumSql("messaging")) this.addSql(sql);
  }

  override down(): void {
    for (const sql of outboxAutovacuumResetSql("messaging")) this.addSql(sql);
  }
}
