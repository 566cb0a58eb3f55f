import { Migration } from "@transferops/kit";

/**
 * The read model behind GET /analytics, projected from the operations, messages,
 * transactions and fleet topics. Local calendar fields (UTC+1) are computed once at
 * projection so every figure groups on indexed columns.
 */
export class Migration0002ReadModel extends Migration {
  override name = "Migration0002ReadModel";

  up(): void {
    this.addSql(`create table analytics.operations (
      operation_id uuid primary key,
      agent_id uuid not null,
      sim_id uuid,
      device_id text,
      device_label text,
      op_type text not null,
      is_transfer boolean not null,
      status text not null,
      montant bigint not null,
      created_at timestamptz not null,
      local_day date not null,
      local_dow smallint not null,
      local_hour smallint not null,
      finished_at timestamptz,
      dialled boolean not null default false,
      confirmed_by text,
      touched_by_hand boolean not null default false,
      has_message boolean not null default false,
      settled_by_hand text,
      lost boolean not null default false,
      fee bigint,
      proof_delay_s double precision,
      changed_at timestamptz not null
    )`);
    this.addSql(`create index operations_day on analytics.operations (local_day)`);
    // An agent's own view reads its rows from this index alone (index-only scans): its rows
    // are spread over the whole table, one per page.
    this.addSql(`create index operations_agent_day on analytics.operations (agent_id, local_day)
      include (local_dow, local_hour, status, is_transfer, montant, sim_id, confirmed_by, touched_by_hand, settled_by_hand,
        lost, fee, proof_delay_s)`);
    // An agent's SIMs (the scope of its messages and SIM figures), read from the index alone.
    this.addSql(`create index operations_agent_sim on analytics.operations (agent_id, sim_id)`);
    this.addSql(
      `create index operations_waiting on analytics.operations (coalesce(finished_at, created_at), agent_id)
       where status = 'no_evidence' and is_transfer`,
    );
    this.addSql(`create index operations_settled on analytics.operations (agent_id) where settled_by_hand is not null`);

    this.addSql(`create table analytics.messages (
      message_id uuid primary key,
      sim_id uuid,
      received_at timestamptz not null,
      local_day date not null,
      kind text,
      outcome text not null,
      is_ambiguous boolean not null default false,
      operation_id uuid,
      dismissed_at timestamptz
    )`);
    this.addSql(`create index messages_day on analytics.messages (local_day)`);
    this.addSql(`create index messages_sim_day on analytics.messages (sim_id, local_day)`);

    this.addSql(`create table analytics.transactions (
      transaction_id uuid primary key,
      state text not null,
      received_amount_xaf bigint not null,
      send_amount_eur double precision,
      rate double precision,
      operation_id uuid,
      launched_by uuid,
      transaction_date timestamptz not null,
      local_day date not null,
      changed_at timestamptz not null
    )`);
    this.addSql(`create index transactions_day on analytics.transactions (local_day)`);

    this.addSql(`create table analytics.sims (
      sim_id uuid primary key,
      status text not null,
      device_id text,
      balance_mirror bigint,
      balance_updated_at timestamptz
    )`);
    this.addSql(`create table analytics.resets (reset_at timestamptz primary key)`);
    this.addSql(`create table analytics.devices (
      device_id text primary key,
      label text not null
    )`);
  }
}
