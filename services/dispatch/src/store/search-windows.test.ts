// The list's search through each operation's digit windows (Migration0013SearchWindows),
// against real PostgreSQL: a window never hides an operation the search matches, and a search
// of digits is planned on the windows' index, not on the trigrams every number shares.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import { parseOperationListQuery } from "../domain/list-filters.ts";
import { searchWindows } from "./migrations/Migration0013SearchWindows.ts";
import { migrations } from "./migrations/index.ts";
import { listOperations, type OperationListFilter } from "./operations.ts";

let tdb: TestDatabase;
let db: Database;
const SIM = randomUUID();
const AGENT = randomUUID();

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "dispatch", migrations, poolMax: 2 });
  // 20,000 operations whose numbers, request ids and operation ids share every digit trigram.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, dest_name, sim_id, created_at)
     select gen_random_uuid(), 'order-' || (1000000 + g * 37), 'confirmed', 'aggregated', 'deposit', ?, 'operator_b', 1000,
       '6' || lpad(((g * 7919) % 20000 + 70000000)::text, 8, '0'), 'CLIENT ' || g, ?, now() - g * interval '1 minute'
     from generate_series(1, 20000) g`,
    [AGENT, SIM],
  );
  await db.em().execute(`vacuum analyze dispatch.operations`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

/** The list's filters for a search alone, as the route parses them. */
const filter = (search: string): OperationListFilter => {
  const parsed = parseOperationListQuery({
    status: "",
    sim_id: "",
    date: "",
    date_from: "",
    date_to: "",
    search,
    limit: 0,
  });
  if (!parsed.ok) throw new Error(`search ${search} refused`);
  return { ...parsed.value, agent_id: null };
};

const windowsOf = (name: string | null, requestId: string, operationId: string, msisdn: string) =>
  rows<{ w: string[] }>(db.em(), `select dispatch.search_windows(?, ?, ?::uuid, ?) as w`, [
    name,
    requestId,
    operationId,
    msisdn,
  ]).then((r) => r[0]!.w);

/** Every substring of `s` at least `min` long. */
const substrings = (s: string, min: number) =>
  Array.from({ length: s.length }, (_, i) =>
    Array.from({ length: s.length - i - min + 1 }, (_, j) => s.slice(i, i + min + j)),
  ).flat();

describe("an operation's digit windows", () => {
  it("hold every window of every part of its fields a search can match, and of its number's digits", async () => {
    const cases: [string | null, string, string, string][] = [
      ["Awa 2026110900", "ext-20261129-000123456", "0a1b2c3d-1234-4567-8901-234567890abc", "+237 699 12 34 56"],
      [null, "7777777", randomUUID(), "690000001"],
      ["Jean", "REQ-12345", "00000000-0000-4000-8000-123456789012", "237677000000"],
    ];
    for (const [name, requestId, operationId, msisdn] of cases) {
      const held = new Set(await windowsOf(name, requestId, operationId, msisdn));
      for (const field of [name ?? "", requestId.toLowerCase(), operationId])
        for (const part of substrings(field, 1))
          for (const w of searchWindows(part)) expect([field, part, held.has(w)]).toEqual([field, part, true]);
      for (const part of substrings(msisdn.replace(/\D/g, ""), 1))
        for (const w of searchWindows(part, true)) expect([msisdn, part, held.has(w)]).toEqual([msisdn, part, true]);
    }
    // A window spans no two fields and nothing but digits: a name's digits are not the number's.
    expect(await windowsOf("A 123", "456789", "aaaaaaaa-aaaa-4aaa-8aaa-aaaaaaaaaaaa", "6")).toEqual(["456789"]);
  });

  it("give a search of digits from its windows' index, with the matches the text gives", async () => {
    // `order-1740000` is operation 20,000's request id; `7000123` is within the numbers of a few.
    for (const search of ["1740000", "7000123", "670001234", "order-1740000"]) {
      const recorded = recordStatements();
      let found: string[];
      try {
        found = (await listOperations(db.em(), filter(search))).map((o) => o.request_id + " " + o.msisdn_dest);
      } finally {
        recorded.stop();
      }
      const [sql, params] = [recorded.statements.at(-1)!, recorded.params.at(-1)!];
      const plan = (await rows<{ "QUERY PLAN": string }>(db.em(), `explain (analyze, costs off) ${sql}`, params)).map(
        (r) => r["QUERY PLAN"],
      );
      expect([search, plan.some((l) => l.includes("operations_search_windows"))]).toEqual([search, true]);
      expect([search, plan.some((l) => l.includes("operations_search_trgm"))]).toEqual([search, false]);
      // The same answer as the text alone gives, read row by row.
      const truth = await rows<{ r: string }>(
        db.em(),
        `select request_id || ' ' || msisdn_dest as r from dispatch.operations
          where lower(request_id) like ? or msisdn_dest like ? order by created_at desc, operation_id desc limit 50`,
        [`%${search.toLowerCase()}%`, `%${search.replace(/\D/g, "")}%`],
      );
      expect([search, found]).toEqual([search, truth.map((t) => t.r)]);
      expect(found.length).toBeGreaterThan(0);
    }
  });
});

describe("the search's pending lists (Migration0020SearchPendingList)", () => {
  it("built on a fresh database with a pending list of at most 1 MB, which a write past it merges", async () => {
    const limits = await rows<{ name: string; options: string[] | null }>(
      db.em(),
      `select c.relname as name, c.reloptions as options from pg_class c join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'dispatch' and c.relname in ('operations_search_trgm', 'operations_search_windows')
        order by 1`,
    );
    expect(limits).toEqual([
      { name: "operations_search_trgm", options: ["gin_pending_list_limit=1024"] },
      { name: "operations_search_windows", options: ["gin_pending_list_limit=1024"] },
    ]);
    // 3,000 operations written one statement each: at the server's 4 MB their trigram entries
    // would all still be pending (about 230 pages); at 1 MB (128 pages of 8 kB) a write past it
    // merges the list.
    await db.em().execute(
      `do $$ begin for g in 1..3000 loop
         insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
           msisdn_dest, dest_name, sim_id, created_at)
         values (gen_random_uuid(), 'pending-' || gen_random_uuid(), 'queued', 'aggregated', 'deposit', '${AGENT}',
           'operator_b', 1000, '6' || (80000000 + g), 'PENDING ' || g, '${SIM}', now());
       end loop; end $$`,
    );
    // pgstattuple: the pending pages GIN's metapage counts (a contrib module of the server).
    await db.em().execute(`create extension if not exists pgstattuple`);
    const pending = await rows<{ pages: number }>(
      db.em(),
      `select pending_pages as pages from pgstatginindex('dispatch.operations_search_trgm')`,
    );
    expect(pending[0]!.pages).toBeLessThanOrEqual(128);
  });
});
