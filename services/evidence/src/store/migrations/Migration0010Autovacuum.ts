import {
  HISTORY_TABLE_AUTOVACUUM,
  HISTORY_TABLE_AUTOVACUUM_RESET,
  Migration,
  outboxAutovacuumResetSql,
  outboxAutovacuumSql,
} from "@transferops/kit";

/**
 * Autovacuum of evidence.messages (by a share of 1 % where the defaults wait for 20 %) and the outbox (by count) (docs/decisions/history.md, "Autovacuum"). `alter table ... set (...)`
 * takes SHARE UPDATE EXCLUSIVE: no read or write waits on it. `down()` resets both to the
 * server's defaults (the schema of Migration0009InboxPurge; the same lock).
 */
export class Migration0010Autovacuum extends Migration {
  override name = "Migration0010Autovacuum";

  up(): void {
    this.addSql(`alter table evidence.messages set (${HISTORY_TABLE_AUTOVACUUM})`);
    for (const sql of outboxAutovacuumSql("evidence")) this.addSql(sql);
  }

  override down(): void {
    this.addSql(`alter table evidence.messages reset (${HISTORY_TABLE_AUTOVACUUM_RESET})`);
    for (const sql of outboxAutovacuumResetSql("evidence")) this.addSql(sql);
  }
}
