import { Migration } from "@transferops/kit";

/** A message of the unmatched queue (store/report.ts `WAITING_MESSAGE`; the `messages_waiting` index's predicate). */
const WAITING = (r: string) => `(${r}operation_id is null and ${r}dismissed_at is null
  and ${r}outcome in ('ambiguous', 'divergent', 'orphan', 'not_correlated')
  and (${r}kind is null or ${r}kind in ('DEP', 'BAL', 'FAIL')))`;

/** The queue counted from the rows, through `messages_waiting`: the fill, and `rebuild_load_counts()`'s. */
const WAITING_COUNT = `select count(*) from analytics.messages where ${WAITING("")}`;

/**
 * The two functions as Migration0009LoadCounts wrote them, to the space, with what this
 * migration adds: `down()` puts back their text (the test compares the schema dumps).
 * `REBUILD`'s `more`, statements after the messages' counts, is what later migrations add
 * (Migration0016AgentDismissed); without it the text is this migration's.
 */
const COUNTING = (
  set: string,
) => `create or replace function analytics.message_load_counts_trigger() returns trigger language plpgsql as $$
      begin
        update analytics.message_load_counts
           set dismissed = dismissed
             + case when tg_op in ('INSERT', 'UPDATE') and new.dismissed_at is not null then 1 else 0 end
             - case when tg_op in ('UPDATE', 'DELETE') and old.dismissed_at is not null then 1 else 0 end${set};
        return null;
      end $$`;
export const REBUILD = (
  messages: string,
  more = "",
) => `create or replace function analytics.rebuild_load_counts() returns void language sql as $$
      truncate analytics.agent_load_counts, analytics.message_load_counts;
      insert into analytics.agent_load_counts (agent_id, unproven, settled)
      select agent_id, sum(u), sum(s) from (
        select agent_id, 1 as u, 0 as s from analytics.operations where status = 'no_evidence' and is_transfer
        union all
        select agent_id, 0, 1 from analytics.operations where settled_by_hand is not null) x
      group by agent_id;
      ${messages};${more}
    $$`;

/** What `rebuild_load_counts()` puts in `message_load_counts` since this migration. */
export const REBUILD_MESSAGES = `insert into analytics.message_load_counts (dismissed, waiting)
      select (select count(*) from analytics.messages where dismissed_at is not null), (${WAITING_COUNT})`;

/**
 * The load block's `messages_waiting` (store/report.ts `messageLoad`) counted the unmatched
 * queue through `messages_waiting`: every unresolved message, a backlog that grows with the
 * history since orphans are rarely resolved (276,896 entries, 762 buffers, 78 ms at 10,000,000
 * operations; docs/decisions/history.md). It is now kept at each change, as the fleet's
 * dismissed messages are (Migration0009LoadCounts): a column `waiting` of
 * `message_load_counts`, its one row, by the same trigger, which now also fires on a change of
 * the columns the queue reads (`operation_id`, `outcome`, `kind`). One row is no contention:
 * the messages' batches apply one at a time under the consumer's advisory lock
 * (events/index.ts `oneAtATime`), and nothing else writes analytics.messages.
 * `rebuild_load_counts()` fills it too. The oldest waiting message stays a min(): the first
 * entry of `messages_waiting`, one descent.
 *
 * On a live history: `alter table` takes ACCESS EXCLUSIVE on message_load_counts (one row; the
 * fleet view's read of it waits) and `create or replace trigger` SHARE ROW EXCLUSIVE on
 * analytics.messages (the messages' consumer waits), both until the migration commits; `create
 * or replace function` locks no table. The fill counts the queue through `messages_waiting`:
 * the backlog, not the history (276,896 entries, 762 buffers, 27 ms at 10,000,000 operations;
 * the whole migration 35 ms there).
 *
 * `down()` puts back the schema of Migration0010HandsetDaily exactly (Migration0009LoadCounts'
 * function bodies and trigger, to the space; the test compares the schema dumps); the same
 * locks, and `drop column` ACCESS EXCLUSIVE on message_load_counts.
 */
export class Migration0011WaitingMessages extends Migration {
  override name = "Migration0011WaitingMessages";

  up(): void {
    this.addSql(`alter table analytics.message_load_counts add column waiting bigint not null default 0`);
    this.addSql(
      COUNTING(`,
             waiting = waiting
             + case when tg_op in ('INSERT', 'UPDATE') and ${WAITING("new.")} then 1 else 0 end
             - case when tg_op in ('UPDATE', 'DELETE') and ${WAITING("old.")} then 1 else 0 end`),
    );
    this.addSql(`create or replace trigger message_load_counts_update
      after update of dismissed_at, operation_id, outcome, kind on analytics.messages for each row
      when ((old.dismissed_at is null, ${WAITING("old.")}) is distinct from (new.dismissed_at is null, ${WAITING("new.")}))
      execute function analytics.message_load_counts_trigger()`);
    this.addSql(REBUILD(REBUILD_MESSAGES));
    this.addSql(`update analytics.message_load_counts set waiting = (${WAITING_COUNT})`);
  }

  override down(): void {
    this.addSql(
      REBUILD(`insert into analytics.message_load_counts (dismissed)
      select count(*) from analytics.messages where dismissed_at is not null`),
    );
    this.addSql(`create or replace trigger message_load_counts_update after update of dismissed_at on analytics.messages
      for each row when ((old.dismissed_at is null) <> (new.dismissed_at is null))
      execute function analytics.message_load_counts_trigger()`);
    this.addSql(COUNTING(""));
    this.addSql(`alter table analytics.message_load_counts drop column waiting`);
  }
}
