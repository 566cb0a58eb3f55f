import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The unmatched queue and the movements in an agent's scope (the SIMs of its grant), read SIM by
 * SIM (store/messages.ts, `listUnmatched`, `listMovements`; docs/decisions/history.md, "An agent's
 * page, SIM by SIM"). They walked the fleet's entries newest first (`messages_unlinked`,
 * `messages_movements`) keeping the grant's SIMs until the page was full: for an agent with 4
 * SIMs of 100, about 25 entries for each row shown, and for a SIM with fewer than a page in the
 * window (a new or quiet SIM, or `all`), every entry of the window, the whole history with
 * `all`. Each SIM's entries now lie together, in the lists' order, so a page reads at most a
 * page a SIM of the grant.
 *
 * Partial on the lists' own predicates, spelled as the queries spell them (the planner uses a
 * partial index when the query's predicate is the index's): an entry only for the messages
 * each list can show. `messages_unmatched_sim` holds a message while it names no operation and
 * nobody dismissed it (a link or a dismissal takes it out); `messages_movements_sim` every
 * movement. Built concurrently (SHARE UPDATE EXCLUSIVE: messages are written while they build);
 * until built, the lists read as before. `down()` drops them.
 */
export class Migration0015ScopedQueues extends Migration {
  override name = "Migration0015ScopedQueues";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "messages_unmatched_sim",
      // UNMATCHED_QUEUE_KINDS (domain/outcomes.ts) as the list's query spells them.
      on: `evidence.messages (sim_id, received_at desc, id desc)
        where state = 'done' and operation_id is null and dismissed_at is null and (kind is null or kind in ('DEP', 'BAL', 'FAIL'))`,
    },
    {
      name: "messages_movements_sim",
      // MOVEMENT_KINDS (domain/outcomes.ts), as messages_movements spells them.
      on: `evidence.messages (sim_id, received_at desc, id desc)
        where kind in ('UV_OUT', 'UV_IN', 'FLOAT_OUT', 'FLOAT_IN', 'UV_WITH', 'FLOAT_WITH', 'AIRTIME', 'COM_SWEEP', 'REV')`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists evidence.messages_unmatched_sim`);
    this.addSql(`drop index if exists evidence.messages_movements_sim`);
  }
}
