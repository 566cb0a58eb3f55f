import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * Two reads that grew with the history, found by bench:history and its plans
 * (docs/decisions/history.md, "Found by the small history"), each answered from an index now:
 *
 * - `operations_sim_operator_ref`: a SIM's proven operations by the operator's reference. The
 *   proof's check for a restated text (store/proofs.ts, `answeredBefore`: an operation another
 *   message already confirmed on this SIM with this reference and amount) runs for every
 *   confirmation text that carries a reference. It read `operations_sim_holding` for every
 *   confirmed operation of the SIM with the text's amount, then each row from the table to
 *   compare its reference: about 250 rows at 10,000,000 operations (100 SIMs, 400 amounts), 344
 *   ms from a cold disk, and for a SIM's common amount (a round 10,000 XAF) many more: in
 *   proportion to the SIM's history, on the SMS path. Now the one entry of the reference.
 *   Partial on a reference (what the proof and an attach write): one entry a proven operation,
 *   written by the proof's update.
 * - `operations_awaiting_manual_dial`: the list's `?status=awaiting_manual_dial`, newest first.
 *   The other in-flight statuses have a partial index of their own (queued, running, awaiting
 *   evidence) that the list reads whole and sorts; this one had none, and the list walked every
 *   operation newest first (or the whole table) for a status a handful are in. A handful of
 *   entries, written when an operation enters the status.
 *
 * Built concurrently (SHARE UPDATE EXCLUSIVE: creates, claims and proofs go on while they
 * build); until built, the reads go as before. `down()` drops them (`drop index` takes ACCESS
 * EXCLUSIVE on dispatch.operations until it commits: milliseconds).
 */
export class Migration0014LookupIndexes extends Migration {
  override name = "Migration0014LookupIndexes";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_sim_operator_ref",
      on: `dispatch.operations (sim_id, evidence_operator_ref) where evidence_operator_ref is not null`,
    },
    {
      name: "operations_awaiting_manual_dial",
      on: `dispatch.operations (created_at desc, operation_id desc) where status = 'awaiting_manual_dial'`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_sim_operator_ref`);
    this.addSql(`drop index if exists dispatch.operations_awaiting_manual_dial`);
  }
}
