import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * The arbitration queue in an agent's scope and the settled-on-word list, each answered from
 * entries of their own (store/queues.ts; docs/decisions/history.md, "An agent's page, SIM by
 * SIM"):
 *
 * - `operations_no_evidence_sim`, `operations_no_evidence_agent`: the unproven backlog by SIM
 *   and by agent, newest finished first. An agent's queue (its own operations and its grant's
 *   SIMs) walked the fleet's backlog (`operations_no_evidence_page`) until its page was full:
 *   about 50 entries over its share of the fleet, and every entry of the window (of the whole
 *   backlog with `all`) when its scope had fewer than a page: a new or quiet SIM. Now a page at
 *   most from each SIM of the grant and from the agent's own, merged.
 * - `operations_settled_on_word`: the transfers confirmed on a person's word that no operator
 *   message proves, by decision time. The list walked every decision of its window
 *   (`operations_decided`) to keep these (about 500 entries for 50 here; in an agent's scope
 *   every decision of the window); now a walk of these alone. An entry leaves when a proof
 *   attaches. `operations_decided`, which nothing else reads, is dropped (concurrently, after
 *   the builds: the kit builds first), one entry fewer for each decision.
 *
 * Partial on `no_evidence` (one entry a transfer left unproven, as `operations_no_evidence_page`),
 * with what the queue filters on besides (`op_type`, `contradicting_message_id`) in the entry, so
 * a grant of many SIMs reads a page of entries from each, not a page of rows (index-only), and
 * the page's rows alone; and on the list's own predicate, spelled as the query spells it. Built concurrently (SHARE
 * UPDATE EXCLUSIVE: creates, claims and proofs go on while they build); until built, the reads
 * go as before. `down()` drops them and builds `operations_decided` again.
 */
export class Migration0016ScopedQueues extends Migration {
  override name = "Migration0016ScopedQueues";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_no_evidence_sim",
      on: `dispatch.operations (sim_id, finished_at desc, operation_id) include (op_type, contradicting_message_id)
        where status = 'no_evidence'`,
    },
    {
      name: "operations_no_evidence_agent",
      on: `dispatch.operations (agent_id, finished_at desc, operation_id) include (op_type, contradicting_message_id)
        where status = 'no_evidence'`,
    },
    {
      name: "operations_settled_on_word",
      on: `dispatch.operations (decided_at desc, operation_id)
        where status = 'confirmed' and confirmed_by in ('settle', 'arbitrate') and evidence_message_id is null`,
    },
  ];

  static readonly concurrentDrops: readonly string[] = ["operations_decided"];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are built after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_no_evidence_sim`);
    this.addSql(`drop index if exists dispatch.operations_no_evidence_agent`);
    this.addSql(`drop index if exists dispatch.operations_settled_on_word`);
    this.addSql(`create index operations_decided on dispatch.operations (decided_at) where decided_at is not null`);
  }
}
