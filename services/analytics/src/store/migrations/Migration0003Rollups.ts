import { Migration } from "@transferops/kit";

/** The uuid standing for "no SIM" / "no agent" in the rollups (a primary key cannot hold null). */
export const NO_SIM = "00000000-0000-0000-0000-000000000000";

/**
 * Bucket floors of the histograms (amounts in FCFA, proof delays in seconds): 0, then
 * about 10 % apart up to 2×10⁷. width_bucket compares against these exact numbers, so a
 * bucket's rows are exactly those ≥ its floor and < the next one.
 */
export const HISTOGRAM_FLOORS: number[] = (() => {
  const floors = [0];
  for (let x = 1; x <= 2e7; x *= 1.1) if (Math.round(x) > floors.at(-1)!) floors.push(Math.round(x));
  return floors;
})();

/**
 * Per-day rollups of the projections, kept by triggers in the same statement as every
 * insert, update or delete of a row (the row's old contribution is subtracted, its new one
 * added), so they always equal the sums of the rows, and a rebuild (replay into an empty
 * schema) rebuilds them too. `rebuild_rollups()` recomputes them in one pass (bulk loads,
 * repair). The fleet view reads them instead of the rows: counts and sums per day, and
 * histograms that locate a percentile's bucket so only that bucket's index entries are walked.
 */
export class Migration0003Rollups extends Migration {
  override name = "Migration0003Rollups";

  up(): void {
    this.addSql(`create function analytics.hist_bucket(v double precision) returns int immutable language sql as $$
      select width_bucket(v, '{${HISTOGRAM_FLOORS.join(",")}}'::double precision[])
    $$`);
    this.addSql(`create table analytics.op_daily (
      local_day date not null,
      status text not null,
      is_transfer boolean not null,
      auto boolean not null,
      settled boolean not null,
      lost boolean not null,
      n bigint not null,
      montant bigint not null,
      fee bigint not null,
      fee_n bigint not null,
      delay_n bigint not null,
      primary key (local_day, status, is_transfer, auto, settled, lost)
    )`);
    this.addSql(`create table analytics.agent_daily (
      local_day date not null,
      agent_id uuid not null,
      n bigint not null,
      value_xaf bigint not null,
      primary key (local_day, agent_id)
    )`);
    this.addSql(`create table analytics.op_hourly (
      local_day date not null,
      local_hour smallint not null,
      local_dow smallint not null,
      n bigint not null,
      primary key (local_day, local_hour)
    )`);
    this.addSql(`create table analytics.op_sim_daily (
      local_day date not null,
      sim_id uuid not null,
      n bigint not null,
      primary key (local_day, sim_id)
    )`);
    for (const h of ["amount_hist", "delay_hist"]) this.addSql(histogramTableSql(h));
    this.addSql(`create table analytics.msg_daily (
      local_day date not null,
      sim_id uuid not null,
      n bigint not null,
      ambiguous bigint not null,
      primary key (local_day, sim_id)
    )`);
    this.addSql(`create table analytics.tx_daily (
      local_day date not null,
      launched_by uuid not null,
      cancelled boolean not null,
      xaf bigint not null,
      eur numeric not null,
      rate_xaf bigint not null,
      rate_eur numeric not null,
      primary key (local_day, launched_by, cancelled)
    )`);

    this.addSql(opRollupSql("create"));
    this.addSql(`create function analytics.msg_rollup(r analytics.messages, s int) returns void language sql as $$
      insert into analytics.msg_daily as d (local_day, sim_id, n, ambiguous)
      values (r.local_day, coalesce(r.sim_id, '${NO_SIM}'), s, s * r.is_ambiguous::int)
      on conflict (local_day, sim_id) do update set n = d.n + excluded.n, ambiguous = d.ambiguous + excluded.ambiguous;
    $$`);
    this.addSql(`create function analytics.tx_rollup(r analytics.transactions, s int) returns void language sql as $$
      insert into analytics.tx_daily as d (local_day, launched_by, cancelled, xaf, eur, rate_xaf, rate_eur)
      values (r.local_day, coalesce(r.launched_by, '${NO_SIM}'), r.state = 'cancelled', s * r.received_amount_xaf,
              s * coalesce(r.send_amount_eur, 0)::numeric,
              s * case when r.send_amount_eur > 0 then r.received_amount_xaf else 0 end,
              s * case when r.send_amount_eur > 0 then r.send_amount_eur else 0 end::numeric)
      on conflict (local_day, launched_by, cancelled) do update set xaf = d.xaf + excluded.xaf, eur = d.eur + excluded.eur,
        rate_xaf = d.rate_xaf + excluded.rate_xaf, rate_eur = d.rate_eur + excluded.rate_eur;
    $$`);
    for (const [table, fn, columns] of [
      ["operations", "op_rollup", ""],
      ["messages", "msg_rollup", " of local_day, sim_id, is_ambiguous"],
      ["transactions", "tx_rollup", ""],
    ]) {
      this.addSql(`create function analytics.${fn}_trigger() returns trigger language plpgsql as $$
        begin
          if tg_op in ('UPDATE', 'DELETE') then perform analytics.${fn}(old, -1); end if;
          if tg_op in ('INSERT', 'UPDATE') then perform analytics.${fn}(new, 1); end if;
          return null;
        end $$`);
      this.addSql(`create trigger ${fn} after insert or update${columns} or delete on analytics.${table}
        for each row execute function analytics.${fn}_trigger()`);
    }

    // The same contributions as the triggers', grouped: one pass over the rows.
    this.addSql(rebuildRollupsSql("create"));

    // A percentile's bucket is walked through these, in order, from the bucket's floor.
    this.addSql(`create index operations_confirmed_amount on analytics.operations (montant, local_day)
      where is_transfer and status = 'confirmed'`);
    this.addSql(`create index operations_proof_delay on analytics.operations (proof_delay_s, local_day)
      where proof_delay_s is not null`);
    this.addSql(`create index messages_waiting on analytics.messages (received_at)
      where operation_id is null and dismissed_at is null
        and outcome in ('ambiguous', 'divergent', 'orphan', 'not_correlated')
        and (kind is null or kind in ('DEP', 'BAL', 'FAIL'))`);
    this.addSql(`create index messages_dismissed on analytics.messages (sim_id) where dismissed_at is not null`);
  }
}

/** A per-day histogram's table (amounts, and proof delays until Migration0005DelaySeconds). */
export function histogramTableSql(h: string): string {
  return `create table analytics.${h} (
        local_day date not null,
        bucket int not null,
        n bigint not null,
        primary key (local_day, bucket)
      )`;
}

/**
 * `op_rollup` as this migration creates it (`create`) and as Migration0005DelaySeconds' `down()`
 * puts it back (`create or replace`): a row's contribution to every per-day rollup, delay_hist's
 * included. The text is the migration's own, to the space: a function's body is kept as written.
 */
export function opRollupSql(create: "create" | "create or replace"): string {
  return `${create} function analytics.op_rollup(r analytics.operations, s int) returns void language sql as $$
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
      insert into analytics.delay_hist as x (local_day, bucket, n)
      select r.local_day, analytics.hist_bucket(r.proof_delay_s), s where r.proof_delay_s is not null
      on conflict (local_day, bucket) do update set n = x.n + excluded.n;
    $$`;
}

/** `rebuild_rollups()` as this migration creates it, delay_hist's part included (see opRollupSql). */
export function rebuildRollupsSql(create: "create" | "create or replace"): string {
  return `${create} function analytics.rebuild_rollups() returns void language sql as $$
      truncate analytics.op_daily, analytics.agent_daily, analytics.op_hourly, analytics.op_sim_daily,
        analytics.amount_hist, analytics.delay_hist, analytics.msg_daily, analytics.tx_daily;
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
      insert into analytics.delay_hist (local_day, bucket, n)
      select local_day, analytics.hist_bucket(proof_delay_s), count(*) from analytics.operations
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
