import { Migration } from "@transferops/kit";

/**
 * The fleet's median transfer found its bucket in `amount_hist`, then walked that bucket's
 * entries of `operations_confirmed_amount` across every day of the history, keeping the
 * window's: the window's transfers of that bucket, a year's at the rate. The largest
 * walked the same index from the top. `amount_daily` keeps, per histogram bucket, day and
 * amount, how many confirmed transfers: the operator's amounts are the few values agents type
 * (multiples of 500, 1,000...), so a day holds a few hundred rows at most whatever its volume,
 * and the median is read exactly from the counts of its bucket's amounts over the window's days
 * (store/amounts.ts), the largest from the top bucket's.
 *
 * Primary key (bucket, local_day, montant): a bucket's rows of a window are one range of it.
 * Kept by its own triggers in the statement that changes a row (a projection's update that
 * changes none of the four columns fires nothing), like every rollup; `rebuild_rollups()`
 * rebuilds it: the rollups of Migration0003Rollups and Migration0005DelaySeconds move to
 * `rebuild_day_rollups()`, which it calls with `rebuild_amount_counts()`.
 *
 * On a live history: `create trigger` takes SHARE ROW EXCLUSIVE on analytics.operations until
 * this migration commits, and the table is filled from the rows in that time (an index-only
 * scan of `operations_confirmed_amount`): the consumers' writes of analytics.operations wait
 * that long, the routes' reads go on (docs/decisions/history.md, "Migrations on a live history").
 *
 * `down()` puts back the schema of Migration0005DelaySeconds exactly (its `rebuild_rollups()`
 * renamed back; the test compares the schema dumps); its `drop trigger`s take ACCESS EXCLUSIVE on
 * analytics.operations until the commit that follows.
 */
export class Migration0006AmountCounts extends Migration {
  override name = "Migration0006AmountCounts";

  up(): void {
    this.addSql(`create table analytics.amount_daily (
      bucket int not null,
      local_day date not null,
      montant bigint not null,
      n bigint not null,
      primary key (bucket, local_day, montant)
    )`);
    this.addSql(`create function analytics.amount_rollup(r analytics.operations, s int) returns void language sql as $$
      insert into analytics.amount_daily as a (bucket, local_day, montant, n)
      select analytics.hist_bucket(r.montant), r.local_day, r.montant, s where r.is_transfer and r.status = 'confirmed'
      on conflict (bucket, local_day, montant) do update set n = a.n + excluded.n;
    $$`);
    this.addSql(`create function analytics.amount_rollup_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then perform analytics.amount_rollup(old, -1); end if;
        if tg_op in ('INSERT', 'UPDATE') then perform analytics.amount_rollup(new, 1); end if;
        return null;
      end $$`);
    this.addSql(`create trigger amount_rollup after insert or delete on analytics.operations
      for each row execute function analytics.amount_rollup_trigger()`);
    this.addSql(`create trigger amount_rollup_update after update of is_transfer, status, montant, local_day
      on analytics.operations for each row
      when ((old.is_transfer, old.status, old.montant, old.local_day) is distinct from
            (new.is_transfer, new.status, new.montant, new.local_day))
      execute function analytics.amount_rollup_trigger()`);
    // 256 MB of work_mem: the grouping of the history does not spill (Migration0007AgentRollups).
    this
      .addSql(`create function analytics.rebuild_amount_counts() returns void language sql set work_mem = '256MB' as $$
      truncate analytics.amount_daily;
      insert into analytics.amount_daily (bucket, local_day, montant, n)
      select analytics.hist_bucket(montant), local_day, montant, count(*) from analytics.operations
      where is_transfer and status = 'confirmed' group by 1, 2, 3;
    $$`);
    this.addSql(`select analytics.rebuild_amount_counts()`);
    // Its statistics now, not at autovacuum's first pass: the median's plan reads a bucket's range.
    this.addSql(`analyze analytics.amount_daily`);
    this.addSql(`alter function analytics.rebuild_rollups() rename to rebuild_day_rollups`);
    this.addSql(rebuildRollupsWithAmountsSql("create"));
  }

  override down(): void {
    this.addSql(`drop trigger amount_rollup_update on analytics.operations`);
    this.addSql(`drop trigger amount_rollup on analytics.operations`);
    this.addSql(`drop function analytics.amount_rollup_trigger()`);
    this.addSql(`drop function analytics.amount_rollup(analytics.operations, int)`);
    this.addSql(`drop function analytics.rebuild_rollups()`);
    this.addSql(`alter function analytics.rebuild_day_rollups() rename to rebuild_rollups`);
    this.addSql(`drop function analytics.rebuild_amount_counts()`);
    this.addSql(`drop table analytics.amount_daily`);
  }
}

/**
 * `rebuild_rollups()` as this migration creates it (`create`) and as Migration0007AgentRollups'
 * `down()` puts it back (`create or replace`): the text is the migration's own, to the space (a
 * function's body is kept as written, and the down() tests compare schema dumps).
 */
export function rebuildRollupsWithAmountsSql(create: "create" | "create or replace"): string {
  return `${create} function analytics.rebuild_rollups() returns void language sql as $$
      select analytics.rebuild_day_rollups();
      select analytics.rebuild_amount_counts();
    $$`;
}
