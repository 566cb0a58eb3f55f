import { Migration } from "@transferops/kit";
import { COUNT_CHAIN_CHANGE, localDaySql } from "./Migration0011DayChains.ts";

/**
 * Today's balance account kept up to a time (docs/decisions/history.md, "Today's balance
 * account: kept up to a time"). Today's reconciliation summed the day's every message at each
 * read: 158 ms p50 at a third of a day of 100,000 messages, growing with the day. A closed
 * day's sums are kept whole (Migration0011DayChains); today's messages are still arriving, so
 * what is kept is the day's run (domain/balance-chain.ts DayRun) over its chain messages
 * received before `running_until`, and a read completes it from the messages received since
 * (store/day-chains.ts, `todaysRuns`).
 *
 * The run holds only while no chain message received before `running_until` changed. The
 * trigger that counts a day's changes (Migration0011DayChains) now also drops the run, in the
 * same upsert of the same row, when the message it counts was received before it, as it was
 * or as it is now (a late message, a new reading, a message moved to another SIM or day). A
 * message received at or after `running_until` changes nothing kept: it is read at the next
 * read. A run written from a read that a change overtook is not kept (the read's count, as for
 * a closed day's sums).
 *
 * On a live history: `add column` without a default writes no row (ACCESS EXCLUSIVE on
 * day_chains for the catalog change only: a submission's trigger waits for it, no longer);
 * `create or replace function` takes no lock on a table (the triggers call the function by
 * name and see the new body at their next call). `down()` puts the function back and drops the
 * columns.
 */
export class Migration0016TodayRuns extends Migration {
  override name = "Migration0016TodayRuns";

  up(): void {
    this.addSql(`alter table evidence.day_chains add column running jsonb, add column running_until timestamptz`);
    this.addSql(`comment on column evidence.day_chains.running is
      'Today''s sums over its chain messages received before running_until (store/day-chains.ts)'`);
    // Dropped when the message counted was received before the run's time (`at`: its
    // received_at, as it was or as it is now).
    const drop = (at: string) => `running = case when ${at} then null else c.running end,
              running_until = case when ${at} then null else c.running_until end`;
    const sameDay = `(old.sim_id, ${localDaySql("old.received_at")}) = (new.sim_id, ${localDaySql("new.received_at")})`;
    this.addSql(`create or replace function evidence.count_chain_change() returns trigger language plpgsql as $$
      begin
        if tg_op = 'UPDATE' and not ${sameDay} then
          insert into evidence.day_chains as c (sim_id, day, changes) values (old.sim_id, ${localDaySql("old.received_at")}, 1)
            on conflict (sim_id, day) do update set changes = c.changes + 1,
              ${drop("old.received_at < c.running_until")};
        end if;
        if tg_op = 'UPDATE' and ${sameDay} then
          insert into evidence.day_chains as c (sim_id, day, changes) values (new.sim_id, ${localDaySql("new.received_at")}, 1)
            on conflict (sim_id, day) do update set changes = c.changes + 1,
              ${drop("least(old.received_at, new.received_at) < c.running_until")};
        else
          insert into evidence.day_chains as c (sim_id, day, changes) values (new.sim_id, ${localDaySql("new.received_at")}, 1)
            on conflict (sim_id, day) do update set changes = c.changes + 1,
              ${drop("new.received_at < c.running_until")};
        end if;
        return null;
      end $$`);
  }

  override down(): void {
    this.addSql(
      `create or replace function evidence.count_chain_change() returns trigger language plpgsql as $$${COUNT_CHAIN_CHANGE}$$`,
    );
    this.addSql(`alter table evidence.day_chains drop column running, drop column running_until`);
  }
}
