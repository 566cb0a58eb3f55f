import { Migration, type ConcurrentIndex } from "@transferops/kit";

/** Digits a window holds: a search with a run of at least this many digits is found by its windows. */
export const SEARCH_WINDOW = 6;

/**
 * An operation's digit windows, as `dispatch.search_windows` computes them (the index below):
 * every SEARCH_WINDOW-long substring of each run of at least SEARCH_WINDOW digits in its name,
 * request_id and operation_id, and, after chr(2), of the destination number's digits.
 */
export const OPERATION_SEARCH_WINDOWS = `dispatch.search_windows(dest_name, request_id, operation_id, msisdn_dest)`;

/**
 * The windows a search's text must all find in an operation for the text to be within one of
 * its fields (the windows of its digit runs), or its digits to be within the number (`number`:
 * the windows of the digits, after chr(2)); empty when the search has no run long enough.
 */
export function searchWindows(search: string, number = false): string[] {
  const runs = number ? [search] : (search.match(/[0-9]+/g) ?? []);
  const windows = new Set<string>();
  for (const run of runs)
    for (let i = 0; i + SEARCH_WINDOW <= run.length; i++)
      windows.add(`${number ? "\u0002" : ""}${run.slice(i, i + SEARCH_WINDOW)}`);
  return [...windows];
}

/**
 * The list's `search` of digits read every operation sharing the search's trigrams: ten digits
 * make a thousand trigrams, which every number, request id and operation id of the history
 * share, so the trigram index (Migration0010SearchIndex) gave candidates in proportion to the
 * history (27.6 ms p50 for `5000001` at 10,000,000 operations, 7.6 ms at 1,000,000; hundreds of
 * rows rechecked for none matching; docs/decisions/history.md). A six-digit window is one of a
 * million: an index of each operation's windows (`dispatch.search_windows`, GIN) gives as
 * candidates the operations whose fields hold every window of the search, about the ones that
 * match. Only runs of six digits or more are windowed, so an operation has a few entries (its
 * number's four to seven, a numeric request id's): a name or a short search still reads the
 * trigram index (store/operations.ts `listOperations` says which part reads which). The price:
 * every written version of an operation computes its windows (about 30 µs in PostgreSQL) and
 * puts its few entries in the GIN's pending list.
 *
 * On a live history: `create function` takes no lock on a table; the index is built
 * concurrently after this migration (SHARE UPDATE EXCLUSIVE: creates, claims and proofs go on);
 * until it is built a search reads the trigram index as before. `down()` drops both (`drop
 * index` takes ACCESS EXCLUSIVE on dispatch.operations until it commits: milliseconds).
 */
export class Migration0013SearchWindows extends Migration {
  override name = "Migration0013SearchWindows";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "operations_search_windows", on: `dispatch.operations using gin (${OPERATION_SEARCH_WINDOWS})` },
  ];

  up(): void {
    // PL/pgSQL, not SQL: a SQL function of several statements is planned again in every
    // statement that writes an operation (about 400 µs each, measured); PL/pgSQL keeps its plans
    // for the connection and evaluates these expressions without a query (about 30 µs).
    this.addSql(`create function dispatch.search_windows(name text, request_id text, operation_id uuid, msisdn text)
      returns text[] language plpgsql immutable parallel safe as $$
      declare
        windows text[] := '{}';
        run text;
      begin
        foreach run in array regexp_split_to_array(
            coalesce(name, '') || ' ' || coalesce(request_id, '') || ' ' || coalesce(operation_id::text, ''), '[^0-9]+') loop
          for i in 1 .. length(run) - ${SEARCH_WINDOW - 1} loop
            windows := windows || substr(run, i, ${SEARCH_WINDOW});
          end loop;
        end loop;
        run := regexp_replace(coalesce(msisdn, ''), '[^0-9]', '', 'g');
        for i in 1 .. length(run) - ${SEARCH_WINDOW - 1} loop
          windows := windows || (chr(2) || substr(run, i, ${SEARCH_WINDOW}));
        end loop;
        return windows;
      end $$`);
  }

  override down(): void {
    this.addSql(`drop index if exists dispatch.operations_search_windows`);
    this.addSql(`drop function dispatch.search_windows(text, text, uuid, text)`);
  }
}
