import { Migration } from "@transferops/kit";

/**
 * Rewrites of a transaction's receiver: who, when, before and after, one row each, never
 * changed or deleted; and whether the receiver as it stands is the one the partner verified
 * (the launch's `partner_verified` is `partner_verify and receiver_verified`).
 */
export class Migration0003ReceiverChanges extends Migration {
  override name = "Migration0003ReceiverChanges";

  up(): void {
    this.addSql(`alter table intake.transactions add column receiver_verified boolean not null default true`);
    this.addSql(`create table intake.receiver_changes (
      id uuid primary key,
      transaction_id uuid not null references intake.transactions (id),
      agent_id uuid not null,
      agent_name text not null,
      changed_at timestamptz not null default clock_timestamp(),
      before jsonb not null,
      after jsonb not null,
      receiver_verified boolean not null
    )`);
    this.addSql(
      `create index receiver_changes_transaction on intake.receiver_changes (transaction_id, changed_at, id)`,
    );
  }
}
