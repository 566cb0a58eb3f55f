import { Migration } from "@transferops/kit";
import { DELAY_FINE_LIMIT_S } from "../../domain/delay-histogram.ts";
import { histogramTableSql, NO_SIM, opRollupSql, rebuildRollupsSql } from "./Migration0003Rollups.ts";

/**
 * The fleet view's proof-delay percentiles (median, p90) found their bucket in `delay_hist` and
 * then walked that bucket's entries of `operations_proof_delay` across every day, keeping the
 * window's: a year's operations for a 365-day window when the delays gather in one bucket, as
 * they do (6.2 s cold at 1,000,000 operations; docs/decisions/history.md). `delay_seconds` keeps,
 * per day and bucket, how many delays and their sum, and the percentile is read from the
 * window's sums alone (domain/delay-histogram.ts, its precision): days × buckets rows, never the
 * operations.
 *
 * Buckets: one second wide below DELAY_FINE_LIMIT_S (600 s), then the histogram floors' (about
 * 10 % wide) numbered after them. Kept by triggers in the statement that changes a row, as the
 * other rollups (Migration0003Rollups); `rebuild_rollups()` rebuilds it instead of `delay_hist`, no
 * longer read, kept or rebuilt (dropped here).
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on analytics.operations until
 * this migration commits, and the table is filled from the rows in that time (an index-only scan
 * of `operations_proof_delay`: about a second per million delays): the consumers' writes of
 * analytics.operations wait that long (analytics' lag grows, the events are applied after), the
 * routes' reads go on. `drop table analytics.delay_hist` takes ACCESS EXCLUSIVE on that table
 * alone, which nothing reads any more.
 *
 * `down()` puts back the schema of Migration0004InboxPurge exactly (`delay_hist`, filled from the
 * rows, and Migration0003Rollups' `op_rollup` and `rebuild_rollups()`, to the space; the test
 * compares the schema dumps). The operations are locked against writes first (SHARE ROW
 * EXCLUSIVE, as `up()`), so no row changes between the refill and the old `op_rollup`; the
 * `drop trigger`s at the end take ACCESS EXCLUSIVE, reads wait for the commit that follows.
 */
export class Migration0005DelaySeconds extends Migration {
  override name = "Migration0005DelaySeconds";

  up(): void {
    this.addSql(`create function analytics.delay_bucket(v double precision) returns int immutable language sql as $$
      select case when v < ${DELAY_FINE_LIMIT_S} then floor(v)::int
                  else ${DELAY_FINE_LIMIT_S} + analytics.hist_bucket(v) end
    $$`);
    this.addSql(`create table analytics.delay_seconds (
      local_day date not null,
      bucket int not null,
      n bigint not null,
      sum_s double precision not null,
      primary key (local_day, bucket)
    )`);
    this
      .addSql(`create function analytics.delay_rollup(day date, v double precision, s int) returns void language sql as $$
      insert into analytics.delay_seconds as x (local_day, bucket, n, sum_s)
      values (day, analytics.delay_bucket(v), s, s * v)
      on conflict (local_day, bucket) do update set n = x.n + excluded.n, sum_s = x.sum_s + excluded.sum_s;
    $$`);
    this.addSql(`create function analytics.delay_rollup_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') and old.proof_delay_s is not null then
          perform analytics.delay_rollup(old.local_day, old.proof_delay_s, -1);
        end if;
        if tg_op in ('INSERT', 'UPDATE') and new.proof_delay_s is not null then
          perform analytics.delay_rollup(new.local_day, new.proof_delay_s, 1);
        end if;
        return null;
      end $$`);
    this.addSql(`create trigger delay_rollup after insert or delete on analytics.operations
      for each row execute function analytics.delay_rollup_trigger()`);
    // A projection's upsert sets proof_delay_s to what it was: nothing to move then.
    this.addSql(`create trigger delay_rollup_update after update of local_day, proof_delay_s on analytics.operations
      for each row when (old.local_day is distinct from new.local_day or old.proof_delay_s is distinct from new.proof_delay_s)
      execute function analytics.delay_rollup_trigger()`);
    this.addSql(`insert into analytics.delay_seconds (local_day, bucket, n, sum_s)
      select local_day, analytics.delay_bucket(proof_delay_s), count(*), sum(proof_delay_s) from analytics.operations
      where proof_delay_s is not null group by 1, 2`);
    this.addSql(opRollupWithoutDelayHist());
    this.addSql(`drop table analytics.delay_hist`);
    this.addSql(rebuildRollups());
  }

  override down(): void {
    this.addSql(`lock table analytics.operations in share row exclusive mode`);
    this.addSql(histogramTableSql("delay_hist"));
    this.addSql(`insert into analytics.delay_hist (local_day, bucket, n)
      select local_day, analytics.hist_bucket(proof_delay_s), count(*) from analytics.operations
      where proof_delay_s is not null group by 1, 2`);
    this.addSql(opRollupSql("create or replace"));
    this.addSql(rebuildRollupsSql("create or replace"));
    this.addSql(`drop trigger delay_rollup_update on analytics.operations`);
    this.addSql(`drop trigger delay_rollup on analytics.operations`);
    this.addSql(`drop function analytics.delay_rollup_trigger()`);
    this.addSql(`drop function analytics.delay_rollup(date, double precision, int)`);
    this.addSql(`drop table analytics.delay_seconds`);
    this.addSql(`drop function analytics.delay_bucket(double precision)`);
  }
}

/**
 * Migration0003Rollups' `op_rollup` as it was, less its `delay_hist` part: a row's contribution
 * to the per-day rollups (the histogram of delays is `delay_rollup`'s, by its own trigger).
 */
function opRollupWithoutDelayHist(): string {
  return `create or replace function analytics.op_rollup(r analytics.operations, s int) returns void language sql as $$
      insert into analytics.op_daily as d (local_day, status, is_transfer, auto, settled, lost, n, montant, fee, fee_n, delay_n)
      values (r.local_day, r.status, r.is_transfer,
              r.status = 'confirmed' and r.confirmed_by is not distinct from 'proof' and not r.touched_by_hand,
              r.settled_by_hand is not null, r.lost, s, s * r.montant, s * coalesce(r.fee, 0), s * (r.fee is not null)::int,
              s * (r.proof_delay_s is not null)::int)
      on conflict (local_day, status, is_transfer, auto, settled, lost) do update
        set n = d.n + excluded.n, montant = d.montant + excluded.montant, fee = d.fee + excluded.fee,
            fee_n = d.fee_n + excluded.fee_n, delay_n = d.delay_n + excluded.delay_n;
      insert into analytics.agent_daily as a (local_day, agent_id, n, value_xaf)
      values (r.local_day, r.agent_id, s, s * case when r.is_transfer and r.status = 'confirmed' then r.montant else 0 end)
      on conflict (local_day, agent_id) do update set n = a.n + excluded.n, value_xaf = a.value_xaf + excluded.value_xaf;
      insert into analytics.op_hourly as h (local_day, local_hour, local_dow, n) values (r.local_day, r.local_hour, r.local_dow, s)
      on conflict (local_day, local_hour) do update set n = h.n + excluded.n;
      insert into analytics.op_sim_daily as m (local_day, sim_id, n) values (r.local_day, coalesce(r.sim_id, '${NO_SIM}'), s)
      on conflict (local_day, sim_id) do update set n = m.n + excluded.n;
      insert into analytics.amount_hist as x (local_day, bucket, n)
      select r.local_day, analytics.hist_bucket(r.montant), s where r.is_transfer and r.status = 'confirmed'
      on conflict (local_day, bucket) do update set n = x.n + excluded.n;
    $$`;
}

/** Migration0003Rollups' `rebuild_rollups()` with `delay_seconds` where `delay_hist` was. */
function rebuildRollups(): string {
  return `create or replace function analytics.rebuild_rollups() returns void language sql as $$
      truncate analytics.op_daily, analytics.agent_daily, analytics.op_hourly, analytics.op_sim_daily,
        analytics.amount_hist, analytics.delay_seconds, analytics.msg_daily, analytics.tx_daily;
      insert into analytics.op_daily (local_day, status, is_transfer, auto, settled, lost, n, montant, fee, fee_n, delay_n)
      select local_day, status, is_transfer,
             status = 'confirmed' and confirmed_by is not distinct from 'proof' and not touched_by_hand,
             settled_by_hand is not null, lost, count(*), sum(montant), coalesce(sum(fee), 0), count(fee), count(proof_delay_s)
      from analytics.operations group by 1, 2, 3, 4, 5, 6;
      insert into analytics.agent_daily (local_day, agent_id, n, value_xaf)
      select local_day, agent_id, count(*), coalesce(sum(montant) filter (where is_transfer and status = 'confirmed'), 0)
      from analytics.operations group by 1, 2;
      insert into analytics.op_hourly (local_day, local_hour, local_dow, n)
      select local_day, local_hour, min(local_dow), count(*) from analytics.operations group by 1, 2;
      insert into analytics.op_sim_daily (local_day, sim_id, n)
      select local_day, coalesce(sim_id, '${NO_SIM}'), count(*) from analytics.operations group by 1, 2;
      insert into analytics.amount_hist (local_day, bucket, n)
      select local_day, analytics.hist_bucket(montant), count(*) from analytics.operations
      where is_transfer and status = 'confirmed' group by 1, 2;
      insert into analytics.delay_seconds (local_day, bucket, n, sum_s)
      select local_day, analytics.delay_bucket(proof_delay_s), count(*), sum(proof_delay_s) from analytics.operations
      where proof_delay_s is not null group by 1, 2;
      insert into analytics.msg_daily (local_day, sim_id, n, ambiguous)
      select local_day, coalesce(sim_id, '${NO_SIM}'), count(*), count(*) filter (where is_ambiguous)
      from analytics.messages group by 1, 2;
      insert into analytics.tx_daily (local_day, launched_by, cancelled, xaf, eur, rate_xaf, rate_eur)
      select local_day, coalesce(launched_by, '${NO_SIM}'), state = 'cancelled', sum(received_amount_xaf),
             coalesce(sum(send_amount_eur::numeric), 0),
             coalesce(sum(received_amount_xaf) filter (where send_amount_eur > 0), 0),
             coalesce(sum(send_amount_eur::numeric) filter (where send_amount_eur > 0), 0)
      from analytics.transactions group by 1, 2, 3;
    $$`;
}
