import { Migration } from "@transferops/kit";

/**
 * Access grants, devices (tokens and latest heartbeat), SIMs (encrypted PIN, balance
 * mirror), fleet limits, the circuit breaker, notifications, webhooks and their deliveries.
 */
export class Migration0002Fleet extends Migration {
  override name = "Migration0002Fleet";

  up(): void {
    // No foreign key to agents: the reset deletes non-admin agents and keeps their profiles.
    this.addSql(`create table fleet.access_grants (
      agent_id uuid primary key,
      allowed_sim_ids uuid[] not null,
      allowed_op_types text[] not null,
      max_amount bigint not null check (max_amount > 0),
      updated_at timestamptz not null default now(),
      updated_by uuid
    )`);

    this.addSql(`create table fleet.devices (
      id text primary key check (id ~ '^[0-9a-f]{32}$'),
      label varchar(200) not null,
      status text not null default 'active' check (status in ('active', 'frozen')),
      token_hash char(64) unique,
      token_issued_at timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      last_seen_at timestamptz,
      app_version varchar(100),
      android_version varchar(40),
      android_sdk integer,
      manufacturer varchar(80),
      model varchar(80),
      battery integer check (battery between 0 and 100),
      network varchar(100),
      battery_exempt boolean,
      heartbeat_sims jsonb,
      report jsonb,
      health_reported_at timestamptz,
      silence_alerted_for timestamptz
    )`);

    // The foreign key has no delete action: deleting a device unassigns its SIMs first,
    // explicitly, so the slot is cleared with the device id.
    this.addSql(`create table fleet.sims (
      id uuid primary key,
      operator text not null check (operator in ('operator_a', 'operator_b')),
      msisdn varchar(9) not null,
      status text not null default 'active' check (status in ('active', 'frozen', 'retired')),
      device_id text references fleet.devices (id),
      subscription_slot smallint check (subscription_slot in (0, 1)),
      pin_key_id text not null,
      pin_ciphertext bytea not null,
      balance_mirror bigint check (balance_mirror >= 0),
      balance_updated_at timestamptz,
      balance_source text,
      balance_band text check (balance_band in ('low', 'high')),
      low_balance_threshold bigint check (low_balance_threshold >= 0),
      high_balance_threshold bigint check (high_balance_threshold >= 0),
      absent_since timestamptz,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now(),
      constraint sims_placement check ((device_id is null) = (subscription_slot is null)),
      constraint sims_mirror_with_time check ((balance_mirror is null) = (balance_updated_at is null)),
      constraint sims_slot_unique unique (device_id, subscription_slot)
    )`);
    this.addSql(`create unique index sims_msisdn_unique on fleet.sims (msisdn)`);
    this.addSql(`create index sims_operator on fleet.sims (operator)`);

    this.addSql(`create table fleet.fleet_limits (
      id bigserial primary key,
      operator text check (operator in ('operator_a', 'operator_b')),
      op_type text not null check (op_type in ('deposit', 'withdrawal', 'float_deposit')),
      max_amount bigint not null check (max_amount > 0),
      max_daily_agent bigint not null check (max_daily_agent > 0),
      max_daily_sim bigint not null check (max_daily_sim > 0),
      effective_from timestamptz not null default now(),
      active boolean not null default true,
      deactivated_at timestamptz,
      recorded_by uuid
    )`);
    this.addSql(
      `create unique index fleet_limits_current on fleet.fleet_limits ((coalesce(operator, '')), op_type) where active`,
    );

    this.addSql(`create table fleet.circuit_breaker (
      id smallint primary key check (id = 1),
      active boolean not null,
      changed_at timestamptz not null default now(),
      changed_by uuid
    )`);
    this.addSql(`insert into fleet.circuit_breaker (id, active) values (1, false)`);

    this.addSql(`create table fleet.notifications (
      id uuid primary key,
      kind text not null,
      severity text not null,
      message text not null,
      sim_id text,
      device_id text,
      operation_id text,
      context jsonb not null default '{}',
      raised_at timestamptz not null,
      dedupe_key text not null unique,
      acknowledged_at timestamptz,
      acknowledged_by uuid,
      created_at timestamptz not null default now()
    )`);
    this.addSql(`create index notifications_recent on fleet.notifications (raised_at desc)`);

    this.addSql(`create table fleet.webhooks (
      id uuid primary key,
      url text not null,
      events text[] not null,
      secret_key_id text not null,
      secret_ciphertext bytea not null,
      created_at timestamptz not null default now(),
      created_by uuid
    )`);
    this.addSql(`create table fleet.webhook_deliveries (
      id uuid primary key,
      webhook_id uuid not null references fleet.webhooks (id) on delete cascade,
      event_type text not null,
      event_id text not null,
      body text not null,
      status text not null default 'pending' check (status in ('pending', 'delivered', 'failed')),
      attempt_count integer not null default 0,
      next_attempt_at timestamptz,
      lease_until timestamptz,
      created_at timestamptz not null default now(),
      delivered_at timestamptz,
      unique (webhook_id, event_id)
    )`);
    this.addSql(
      `create index webhook_deliveries_due on fleet.webhook_deliveries (next_attempt_at) where status = 'pending'`,
    );
    this.addSql(`create table fleet.webhook_attempts (
      delivery_id uuid not null references fleet.webhook_deliveries (id) on delete cascade,
      attempt integer not null,
      attempted_at timestamptz not null,
      status_code integer,
      error text,
      duration_ms integer not null,
      primary key (delivery_id, attempt)
    )`);
  }
}
