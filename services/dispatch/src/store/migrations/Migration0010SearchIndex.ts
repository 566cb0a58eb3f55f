import { Migration, TRIGRAM_EXTENSION_SQL, type ConcurrentIndex } from "@transferops/kit";

/**
 * What the list's `search` reads of an operation, in one text: the lower-cased recipient name,
 * request_id and operation_id, separated by chr(1), then chr(2) and the digits of the
 * destination number. `listOperations` (store/operations.ts) matches a search's text with
 * `%text%` and its digits with `%<chr(2)>%digits%` (the number alone), on this very expression
 * so that the trigram index below serves both; neither separator can be typed in a search.
 */
export const OPERATION_SEARCH_TEXT =
  `(lower(coalesce(dest_name, '')) || chr(1) || lower(request_id) || chr(1) || operation_id::text` +
  ` || chr(2) || regexp_replace(msisdn_dest, '[^0-9]', '', 'g'))`;

/**
 * The list's `search` (a substring, `%x%`, which no btree serves) read every operation when it
 * matched little: 1,079 ms over 100,000 operations for a search matching nothing
 * (npm run bench:history; docs/decisions/history.md). A trigram index (`pg_trgm`, GIN) on
 * OPERATION_SEARCH_TEXT finds the matches; the planner still walks `operations_created` for a
 * search that matches many (the newest page comes first).
 *
 * Built concurrently (creates, claims and proofs go on while it builds). One GIN entry set per
 * written row version of an operation, put in GIN's pending list (`fastupdate`): the price of a
 * bounded search (docs/decisions/dispatch.md, "Cost of one transfer").
 */
export class Migration0010SearchIndex extends Migration {
  override name = "Migration0010SearchIndex";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "operations_search_trgm", on: `dispatch.operations using gin (${OPERATION_SEARCH_TEXT} gin_trgm_ops)` },
  ];

  up(): void {
    // The extension, in the migrator's transaction; the index is built after it (openDatabase).
    for (const sql of TRIGRAM_EXTENSION_SQL) this.addSql(sql);
  }
}
