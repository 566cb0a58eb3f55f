import { Migration, outboxInboxSql } from "@transferops/kit";

/**
 * Operations, the proofs given to evidence, and the outbox/inbox of the dispatch schema.
 * The invariants of design.md §7 live here as constraints, not only in code:
 * - one execution per request_id: `operations_request_id` (unique);
 * - one running operation per device: `operations_one_running_per_device` (partial unique);
 * - one operation per message: `operations_evidence_message` (unique);
 * - one confirmation per operation: one evidence column set per row, and
 *   `proofs_one_confirmation_per_operation` (partial unique);
 * - one retry per operation: `operations_one_retry` (partial unique on parent_operation_id).
 */
export class Migration0001Operations extends Migration {
  override name = "Migration0001Operations";

  up(): void {
    this.addSql(`create table dispatch.operations (
      operation_id uuid primary key,
      request_id text not null,
      parent_operation_id uuid,
      status text not null check (status in ('queued', 'running', 'awaiting_evidence', 'awaiting_manual_dial',
        'confirmed', 'failed', 'no_evidence', 'rejected')),
      origin text not null check (origin in ('aggregated', 'assisted', 'matching')),
      op_type text not null check (op_type in ('deposit', 'withdrawal', 'balance', 'float_deposit', 'mini_statement')),
      agent_id uuid not null,
      operator text not null check (operator in ('operator_a', 'operator_b')),
      montant bigint not null check (montant > 0),
      msisdn_dest text not null,
      dest_name text,
      contact_id text,
      merchant_code text,
      partner_verified boolean not null default true,
      sim_id text,
      device_id text,
      device_label text,
      subscription_slot integer,
      ussd_string text,
      ussd_response text,
      device_outcome text,
      executed_at timestamptz,
      reject_reason text,
      failure_reason text,
      evidence_expires_at timestamptz,
      evidence_message_id text,
      evidence_operator_ref text,
      evidence_amount bigint,
      evidence_fee bigint,
      evidence_balance_after bigint,
      evidence_raw_text text,
      evidence_received_at timestamptz,
      evidence_kind text,
      evidence_is_ambiguous boolean,
      confirmed_by text check (confirmed_by in ('proof', 'attach', 'settle', 'arbitrate')),
      decision text,
      decision_note text,
      decided_by uuid,
      decided_by_name text,
      decided_at timestamptz,
      created_at timestamptz not null default now(),
      started_at timestamptz,
      finished_at timestamptz,
      updated_at timestamptz not null default now()
    )`);
    this.addSql(`create unique index operations_request_id on dispatch.operations (request_id)`);
    this.addSql(
      `create unique index operations_one_running_per_device on dispatch.operations (device_id) where status = 'running'`,
    );
    this.addSql(
      `create unique index operations_evidence_message on dispatch.operations (evidence_message_id) where evidence_message_id is not null`,
    );
    this.addSql(
      `create unique index operations_one_retry on dispatch.operations (parent_operation_id) where parent_operation_id is not null`,
    );
    // The poll: a device's queued work, oldest first (Migration0003 adds the id); its last finished dial (cooldown).
    this.addSql(
      `create index operations_queued_by_device on dispatch.operations (device_id, created_at) where status = 'queued'`,
    );
    this.addSql(
      `create index operations_device_finished on dispatch.operations (device_id, finished_at) where started_at is not null`,
    );
    this.addSql(
      `create index operations_device_updated on dispatch.operations (device_id, updated_at) where started_at is not null`,
    );
    // Selection (in-flight load, idle time) and correlation (candidates by SIM and amount).
    this.addSql(`create index operations_sim_status on dispatch.operations (sim_id, status, montant)`);
    this.addSql(`create index operations_sim_finished on dispatch.operations (sim_id, finished_at)`);
    // Lists.
    this.addSql(`create index operations_created on dispatch.operations (created_at desc)`);
    this.addSql(`create index operations_agent_created on dispatch.operations (agent_id, created_at desc)`);
    // The sweep and the queues.
    this.addSql(
      `create index operations_awaiting_evidence on dispatch.operations (evidence_expires_at) where status = 'awaiting_evidence'`,
    );
    this.addSql(
      `create index operations_no_evidence on dispatch.operations (finished_at) where status = 'no_evidence'`,
    );
    this.addSql(`create index operations_decided on dispatch.operations (decided_at) where decided_at is not null`);

    // Every answer ProveOperation gave, by evidence's message id: a repeat returns it.
    this.addSql(`create table dispatch.proofs (
      message_id text primary key,
      sim_id text not null,
      outcome text not null check (outcome in ('confirmed', 'ambiguous', 'no_candidate', 'divergent')),
      operation_id uuid,
      candidate_operation_ids jsonb not null default '[]',
      created_at timestamptz not null default now()
    )`);
    this.addSql(
      `create unique index proofs_one_confirmation_per_operation on dispatch.proofs (operation_id) where outcome = 'confirmed'`,
    );
    this.addSql(
      `create index proofs_ambiguous on dispatch.proofs using gin (candidate_operation_ids) where outcome = 'ambiguous'`,
    );

    for (const sql of outboxInboxSql("dispatch")) this.addSql(sql);
  }
}
