import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database, type EntityManager } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { TRANSACTION_STATES, type TransactionState } from "../domain/index.ts";
import { migrations } from "./migrations/index.ts";
import { listTransactions, type ListScope, type TransactionRecord } from "./transactions.ts";

// The transaction list reads about a page of rows whatever the history holds
// (Migration0006ListIndexes; docs/decisions/history.md, "Per table"): for every combination of
// state and scope, its statement's plan, generic (the kit prepares it under a name) or planned
// for its values, reads at most its page and one entry per part, and returns what the statement
// it replaced (its filters kept below as the reference) returned. The statement before it read
// all 20,000 rows for a rare state or an agent with few launches.

let tdb: TestDatabase;
let db: Database;
let client: pg.Client;

const TRANSACTIONS = 20_000;
const agent = (n: number) => `00000000-0000-4000-a000-${String(n).padStart(12, "0")}`;
/** Agents 1 to 10 launched about 2,000 each (agent 8 every closed one), agent 11 two, agent 12 none. */
const AGENTS = [1, 8, 11, 12].map(agent);

/** The list as the statement before Migration0006ListIndexes filtered it, the scope's `or` whole. */
async function reference(em: EntityManager, q: ListScope): Promise<TransactionRecord[]> {
  return rows<TransactionRecord>(
    em,
    `select * from intake.transactions where (?::text is null or state = ?)
       and (?::uuid is null or state = 'pending' or launched_by = ?) order by created_at desc, id desc limit ?`,
    [q.state, q.state, q.agentId, q.agentId, q.limit],
  );
}

/** The list, and the statement it sent with its values. */
async function listed(q: ListScope) {
  let sent = { sql: "", params: [] as unknown[] };
  const recording = {
    execute: (sql: string, params: unknown[]) => {
      sent = { sql, params };
      return db.em().execute(sql, params as never[]);
    },
  } as unknown as EntityManager;
  return { found: await listTransactions(recording, q), ...sent };
}

/** Rows the plan's scans read: returned by them or removed by their filters, at every loop. */
function rowsRead(node: Record<string, unknown>): number {
  const own = node["Relation Name"]
    ? ((node["Actual Rows"] as number) + ((node["Rows Removed by Filter"] as number | undefined) ?? 0)) *
      (node["Actual Loops"] as number)
    : 0;
  return own + ((node["Plans"] as Record<string, unknown>[] | undefined) ?? []).reduce((n, p) => n + rowsRead(p), 0);
}

/** Rows read by the statement, planned for its values (custom) and without them (generic). */
async function readByPlan(sql: string, params: unknown[], statement: string) {
  let i = 0;
  await client.query(`prepare ${statement} as ${sql.replace(/\?/g, () => `$${++i}`)}`);
  const read = async (mode: string) => {
    await client.query(`set plan_cache_mode = ${mode}`);
    const values = params.map((p) => (typeof p === "number" ? String(p) : pg.escapeLiteral(String(p))));
    const r = await client.query(`explain (analyze, format json) execute ${statement}(${values.join(", ")})`);
    return rowsRead(r.rows[0]["QUERY PLAN"][0].Plan);
  };
  try {
    return { custom: await read("force_custom_plan"), generic: await read("force_generic_plan") };
  } finally {
    await client.query(`deallocate ${statement}`);
  }
}

const SCOPES: ListScope[] = [null, ...AGENTS].flatMap((agentId) =>
  [null, ...TRANSACTION_STATES].map((state: TransactionState | null) => ({ state, agentId, limit: 100 })),
);
const label = (q: ListScope) => `${q.agentId ? `agent ${Number(q.agentId.slice(-12))}` : "admin"}, ${q.state ?? "all"}`;

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "intake", migrations, poolMax: 2 });
  // Nearly all final, seven pending (one a released claim that keeps agent 1 as launcher), five
  // launched; two transactions a minute, so that the order's ties fall to `id`.
  await db.em().execute(
    `insert into intake.transactions (id, request_id, contact_id, receiver_name, receiver_phone, operator,
       received_amount_xaf, transaction_date, state, launched_by, created_at)
     select gen_random_uuid(), 'r' || g, 'c' || g, 'Receiver', '+237600000000', 'operator_a', 1000, t, s,
       case when g = 3017 then '${agent(1)}'::uuid
            when s = 'pending' then null
            when g in (500, 9000) then '${agent(11)}'::uuid
            else ('00000000-0000-4000-a000-' || lpad((1 + g % 10)::text, 12, '0'))::uuid end,
       t
     from (select g, timestamptz '2026-01-01 00:00Z' + (g / 2) * interval '1 minute' as t,
             case when g % 3000 = 17 then 'pending' when g % 4000 = 33 then 'launched' when g % 20 = 7 then 'closed'
                  when g % 12 = 5 then 'cancelled' else 'done' end as s
           from generate_series(1, ?::int) g) q`,
    [TRANSACTIONS],
  );
  await db.em().execute(`analyze intake.transactions`);
  client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
});
afterAll(async () => {
  await client?.end();
  await db?.close();
  await tdb?.drop();
});

describe("the transaction list", () => {
  it("returns what the filtered newest-first statement returned, for every state and scope and limit", async () => {
    for (const q of SCOPES) {
      for (const limit of [1, 7, 100]) {
        const { found } = await listed({ ...q, limit });
        expect(found, label(q)).toEqual(await reference(db.em(), { ...q, limit }));
      }
    }
    // The history holds each kind of answer: a full page, a short one, none.
    const sizes = await Promise.all(SCOPES.map(async (q) => (await listed(q)).found.length));
    expect(new Set(sizes)).toEqual(new Set([100, 9, 7, 5, 2, 0]));
  });

  it("reads at most its page and an entry per part over 20,000 transactions, planned for its values or not", async () => {
    const over: Record<string, { found: number; custom: number; generic: number }> = {};
    let n = 0;
    for (const q of SCOPES) {
      const { found, sql, params } = await listed(q);
      const read = await readByPlan(sql, params, `list_${++n}`);
      const page = q.limit + (q.agentId && !q.state ? TRANSACTION_STATES.length : 1);
      // Planned for its values, a full page may come from a part of a few hundred rows read whole
      // and sorted (a bitmap of agent 8's closed ones), cheaper than a page of scattered rows on a
      // table this small; the rows of a short answer are its page.
      const custom = found.length < q.limit ? page : 10 * q.limit;
      if (read.generic > page || read.custom > custom) over[label(q)] = { found: found.length, ...read };
    }
    expect(over).toEqual({});
  });
});
