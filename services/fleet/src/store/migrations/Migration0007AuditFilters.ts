import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The audit log's filters (store/agents.ts, `listAudit`; GET /v1/audit): the page is the newest
 * entries first (`id desc`), and with a filter on `action`, `target_id` or `actor_agent_id` the
 * only path was the primary key walked newest first, keeping the matching rows: a rare or absent
 * action, a subject's or an agent's entries read the whole log (at 1,000,000 operations
 * `action = 'sim.create'` read 100,103 rows for 4; docs/decisions/history.md). Each index starts
 * with its filter's column and ends with the page's order, so a filtered page reads its entries
 * newest first and stops at the page. Combinations are served by one of them (the most selective
 * the planner sees), the other filters checked on its rows (docs/decisions/fleet.md, "Audit
 * log"). Built concurrently: SHARE UPDATE EXCLUSIVE on fleet.audit_log, whose reads and writes
 * go on while they build; each costs an entry per audit row (`target_id` and `actor_agent_id`
 * only where not null).
 *
 * `down()` puts back the schema of Migration0006Autovacuum exactly (the indexes dropped; the
 * test compares the schema dumps). `drop index` takes ACCESS EXCLUSIVE on fleet.audit_log until
 * it commits (milliseconds).
 */
export class Migration0007AuditFilters extends Migration {
  override name = "Migration0007AuditFilters";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "audit_log_action", on: `fleet.audit_log (action, id)` },
    { name: "audit_log_target", on: `fleet.audit_log (target_id, id) where target_id is not null` },
    { name: "audit_log_actor", on: `fleet.audit_log (actor_agent_id, id) where actor_agent_id is not null` },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists fleet.audit_log_action`);
    this.addSql(`drop index if exists fleet.audit_log_target`);
    this.addSql(`drop index if exists fleet.audit_log_actor`);
  }
}
