import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The transaction list's filters (store/transactions.ts, `listTransactions`; GET
 * /v1/transactions): the page is the newest transactions first, and a state or an agent's scope
 * (pending work plus what the agent launched) was a filter on `transactions_newest` walked
 * newest first: a rare state (`pending`, `launched`), an agent with few launches, or a state the
 * agent has few of read the whole history (500,000 transactions: 11,627 to 16,054 buffers, 145
 * to 566 ms, for 0 to 30 rows; with these indexes 3 to 110 buffers, under 0.2 ms;
 * docs/decisions/history.md, "Per table"). The list now reads disjoint parts, each a range of
 * one of these indexes in the page's order: `transactions_state_newest` (a state's, and an
 * agent's pending work) and `transactions_agent_state` (an agent's launches in a state), which
 * replaces `transactions_launched_by` (`launched_by, created_at desc`): no statement read it,
 * the list's `state = 'pending' or launched_by = ?` could not use it.
 *
 * Built and dropped concurrently after the migrations (kit `concurrentIndexes`,
 * `concurrentDrops`; the drop first): SHARE UPDATE EXCLUSIVE on intake.transactions, whose reads
 * and writes go on meanwhile; the dropped index is taken ACCESS EXCLUSIVE once no transaction
 * uses it. Until the builds end the list walks `transactions_newest` as before. Each index costs
 * an entry per transaction (two where the one dropped cost one).
 *
 * `down()` puts back the schema of Migration0005Autovacuum exactly (the test compares the schema
 * dumps): `drop index` takes ACCESS EXCLUSIVE on intake.transactions until it commits
 * (milliseconds), and `transactions_launched_by` is built again with a plain `create index`
 * (SHARE: writes wait for the build). Not part of a release: it lets the benchmark run the
 * migration again on a history.
 */
export class Migration0006ListIndexes extends Migration {
  override name = "Migration0006ListIndexes";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "transactions_state_newest", on: `intake.transactions (state, created_at desc, id desc)` },
    { name: "transactions_agent_state", on: `intake.transactions (launched_by, state, created_at desc, id desc)` },
  ];

  static readonly concurrentDrops: readonly string[] = ["transactions_launched_by"];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built and dropped after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists intake.transactions_state_newest`);
    this.addSql(`drop index if exists intake.transactions_agent_state`);
    this.addSql(`create index transactions_launched_by on intake.transactions (launched_by, created_at desc)`);
  }
}
