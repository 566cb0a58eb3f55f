import { Migration, outboxInboxSql } from "@transferops/kit";

/**
 * Intake transactions, and intake's outbox/inbox. The three double-launch protections
 * live partly here: `state` is what the launch claims by a conditional update, and the
 * unique partial index on `operation_id` lets one operation back one transaction only.
 */
export class Migration0001Transactions extends Migration {
  override name = "Migration0001Transactions";

  up(): void {
    this.addSql(`create table intake.transactions (
      id uuid primary key,
      request_id text not null unique,
      parent_request_id text,
      master_transaction_id text,
      contact_id text not null,
      customer_name text,
      customer_phone text,
      receiver_name text not null,
      receiver_phone text not null,
      operator text not null check (operator in ('operator_a', 'operator_b')),
      received_amount_xaf bigint not null check (received_amount_xaf > 0),
      rate double precision check (rate > 0),
      send_amount_eur double precision check (send_amount_eur > 0),
      partner_verify boolean not null default false,
      transaction_date timestamptz not null,
      state text not null default 'pending'
        check (state in ('pending', 'launched', 'done', 'cancelled', 'closed')),
      launched_by uuid,
      launched_by_name text,
      launched_at timestamptz,
      operation_id uuid,
      outcome text,
      settled_at timestamptz,
      settled_by text,
      settled_by_name text,
      payment_confirmed_at timestamptz,
      payment_confirmed_by uuid,
      cancelled_reason text,
      created_at timestamptz not null default now(),
      updated_at timestamptz not null default now()
    )`);
    this.addSql(
      `create unique index transactions_operation_id on intake.transactions (operation_id) where operation_id is not null`,
    );
    this.addSql(`create index transactions_newest on intake.transactions (created_at desc, id desc)`);
    this.addSql(`create index transactions_launched_by on intake.transactions (launched_by, created_at desc)`);
    this.addSql(
      `create index transactions_unlinked on intake.transactions (launched_at) where state = 'launched' and operation_id is null`,
    );
    for (const sql of outboxInboxSql("intake")) this.addSql(sql);
  }
}
