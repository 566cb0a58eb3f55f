import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * Two reads that grew with the messages of a day or a window rather than with their answer
 * (npm run bench:history; docs/decisions/history.md):
 * - a day's reconciliation counts each SIM's `unknown_sender` messages of the day
 *   (store/reconciliations.ts, `dayRows`): through `messages_sim_received` it read every
 *   message of every SIM's day to find the few; `messages_unknown_sender` holds those few;
 * - the movements list (store/messages.ts, `listMovements`) walked the window's messages
 *   newest first, keeping the movements: `messages_movements` holds the movements alone, in
 *   the list's order, so a page reads a page.
 * Both are built concurrently (SHARE UPDATE EXCLUSIVE: the table is read and written while
 * they build); each costs one entry for the messages it holds, none for the others.
 */
export class Migration0008HistoryIndexes extends Migration {
  override name = "Migration0008HistoryIndexes";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "messages_unknown_sender",
      on: `evidence.messages (sim_id, received_at) where outcome = 'unknown_sender'`,
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
