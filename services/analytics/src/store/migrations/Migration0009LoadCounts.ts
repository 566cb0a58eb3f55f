import { Migration, type ConcurrentIndex } from "@transferops/kit";

/** An operation in the unproven backlog (a transfer nobody proved or arbitrated yet). */
const UNPROVEN = (r: string) => `${r}status = 'no_evidence' and ${r}is_transfer`;

/**
 * The load block's counts (store/report.ts `loadFigures`, `messageLoad`) counted rows whose
 * share grows with the history: the unproven backlog (`unproven_waiting`, 1.8 s fleet-wide and
 * 111 ms for one agent at 4,000,000 operations), every operation a person settled (`settled`)
 * and every dismissed message (`dismissed`), all time (docs/decisions/history.md). They are now
 * kept at each change:
 *
 * - `agent_load_counts`: per agent, its unproven backlog and its settled operations. An agent's
 *   view reads its row, the fleet's sums a row per agent (the scopes are the fleet and an agent:
 *   store/filters.ts `agentFilter`).
 * - `message_load_counts`: one row, the fleet's dismissed messages. One row is no contention
 *   here: the messages' batches apply one at a time under the consumer's advisory lock
 *   (events/index.ts), and nothing else writes analytics.messages.
 *
 * Kept by triggers in the statement that changes a row, like every rollup (Migration0007AgentRollups);
 * an update that changes no column they read fires nothing. `rebuild_rollups()` rebuilds them
 * (`rebuild_load_counts()`).
 *
 * `oldest_unproven` stays a min(): the fleet's is the first entry of `operations_waiting`, an
 * agent's the first of `operations_agent_waiting` (agent_id first), a partial index of the
 * backlog built concurrently after this migration (SHARE UPDATE EXCLUSIVE: the consumers' writes
 * go on); until it is built an agent's min walks `operations_waiting`.
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on analytics.operations and
 * analytics.messages until this migration commits; the fill reads the backlog and the settled
 * operations through their partial indexes (`operations_waiting`, `operations_settled`) and the
 * dismissed messages through `messages_dismissed`: the backlog and the settled and dismissed rows,
 * not the history. The consumers' writes wait that long, the routes' reads go on.
 *
 * `down()` puts back the schema of Migration0008DropUnreadIndexes exactly (Migration0007's
 * `rebuild_rollups()`, to the space; the test compares the schema dumps); its `drop trigger`s
 * and `drop index` take ACCESS EXCLUSIVE on the tables until the commit that follows.
 */
export class Migration0009LoadCounts extends Migration {
  override name = "Migration0009LoadCounts";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_agent_waiting",
      on: `analytics.operations (agent_id, coalesce(finished_at, created_at)) where ${UNPROVEN("")}`,
    },
  ];

  up(): void {
    this.addSql(`create table analytics.agent_load_counts (
      agent_id uuid primary key,
      unproven bigint not null,
      settled bigint not null
    )`);
    this.addSql(`create table analytics.message_load_counts (
      one boolean primary key default true check (one),
      dismissed bigint not null
    )`);
    this.addSql(`create function analytics.load_counts_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then
          update analytics.agent_load_counts set unproven = unproven - (${UNPROVEN("old.")})::int,
            settled = settled - (old.settled_by_hand is not null)::int where agent_id = old.agent_id;
        end if;
        if tg_op in ('INSERT', 'UPDATE') then
          insert into analytics.agent_load_counts as c (agent_id, unproven, settled)
          values (new.agent_id, (${UNPROVEN("new.")})::int, (new.settled_by_hand is not null)::int)
          on conflict (agent_id) do update set unproven = c.unproven + excluded.unproven, settled = c.settled + excluded.settled;
        end if;
        return null;
      end $$`);
    this.addSql(`create function analytics.message_load_counts_trigger() returns trigger language plpgsql as $$
      begin
        update analytics.message_load_counts
           set dismissed = dismissed
             + case when tg_op in ('INSERT', 'UPDATE') and new.dismissed_at is not null then 1 else 0 end
             - case when tg_op in ('UPDATE', 'DELETE') and old.dismissed_at is not null then 1 else 0 end;
        return null;
      end $$`);
    this.addSql(`create trigger load_counts after insert or delete on analytics.operations
      for each row execute function analytics.load_counts_trigger()`);
    this.addSql(`create trigger load_counts_update after update of agent_id, status, is_transfer, settled_by_hand
      on analytics.operations for each row
      when ((old.agent_id, ${UNPROVEN("old.")}, old.settled_by_hand is null) is distinct from
            (new.agent_id, ${UNPROVEN("new.")}, new.settled_by_hand is null))
      execute function analytics.load_counts_trigger()`);
    this.addSql(`create trigger message_load_counts after insert or delete on analytics.messages
      for each row execute function analytics.message_load_counts_trigger()`);
    this.addSql(`create trigger message_load_counts_update after update of dismissed_at on analytics.messages
      for each row when ((old.dismissed_at is null) <> (new.dismissed_at is null))
      execute function analytics.message_load_counts_trigger()`);
    this.addSql(`create function analytics.rebuild_load_counts() returns void language sql as $$
      truncate analytics.agent_load_counts, analytics.message_load_counts;
      insert into analytics.agent_load_counts (agent_id, unproven, settled)
      select agent_id, sum(u), sum(s) from (
        select agent_id, 1 as u, 0 as s from analytics.operations where ${UNPROVEN("")}
        union all
        select agent_id, 0, 1 from analytics.operations where settled_by_hand is not null) x
      group by agent_id;
      insert into analytics.message_load_counts (dismissed)
      select count(*) from analytics.messages where dismissed_at is not null;
    $$`);
    this.addSql(`select analytics.rebuild_load_counts()`);
    this.addSql(`create or replace function analytics.rebuild_rollups() returns void language sql as $$
      select analytics.rebuild_day_rollups();
      select analytics.rebuild_amount_counts();
      select analytics.rebuild_agent_rollups();
      select analytics.rebuild_load_counts();
    $$`);
  }

  override down(): void {
    this.addSql(`drop index if exists analytics.operations_agent_waiting`);
    // Migration0007AgentRollups' text, to the space.
    this.addSql(`create or replace function analytics.rebuild_rollups() returns void language sql as $$
      select analytics.rebuild_day_rollups();
      select analytics.rebuild_amount_counts();
      select analytics.rebuild_agent_rollups();
    $$`);
    this.addSql(`drop function analytics.rebuild_load_counts()`);
    this.addSql(`drop trigger message_load_counts_update on analytics.messages`);
    this.addSql(`drop trigger message_load_counts on analytics.messages`);
    this.addSql(`drop trigger load_counts_update on analytics.operations`);
    this.addSql(`drop trigger load_counts on analytics.operations`);
    this.addSql(`drop function analytics.message_load_counts_trigger()`);
    this.addSql(`drop function analytics.load_counts_trigger()`);
    this.addSql(`drop table analytics.agent_load_counts, analytics.message_load_counts`);
  }
}
