import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The balance chain's last printed balance before a time, found in one descent whatever the
 * SIM's history (docs/decisions/history.md, "A SIM whose messages print no balance"). Two reads
 * ask a SIM for its chain message that printed a balance just before a time (store/messages.ts):
 * a day's reconciliation and balance chain (`LAST_BALANCE_BEFORE`, in `chainsOfPeriod`) and
 * every SMS submission (`chainNeighbours`, its `previous` and `next` sides). Through
 * `messages_sim_received` they walk the SIM's messages back from the time and filter each: a
 * SIM whose messages print no balance (an operator whose texts never state one, a SIM whose
 * earlier messages are all an unknown sender's or restatements) had every message of its
 * history read, for a balance that does not exist, at each reconciliation and each SMS.
 *
 * `messages_sim_balance` holds the chain's messages that printed a balance, in the chain's
 * order (the predicate is IN_CHAIN's and `balance_after is not null`, spelled as the reads
 * spell them: the planner uses a partial index when the query's predicate implies the
 * index's). Its price: an entry for each message version that printed a balance, nearly every
 * message (measured on the SMS path, docs/decisions/history.md). Built concurrently (SHARE
 * UPDATE EXCLUSIVE: messages are read and written while it builds); until it is built the reads
 * walk `messages_sim_received` as before. `down()` drops it.
 */
export class Migration0012ChainBalances extends Migration {
  override name = "Migration0012ChainBalances";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "messages_sim_balance",
      on: `evidence.messages (sim_id, received_at desc, stored_at desc)
        where state = 'done' and outcome not in ('unknown_sender', 'restated') and balance_after is not null`,
    },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the index is built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists evidence.messages_sim_balance`);
  }
}
