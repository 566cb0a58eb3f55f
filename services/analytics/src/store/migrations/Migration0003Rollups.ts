import { Migration } from "@transferops/kit";

/** The uuid standing for "no SIM" in the per-SIM rollup (a primary key cannot hold null). */
export const NO_SIM = "00000000-0000-0000-0000-000000000000";

/**
 * Per-day rollups of the operations and messages projections, kept by triggers in the
 * same statement as every insert, update or delete of a row (each row's old contribution
 * is subtracted, its new one added), so they are always exactly the sum of the rows and a
 * rebuild (replay into an empty schema) rebuilds them too. The fleet view reads them
 * instead of the million rows; an agent's own view reads its rows through its index.
 */
export class Migration0003Rollups extends Migration {
  override name = "Migration0003Rollups";

  up(): void {
    this.addSql(`create table analytics.op_daily (
      local_day date not null,
      agent_id uuid not null,
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
      primary key (local_day, agent_id, status, is_transfer, auto, settled, lost)
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
    this.addSql(`create table analytics.msg_daily (
      local_day date not null,
      sim_id uuid not null,
      n bigint not null,
      ambiguous bigint not null,
      primary key (local_day, sim_id)
    )`);
    this.addSql(`create function analytics.op_rollup(r analytics.operations, s int) returns void language sql as $$
      insert into analytics.op_daily as d (local_day, agent_id, status, is_transfer, auto, settled, lost, n, montant, fee, fee_n, delay_n)
      values (r.local_day, r.agent_id, r.status, r.is_transfer,
              r.status = 'confirmed' and r.confirmed_by = 'proof' and not r.touched_by_hand,
              r.settled_by_hand is not null, r.lost, s, s * r.montant, s * coalesce(r.fee, 0), s * (r.fee is not null)::int,
              s * (r.proof_delay_s is not null)::int)
      on conflict (local_day, agent_id, status, is_transfer, auto, settled, lost) do update
        set n = d.n + excluded.n, montant = d.montant + excluded.montant, fee = d.fee + excluded.fee,
            fee_n = d.fee_n + excluded.fee_n, delay_n = d.delay_n + excluded.delay_n;
      insert into analytics.op_hourly as h (local_day, local_hour, local_dow, n) values (r.local_day, r.local_hour, r.local_dow, s)
      on conflict (local_day, local_hour) do update set n = h.n + excluded.n;
      insert into analytics.op_sim_daily as m (local_day, sim_id, n) values (r.local_day, coalesce(r.sim_id, '${NO_SIM}'), s)
      on conflict (local_day, sim_id) do update set n = m.n + excluded.n;
    $$`);
    this.addSql(`create function analytics.op_rollup_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then perform analytics.op_rollup(old, -1); end if;
        if tg_op in ('INSERT', 'UPDATE') then perform analytics.op_rollup(new, 1); end if;
        return null;
      end $$`);
    this.addSql(`create trigger op_rollup after insert or update or delete on analytics.operations
      for each row execute function analytics.op_rollup_trigger()`);
    this.addSql(`create function analytics.msg_rollup(r analytics.messages, s int) returns void language sql as $$
      insert into analytics.msg_daily as d (local_day, sim_id, n, ambiguous)
      values (r.local_day, coalesce(r.sim_id, '${NO_SIM}'), s, s * r.is_ambiguous::int)
      on conflict (local_day, sim_id) do update set n = d.n + excluded.n, ambiguous = d.ambiguous + excluded.ambiguous;
    $$`);
    this.addSql(`create function analytics.msg_rollup_trigger() returns trigger language plpgsql as $$
      begin
        if tg_op in ('UPDATE', 'DELETE') then perform analytics.msg_rollup(old, -1); end if;
        if tg_op in ('INSERT', 'UPDATE') then perform analytics.msg_rollup(new, 1); end if;
        return null;
      end $$`);
    this.addSql(`create trigger msg_rollup after insert or update of local_day, sim_id, is_ambiguous or delete
      on analytics.messages for each row execute function analytics.msg_rollup_trigger()`);
    // Percentiles of the fleet view walk these in order instead of sorting the window.
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
