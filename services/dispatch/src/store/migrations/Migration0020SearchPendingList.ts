import { Migration, SEARCH_GIN_PENDING_LIST, type ConcurrentIndex } from "@transferops/kit";
import { OPERATION_SEARCH_TEXT } from "./Migration0010SearchIndex.ts";
import { OPERATION_SEARCH_WINDOWS } from "./Migration0013SearchWindows.ts";

/**
 * The list's `search` read the whole of its GIN indexes' pending lists at every call, up to 4 MB
 * each (the server's default): the entries of every operation version written since the last
 * merge, whatever the search looks for. A search matching nothing on 10,000,000 operations was
 * 1.6 ms slower at p50 than on the empty database for that alone (docs/decisions/history.md,
 * "A search's pending list"). Each index keeps a list of at most 1 MB (SEARCH_GIN_PENDING_LIST).
 *
 * On a live history: `alter index ... set (gin_pending_list_limit)` takes SHARE UPDATE EXCLUSIVE
 * on the index (no read or write waits on it) and rewrites nothing; the list already pending is
 * merged by the next write past the new limit. On a fresh database the indexes are not built
 * yet when this runs (they are built concurrently after the migrations): `if exists` passes
 * over them and the declarations below build them with the limit. `down()` resets it (the same
 * lock).
 */
export class Migration0020SearchPendingList extends Migration {
  override name = "Migration0020SearchPendingList";

  /** The GIN indexes the list's `search` reads (Migration0010SearchIndex, Migration0013SearchWindows). */
  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    {
      name: "operations_search_trgm",
      on: `dispatch.operations using gin (${OPERATION_SEARCH_TEXT} gin_trgm_ops) with (${SEARCH_GIN_PENDING_LIST})`,
    },
    {
      name: "operations_search_windows",
      on: `dispatch.operations using gin (${OPERATION_SEARCH_WINDOWS}) with (${SEARCH_GIN_PENDING_LIST})`,
    },
  ];

  up(): void {
    for (const { name } of Migration0020SearchPendingList.concurrentIndexes)
      this.addSql(`alter index if exists dispatch.${name} set (${SEARCH_GIN_PENDING_LIST})`);
  }

  override down(): void {
    for (const { name } of Migration0020SearchPendingList.concurrentIndexes)
      this.addSql(`alter index if exists dispatch.${name} reset (gin_pending_list_limit)`);
  }
}
