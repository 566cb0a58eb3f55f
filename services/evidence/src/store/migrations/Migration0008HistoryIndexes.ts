import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * Reads that grew with a SIM's messages, a day's or a window's rather than with their answer
 * (npm run bench:history; docs/decisions/history.md):
 * - a day's reconciliation of the fleet reads the day's rows, one a SIM, where the primary
 *   key (`sim_id, day`) could not find them by day: every SIM's every day was read;
 *   `daily_reconciliations_day`;
 * - every submission asks whether the SIM already has a message of the same operator
 *   reference (store/messages.ts, `chainNeighbours`, its `repeat` side): only the proofs'
 *   references were indexed (`messages_proof_ref`), so the question read every message the
 *   SIM ever had (9,942 rows, 2.9 s cold, at 1,000,000 messages), inside the submission;
 *   `messages_sim_ref` answers it from the SIM's entries of that reference;
 * - a day's reconciliation counts each SIM's `unknown_sender` messages of the day
 *   (store/reconciliations.ts, `dayRows`): through `messages_sim_received` it read every
 *   message of every SIM's day to find the few; `messages_unknown_sender` holds those few;
 * - the movements list (store/messages.ts, `listMovements`) walked the window's messages
 *   newest first, keeping the movements: `messages_movements` holds the movements alone, in
 *   the list's order, so a page reads a page.
 * All are built concurrently (SHARE UPDATE EXCLUSIVE: the table is read and written while
 * they build). The first and last cost an entry only for the messages they hold;
 * `messages_sim_ref` one for every message version with a reference (most of them).
 */
export class Migration0008HistoryIndexes extends Migration {
  override name = "Migration0008HistoryIndexes";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "messages_unknown_sender",
      on: `evidence.messages (sim_id, received_at) where outcome = 'unknown_sender'`,
    },
    { name: "daily_reconciliations_day", on: `evidence.daily_reconciliations (day)` },
    {
      name: "messages_sim_ref",
      on: `evidence.messages (sim_id, operator_ref) where operator_ref is not null`,
    },
    {
      name: "messages_movements",
      // MOVEMENT_KINDS (domain/outcomes.ts) as the list's query spells them, in their order: the
      // planner uses a partial index when the query's predicate is the index's.
      on: `evidence.messages (received_at desc, id desc)
        where kind in ('UV_OUT', 'UV_IN', 'FLOAT_OUT', 'FLOAT_IN', 'UV_WITH', 'FLOAT_WITH', 'AIRTIME', 'COM_SWEEP', 'REV')`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }
}
