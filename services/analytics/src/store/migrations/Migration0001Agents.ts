import { Migration, outboxInboxSql } from "@transferops/kit";

/** Analytics' projection of fleet agents, and its outbox/inbox. */
export class Migration0001Agents extends Migration {
  override name = "Migration0001Agents";

  up(): void {
    this.addSql(`create table analytics.agents (
      agent_id uuid primary key,
      full_name text not null,
      role text not null,
      is_active boolean not null,
      updated_at timestamptz not null
    )`);
    for (const sql of outboxInboxSql("analytics")) this.addSql(sql);
  }
}
