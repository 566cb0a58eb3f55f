import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * A SIM's proven operations by the operator's reference: the proof's check for a restated text
 * (store/proofs.ts, `answeredBefore`: an operation another message already confirmed on this
 * SIM with this reference and amount), run for every confirmation text that carries a
 * reference. Without it the check read `operations_sim_holding` for every confirmed operation
 * of the SIM with the text's amount, then each row from the table to compare its reference:
 * about 250 rows at 10,000,000 operations (100 SIMs, 400 amounts), 344 ms from a cold disk, and
 * a SIM's common amounts (a round 10,000 XAF) many more: in proportion to the SIM's history, on
 * the SMS path (docs/decisions/history.md, "Found by the small history"). With it, the one entry
 * of the reference.
 *
 * Partial on a reference (what the proof and an attach write): one entry a proven operation,
 * written by the proof's update. Built concurrently (SHARE UPDATE EXCLUSIVE: creates, claims
 * and proofs go on while it builds); until it is built the check reads as before. `down()`
 * drops it (`drop index` takes ACCESS EXCLUSIVE on dispatch.operations until it commits:
 * milliseconds).
 */
export class Migration0014OperatorRefIndex extends Migration {
  override name = "Migration0014OperatorRefIndex";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_sim_operator_ref",
      on: `dispatch.operations (sim_id, evidence_operator_ref) where evidence_operator_ref is not null`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the index is built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_sim_operator_ref`);
  }
}
