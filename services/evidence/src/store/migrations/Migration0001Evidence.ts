import { Migration, outboxInboxSql } from "@transferops/kit";

/**
 * Messages (every operator SMS a handset forwarded), daily reconciliations, and the
 * outbox/inbox of the evidence schema. The invariants live in constraints:
 * - one message per (SIM, sms_hash): a duplicate submission inserts nothing;
 * - one proving message per operation (`messages_one_proof_per_operation`); a message has
 *   one `operation_id` column, so it names at most one operation;
 * - a message names an operation exactly when it is linked (`link` set).
 */
export class Migration0001Evidence extends Migration {
  override name = "Migration0001Evidence";

  up(): void {
    this.addSql(`create table evidence.messages (
      id uuid primary key,
      sim_id text not null,
      sms_hash char(64) not null,
      source text not null default 'handset',
      sender text not null,
      raw_text text not null,
      received_at timestamptz not null,
      device_received_at timestamptz,
      client_message_id varchar(64),
      subscription_slot smallint,
      kind text,
      amount bigint,
      fee bigint,
      balance_after bigint,
      operator_ref text,
      counterparty_msisdn text,
      counterparty_name text,
      direction text check (direction in ('in', 'out')),
      language text,
      parse_rule text,
      state text not null check (state in ('pending', 'done')),
      outcome text not null check (outcome in ('pending', 'confirmed', 'restated', 'ambiguous', 'divergent',
        'orphan', 'movement', 'stored', 'not_correlated', 'attached')),
      is_ambiguous boolean not null default false,
      operation_id uuid,
      link text check (link in ('proof', 'restatement')),
      linked_at timestamptz,
      linked_by text,
      operation_snapshot bytea,
      balance_state text not null default 'none' check (balance_state in ('none', 'pending', 'done')),
      balance bigint,
      previous_balance bigint,
      dismissed_at timestamptz,
      dismiss_reason text check (dismiss_reason in ('balance_reading', 'operator_refusal', 'already_settled', 'not_ours', 'other')),
      dismissed_by text,
      stored_at timestamptz not null default now(),
      correlated_at timestamptz,
      attempts integer not null default 0,
      last_attempt_at timestamptz,
      last_error text,
      constraint messages_one_per_hash unique (sim_id, sms_hash),
      constraint messages_link_names_operation check ((operation_id is null) = (link is null)),
      constraint messages_done_when_linked check (operation_id is null or state = 'done')
    )`);
    this.addSql(
      `create unique index messages_one_proof_per_operation on evidence.messages (operation_id) where link = 'proof'`,
    );
    this.addSql(`create index messages_sim_received on evidence.messages (sim_id, received_at desc)`);
    this.addSql(`create index messages_received on evidence.messages (received_at desc, id desc)`);
    this.addSql(
      `create index messages_unlinked on evidence.messages (received_at desc) where operation_id is null and dismissed_at is null`,
    );
    this.addSql(`create index messages_proof_ref on evidence.messages (sim_id, operator_ref) where link = 'proof'`);
    this.addSql(
      `create index messages_redrive on evidence.messages (stored_at) where state = 'pending' or balance_state = 'pending'`,
    );
    this.addSql(`create table evidence.daily_reconciliations (
      sim_id text not null,
      day date not null,
      messages integer not null,
      confirmed integer not null,
      restated integer not null,
      attached integer not null,
      unmatched integer not null,
      ambiguous integer not null,
      divergent integer not null,
      dismissed integer not null,
      movements integer not null,
      proven_xaf bigint not null,
      fees_xaf bigint not null,
      movements_in_xaf bigint not null,
      movements_out_xaf bigint not null,
      last_balance bigint,
      last_balance_at timestamptz,
      updated_at timestamptz not null default now(),
      primary key (sim_id, day)
    )`);
    for (const sql of outboxInboxSql("evidence")) this.addSql(sql);
  }
}
