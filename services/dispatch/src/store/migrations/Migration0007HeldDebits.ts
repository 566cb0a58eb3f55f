import { Migration } from "@transferops/kit";

/**
 * The free balance of a SIM (store/operations.ts, `HELD_DEBITS`) holds, besides the debits in
 * flight, those that may have left since the SIM's last measurement: no_evidence, confirmed
 * without a newer reading, settled or arbitrated failed, cancelled while dialling and then
 * reported `ussd_ok`, and any a later proof contradicts. They are found by the time of their
 * last change against the SIM's measurement, so `operations_sim_changed` serves that part
 * (a SIM's entries since its last reading, not its history).
 *
 * `contradicting_message_id`: the operator's proof that arrived for a failed or rejected
 * operation (flows/proof.ts): its money went, so its retry is refused; the message's answer
 * is then `contradicting` (the proofs' outcomes).
 */
export class Migration0007HeldDebits extends Migration {
  override name = "Migration0007HeldDebits";

  up(): void {
    this.addSql(`alter table dispatch.operations add column contradicting_message_id text`);
    this.addSql(`alter table dispatch.proofs drop constraint proofs_outcome_check`);
    this.addSql(
      `alter table dispatch.proofs add constraint proofs_outcome_check
         check (outcome in ('confirmed', 'ambiguous', 'no_candidate', 'divergent', 'contradicting'))`,
    );
    this.addSql(
      `create index operations_sim_changed on dispatch.operations (sim_id, updated_at)
         include (montant, op_type)
         where status in ('no_evidence', 'confirmed', 'failed', 'rejected')`,
    );
    // The arbitration queue lists the contradicted first (store/queues.ts, listUnproven).
    this.addSql(
      `create index operations_contradicted on dispatch.operations (finished_at) where contradicting_message_id is not null`,
    );
  }
}
