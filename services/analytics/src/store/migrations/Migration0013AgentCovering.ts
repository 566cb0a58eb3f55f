import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * An agent's view over a window (store/rollups.ts, the agent's tables of
 * Migration0007AgentRollups) reads a row per day of the window and per SIM, hour or status, up
 * to the window's year. Those rows are written day after day for every agent, so one agent's
 * are scattered over the heap, about a page a row: its active SIMs read 4,243 heap pages for
 * 10,100 rows at 10,000,000 operations (73 ms cold), its hours 832 pages for 2,401 rows
 * (docs/decisions/history.md, "Buffers per statement"). These indexes hold what each of those
 * three reads takes, so that it reads the index alone (index-only: the rows of a window packed in
 * a few dozen pages):
 *
 * - `agent_sim_daily_active`: the agent's SIMs of each day with transfers (`n > 0`, the read's
 *   own condition);
 * - `agent_hourly_covering`: the agent's hours of each day with their weekday and count;
 * - `agent_op_daily_status`: the agent's statuses of each day with their count.
 *
 * Nothing in the migrator's transaction; after it (kit `openDatabase`) `create index
 * concurrently` ×3: SHARE UPDATE EXCLUSIVE on each table, the consumers' writes and the routes'
 * reads go on. Each is one more entry to write per row version of those rollups (written in the
 * statement that changes an operation). `down()` drops them (the schema of
 * Migration0012HandsetOldest).
 */
export class Migration0013AgentCovering extends Migration {
  override name = "Migration0013AgentCovering";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "agent_sim_daily_active", on: `analytics.agent_sim_daily (agent_id, local_day, sim_id) where n > 0` },
    {
      name: "agent_hourly_covering",
      on: `analytics.agent_hourly (agent_id, local_day) include (local_dow, local_hour, n)`,
    },
    { name: "agent_op_daily_status", on: `analytics.agent_op_daily (agent_id, local_day) include (status, n)` },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists analytics.agent_op_daily_status`);
    this.addSql(`drop index if exists analytics.agent_hourly_covering`);
    this.addSql(`drop index if exists analytics.agent_sim_daily_active`);
  }
}
