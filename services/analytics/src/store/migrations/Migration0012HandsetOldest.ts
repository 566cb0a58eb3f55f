import { Migration, type ConcurrentIndex } from "@transferops/kit";

/** A waiting dialled transfer (Migration0010HandsetDaily's `operations_device_waiting` predicate). */
const WAITING_DIALLED = `status = 'no_evidence' and is_transfer and dialled`;
/**
 * The handset, whether the transfer finished before it was created (two clocks; store/report.ts
 * `oldestWaiting` reads those apart, without the window's bound), then the time the report shows;
 * with the columns of these expressions and the day, so that a read is index-only.
 */
const ORDERED = `coalesce(device_id, ''), coalesce(finished_at < created_at, false), coalesce(finished_at, created_at)`;
const INCLUDED = `include (local_day, finished_at, created_at, device_id) where ${WAITING_DIALLED}`;

/**
 * Each handset's oldest waiting transfer of the unproven-by-handset report (store/report.ts
 * `unprovenByHandset`, `oldestWaiting`) was a min() over the handset's waiting entries of the
 * window in `operations_device_waiting` (keyed by device and day): the handset's whole backlog
 * of the window, which grows with the history (2,008 entries a handset, 99 handsets, 4,556
 * buffers, 50 to 80 ms at 10,000,000 operations for 365 days; an agent's filtered from the
 * fleet's, 1,968 removed a handset; docs/decisions/history.md). It is now the first entry of
 * the handset's from the window's start, one descent, in an index ordered by that time:
 *
 * - `operations_device_oldest`: the handset, then the time (the fleet's view);
 * - `operations_agent_device_oldest`: the agent first (an agent's view), so that its entries are
 *   not filtered out of the fleet's.
 *
 * Keyed by the time, where Migration0010HandsetDaily's generic plan joined `operations_day`: the
 * statement is now `order by ... limit 1` from a lower bound on that very key, which no
 * other index serves (docs/decisions/history.md, "Unproven by handset").
 * `operations_device_waiting` is read by nothing else: dropped.
 *
 * Nothing in the migrator's transaction. After it (kit `openDatabase`), `drop index
 * concurrently` then `create index concurrently` ×2: SHARE UPDATE EXCLUSIVE on
 * analytics.operations, the consumers' writes and the routes' reads go on; each build reads the
 * table once (3.0 s and 2.3 s at 10,000,000 operations, 27 and 30 MB; the table in cache). Between the drop and the builds the report's
 * min walks another index.
 *
 * `down()` puts back the schema of Migration0011WaitingMessages: the two indexes dropped, the
 * old one built in the migrator's transaction (a plain `create index`: SHARE on
 * analytics.operations, writes wait for the build; `drop index` ACCESS EXCLUSIVE until the
 * commit). Not part of a release: it lets the benchmark run the migration again on a history.
 */
export class Migration0012HandsetOldest extends Migration {
  override name = "Migration0012HandsetOldest";

  static readonly concurrentDrops: readonly string[] = ["operations_device_waiting"];

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "operations_device_oldest", on: `analytics.operations (${ORDERED}) ${INCLUDED}` },
    { name: "operations_agent_device_oldest", on: `analytics.operations (agent_id, ${ORDERED}) ${INCLUDED}` },
  ];

  up(): void {
    // Nothing in the migrator's transaction: the indexes are changed after it (openDatabase).
  }

  override down(): void {
    this.addSql(`drop index if exists analytics.operations_agent_device_oldest`);
    this.addSql(`drop index if exists analytics.operations_device_oldest`);
    this.addSql(`create index operations_device_waiting on analytics.operations (coalesce(device_id, ''), local_day)
      include (finished_at, created_at, device_id, agent_id) where ${WAITING_DIALLED}`);
  }
}
