import { Migration, SEARCH_GIN_PENDING_LIST } from "@transferops/kit";

/**
 * The contact search read the whole of its trigram index's pending list at every call, up to
 * 4 MB (the server's default): an import's thousands of contacts sit there until the list is
 * merged, and every search reads them, whatever it looks for (docs/decisions/history.md, "A
 * search's pending list"). The index keeps a list of at most 1 MB (SEARCH_GIN_PENDING_LIST).
 * `alter index ... set (gin_pending_list_limit)` takes SHARE UPDATE EXCLUSIVE on the index (no
 * read or write waits on it) and rewrites nothing. `down()` resets it (the same lock).
 */
export class Migration0006SearchPendingList extends Migration {
  override name = "Migration0006SearchPendingList";

  up(): void {
    this.addSql(`alter index messaging.contacts_search_trgm set (${SEARCH_GIN_PENDING_LIST})`);
  }

  override down(): void {
    this.addSql(`alter index messaging.contacts_search_trgm reset (gin_pending_list_limit)`);
  }
}
