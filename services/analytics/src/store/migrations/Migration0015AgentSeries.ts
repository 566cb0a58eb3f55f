import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * An agent's series (store/rollups.ts `dailyRows`: a point a day, or a week at 365 days) reads a
 * row of `agent_op_daily` per day and status of the window: its answer's days, up to a year.
 * Those rows are written day after day for every agent, about a heap page a row (1,922 rows on
 * 998 heap pages for an agent's year at 1,000,000 operations, read cold), where the agent's
 * statuses read the same rows index-only since Migration0013AgentCovering
 * (`agent_op_daily_status`, holding `status` and `n`). `agent_op_daily_series` holds what both
 * reads take (`status`, `is_transfer`, `auto`, `n`, `montant`), so the series is read from the
 * index alone too; it takes the place of `agent_op_daily_status` (one index written per row
 * version, not two).
 *
 * Nothing in the migrator's transaction; after it (kit `openDatabase`) `create index
 * concurrently` then `drop index concurrently`: SHARE UPDATE EXCLUSIVE on agent_op_daily, the
 * consumers' writes and the routes' reads go on. `down()` puts back the schema of
 * Migration0014MonthlyRollups.
 */
export class Migration0015AgentSeries extends Migration {
  override name = "Migration0015AgentSeries";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "agent_op_daily_series",
      on: `analytics.agent_op_daily (agent_id, local_day) include (status, is_transfer, auto, n, montant)`,
    },
  ];

  static readonly concurrentDrops: readonly string[] = ["agent_op_daily_status"];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built and dropped after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists analytics.agent_op_daily_series`);
    this.addSql(
      `create index if not exists agent_op_daily_status on analytics.agent_op_daily (agent_id, local_day) include (status, n)`,
    );
  }
}
