import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import type { Scope } from "../domain/scope.ts";
import { migrations } from "./migrations/index.ts";
import { loadFigures } from "./report.ts";

// The load block's counts kept at each change (Migration0009LoadCounts): the unproven backlog
// and the settled operations per agent, the fleet's dismissed messages. Filled by the migration
// from the rows already there, then equal after every change to count(*) over the rows, for the
// fleet and each agent, as loadFigures reads them.

let tdb: TestDatabase;
let db: Database;

const uuid = (prefix: string, n: number) => `00000000-0000-4000-${prefix}-${String(n).padStart(12, "0")}`;
const AGENTS = [1, 2, 3].map((i) => uuid("a000", i));
const STATUSES = ["confirmed", "failed", "no_evidence", "no_evidence", "rejected", "awaiting_evidence"];
let seed = 7;
const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];

async function insertOps(from: number, count: number) {
  const ops = Array.from({ length: count }, (_, k) => ({
    operation_id: uuid("c000", from + k),
    agent_id: pick(AGENTS),
    is_transfer: next() < 0.85,
    status: pick(STATUSES),
    settled_by_hand: next() < 0.15 ? pick(["arrived", "failed"]) : null,
    day: 1 + Math.floor(next() * 20),
    finished: next() < 0.7,
  }));
  await db.em().execute(
    `insert into analytics.operations (operation_id, agent_id, op_type, is_transfer, status, montant, created_at,
       finished_at, local_day, local_dow, local_hour, settled_by_hand, changed_at)
     select o.operation_id, o.agent_id, case when o.is_transfer then 'deposit' else 'balance' end, o.is_transfer, o.status,
       1000, '2026-03-01'::timestamptz + o.day * interval '1 day',
       case when o.finished then '2026-03-01'::timestamptz + o.day * interval '1 day' + interval '1 hour' end,
       '2026-03-01'::date + o.day, 1, 10, o.settled_by_hand, now()
     from jsonb_to_recordset(?::jsonb) as o(operation_id uuid, agent_id uuid, is_transfer boolean, status text,
       settled_by_hand text, day int, finished boolean)`,
    [JSON.stringify(ops)],
  );
}

async function insertMessages(from: number, count: number) {
  await db.em().execute(
    `insert into analytics.messages (message_id, received_at, local_day, kind, outcome, dismissed_at)
     select ('00000000-0000-4000-d000-' || lpad((? + g)::text, 12, '0'))::uuid, now(), '2026-03-02', 'DEP', 'orphan',
       case when g % 4 = 0 then now() end
     from generate_series(1, ?) g`,
    [from, count],
  );
}

const SCOPES: Scope[] = [{ fleet: true }, ...AGENTS.map((agentId) => ({ fleet: false as const, agentId }))];

/** The old statements: counts over the rows. */
async function truth(scope: Scope) {
  const where = scope.fleet ? "true" : `agent_id = '${scope.agentId}'`;
  const [r] = await rows<{ unproven: string; settled: string; oldest: Date | null; dismissed: string }>(
    db.em(),
    `select (select count(*) from analytics.operations where status = 'no_evidence' and is_transfer and ${where}) as unproven,
       (select count(*) from analytics.operations where settled_by_hand is not null and ${where}) as settled,
       (select min(coalesce(finished_at, created_at)) from analytics.operations
         where status = 'no_evidence' and is_transfer and ${where}) as oldest,
       (select count(*) from analytics.messages where dismissed_at is not null) as dismissed`,
  );
  return {
    unproven_waiting: BigInt(r!.unproven),
    settled: BigInt(r!.settled),
    oldest_unproven: r!.oldest ? new Date(r!.oldest).toISOString() : null,
    dismissed: scope.fleet ? BigInt(r!.dismissed) : undefined,
  };
}

async function expectExact() {
  for (const scope of SCOPES) {
    const load = await loadFigures(db.em(), scope, new Date());
    const t = await truth(scope);
    expect({
      unproven_waiting: load.unproven_waiting,
      settled: load.settled,
      oldest_unproven: load.oldest_unproven?.toISOString() ?? null,
      dismissed: scope.fleet ? load.dismissed : undefined,
    }).toEqual(t);
  }
  // A row per agent, whatever the history; the fleet's dismissed in one row.
  const kept = await rows<{ n: string }>(db.em(), `select count(*) as n from analytics.agent_load_counts`);
  expect(Number(kept[0]!.n)).toBeLessThanOrEqual(AGENTS.length);
}

beforeAll(async () => {
  tdb = await freshDatabase();
  // A history migrated live: rows before Migration0009LoadCounts, counted by its fill.
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations: migrations.slice(0, 8), poolMax: 2 });
  await insertOps(0, 400);
  await insertMessages(0, 200);
  await db.close();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations, poolMax: 3 });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("the load block's kept counts", () => {
  it("are filled by the migration from the rows already there", async () => {
    expect((await truth({ fleet: true })).unproven_waiting).toBeGreaterThan(0n);
    await expectExact();
  });

  it("follow inserts, every change into and out of the counted states, an agent change and deletes", async () => {
    const em = db.em();
    await insertOps(1000, 300);
    await insertMessages(1000, 100);
    await expectExact();
    const statements = [
      `update analytics.operations set status = 'confirmed' where status = 'no_evidence' and local_day = '2026-03-03'`,
      `update analytics.operations set status = 'no_evidence' where status in ('failed', 'awaiting_evidence') and local_day = '2026-03-04'`,
      `update analytics.operations set is_transfer = not is_transfer where local_day = '2026-03-05'`,
      `update analytics.operations set settled_by_hand = 'arrived' where settled_by_hand is null and local_day = '2026-03-06'`,
      `update analytics.operations set settled_by_hand = null where local_day = '2026-03-07'`,
      `update analytics.operations set agent_id = '${AGENTS[0]}' where agent_id = '${AGENTS[1]}' and local_day = '2026-03-08'`,
      `update analytics.operations set finished_at = now() where local_day = '2026-03-09'`,
      `delete from analytics.operations where local_day = '2026-03-10'`,
      `update analytics.messages set dismissed_at = now() where dismissed_at is null and message_id::text like '%1'`,
      `update analytics.messages set dismissed_at = null where message_id::text like '%4'`,
      `delete from analytics.messages where message_id::text like '%8'`,
    ];
    for (const sql of statements) {
      await em.execute(sql);
      await expectExact();
    }
  });

  it("lose no change of two transactions committing on two connections", async () => {
    const [w1, w2] = [new pg.Client({ connectionString: tdb.url }), new pg.Client({ connectionString: tdb.url })];
    await Promise.all([w1.connect(), w2.connect()]);
    try {
      // The second waits for the first's row of the agent's counts, then adds its change to it.
      await w1.query(`begin`);
      await w1.query(
        `update analytics.operations set status = 'no_evidence', is_transfer = true
          where agent_id = $1 and local_day = '2026-03-11'`,
        [AGENTS[0]],
      );
      await w1.query(`update analytics.messages set dismissed_at = now() where message_id::text like '%2'`);
      await w2.query(`begin`);
      const second = (async () => {
        await w2.query(
          `update analytics.operations set status = 'confirmed', settled_by_hand = 'arrived'
            where agent_id = $1 and local_day = '2026-03-12'`,
          [AGENTS[0]],
        );
        await w2.query(`update analytics.messages set dismissed_at = null where message_id::text like '%3'`);
        await w2.query(`commit`);
      })();
      await new Promise((r) => setTimeout(r, 200));
      await w1.query(`commit`);
      await second;
    } finally {
      await Promise.all([w1.end(), w2.end()]);
    }
    await expectExact();
  });

  it("equal a rebuild, and are empty after the reset", async () => {
    const before = await rows(
      db.em(),
      `select * from analytics.agent_load_counts where unproven <> 0 or settled <> 0 order by 1`,
    );
    await db.em().execute(`select analytics.rebuild_rollups()`);
    expect(await rows(db.em(), `select * from analytics.agent_load_counts order by 1`)).toEqual(before);
    for (const table of ["operations", "messages"]) await db.em().execute(`delete from analytics.${table}`);
    await expectExact();
    expect((await loadFigures(db.em(), { fleet: true }, new Date())).unproven_waiting).toBe(0n);
  });
});
