import { Migration } from "@transferops/kit";
import { REBUILD, REBUILD_MESSAGES } from "./Migration0011WaitingMessages.ts";

/** An agent's dismissed messages summed from its per-day counts: the fill, and `rebuild_load_counts()`'s. */
const FILL = `insert into analytics.agent_dismissed_counts (agent_id, dismissed)
      select agent_id, sum(dismissed) from analytics.agent_msg_daily group by agent_id having sum(dismissed) <> 0`;

/**
 * An agent's `dismissed` in the load block (store/report.ts `messageLoad`) summed the agent's
 * rows of `agent_msg_daily_monthly` (Migration0014MonthlyRollups): a row per month of history,
 * 12 more a year, the last load count that grew with the history (docs/decisions/history.md,
 * "Not bounded yet"). It is now kept in `agent_dismissed_counts`, a row per agent, read by its
 * primary key whatever the history.
 *
 * Kept by a row trigger on `agent_msg_daily`, as its monthly copy is (Migration0014): the
 * per-day counts already join a message to its operation's agent from both sides, under the
 * advisory lock on the operation's id (Migration0007AgentRollups), so the agent's total is the
 * sum of its days whatever writes them. Its own table, not a column of `agent_load_counts`:
 * that row is written by the operations' consumer at each change of an operation, and a second
 * writer, the messages' consumer, would take it in another order than the advisory lock's. The
 * triggers fire only when a day's `dismissed` changes (a dismissal of a message tied to an
 * operation, or such a message linked or unlinked), not at each message. `truncate` of the
 * daily table empties it; `rebuild_load_counts()` fills it from the daily table (a bulk load
 * runs the rebuilds with triggers off).
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on agent_msg_daily until the
 * migration commits (the routes' reads go on; the consumers' writes to it wait); the fill reads
 * the per-day counts (a row per agent and day with messages), not the messages. `create or
 * replace function` locks no table. `down()` puts back the schema of Migration0015AgentSeries
 * exactly (Migration0011WaitingMessages' `rebuild_load_counts()`, to the space); its `drop
 * trigger`s take ACCESS EXCLUSIVE on agent_msg_daily until the commit that follows.
 */
export class Migration0016AgentDismissed extends Migration {
  override name = "Migration0016AgentDismissed";

  up(): void {
    this.addSql(`create table analytics.agent_dismissed_counts (
      agent_id uuid primary key,
      dismissed bigint not null
    )`);
    this.addSql(`create function analytics.agent_dismissed_counts_keep() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then
          update analytics.agent_dismissed_counts set dismissed = dismissed - old.dismissed where agent_id = old.agent_id;
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          insert into analytics.agent_dismissed_counts as c (agent_id, dismissed) values (new.agent_id, new.dismissed)
          on conflict (agent_id) do update set dismissed = c.dismissed + excluded.dismissed;
        end if;
        return null;
      end $$`);
    this.addSql(`create trigger agent_dismissed_counts_insert after insert on analytics.agent_msg_daily
      for each row when (new.dismissed <> 0) execute function analytics.agent_dismissed_counts_keep()`);
    this.addSql(`create trigger agent_dismissed_counts_delete after delete on analytics.agent_msg_daily
      for each row when (old.dismissed <> 0) execute function analytics.agent_dismissed_counts_keep()`);
    this.addSql(`create trigger agent_dismissed_counts_update
      after update of agent_id, dismissed on analytics.agent_msg_daily
      for each row when ((old.agent_id, old.dismissed) is distinct from (new.agent_id, new.dismissed))
      execute function analytics.agent_dismissed_counts_keep()`);
    this.addSql(`create function analytics.agent_dismissed_counts_clear() returns trigger language plpgsql as $$
      begin
        delete from analytics.agent_dismissed_counts;
        return null;
      end $$`);
    this.addSql(`create trigger agent_dismissed_counts_clear after truncate on analytics.agent_msg_daily
      for each statement execute function analytics.agent_dismissed_counts_clear()`);
    this.addSql(
      REBUILD(
        REBUILD_MESSAGES,
        `
      truncate analytics.agent_dismissed_counts;
      ${FILL};`,
      ),
    );
    this.addSql(FILL);
  }

  override down(): void {
    this.addSql(REBUILD(REBUILD_MESSAGES));
    for (const t of ["insert", "delete", "update", "clear"]) {
      this.addSql(`drop trigger agent_dismissed_counts_${t} on analytics.agent_msg_daily`);
    }
    this.addSql(`drop function analytics.agent_dismissed_counts_keep(), analytics.agent_dismissed_counts_clear()`);
    this.addSql(`drop table analytics.agent_dismissed_counts`);
  }
}
