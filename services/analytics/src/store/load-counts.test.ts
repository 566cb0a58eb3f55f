import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { openDatabase, rows, type Database, type EntityManager } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import type { Scope } from "../domain/scope.ts";
import { migrations } from "./migrations/index.ts";
import { loadFigures } from "./report.ts";

// The load block's counts kept at each change (Migration0009LoadCounts, Migration0011WaitingMessages,
// Migration0016AgentDismissed): the unproven backlog, the settled operations and the dismissed
// messages per agent, the fleet's dismissed and waiting messages. Filled by the migrations from
// the rows already there, then equal after every change to count(*) over the rows, for the fleet
// and each agent, as loadFigures reads them.

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

const OUTCOMES = ["ambiguous", "divergent", "orphan", "orphan", "not_correlated", "attached", "pending"];
const KINDS = ["DEP", "BAL", "FAIL", "OTHER", null];

/** Messages of every outcome and kind, some naming an operation, some dismissed: a part of them waiting. */
async function insertMessages(from: number, count: number) {
  const msgs = Array.from({ length: count }, (_, k) => ({
    message_id: uuid("d000", from + k),
    minutes: Math.floor(next() * 20 * 1440),
    kind: pick(KINDS),
    outcome: pick(OUTCOMES),
    operation_id: next() < 0.3 ? uuid("c000", Math.floor(next() * 400)) : null,
    dismissed: next() < 0.25,
  }));
  await db.em().execute(
    `insert into analytics.messages (message_id, received_at, local_day, kind, outcome, operation_id, dismissed_at)
     select m.message_id, '2026-03-01'::timestamptz + m.minutes * interval '1 minute', '2026-03-02', m.kind, m.outcome,
       m.operation_id, case when m.dismissed then now() end
     from jsonb_to_recordset(?::jsonb) as m(message_id uuid, minutes int, kind text, outcome text, operation_id uuid,
       dismissed boolean)`,
    [JSON.stringify(msgs)],
  );
}

const SCOPES: Scope[] = [{ fleet: true }, ...AGENTS.map((agentId) => ({ fleet: false as const, agentId }))];

const iso = (v: unknown) => (v ? new Date(v as string).toISOString() : null);

/** The old statements: counts over the rows (the waiting messages': the one loadFigures read before Migration0011). */
async function truth(scope: Scope, em: EntityManager) {
  const where = scope.fleet ? "true" : `agent_id = '${scope.agentId}'`;
  const ownWhere = scope.fleet ? "true" : `o.agent_id = '${scope.agentId}'`;
  const [r] = await rows<Record<string, string | null>>(
    em,
    `select (select count(*) from analytics.operations where status = 'no_evidence' and is_transfer and ${where}) as unproven,
       (select count(*) from analytics.operations where settled_by_hand is not null and ${where}) as settled,
       (select min(coalesce(finished_at, created_at)) from analytics.operations
         where status = 'no_evidence' and is_transfer and ${where}) as oldest,
       (select count(*) from analytics.messages where dismissed_at is not null) as dismissed,
       (select count(*) from analytics.messages m join analytics.operations o using (operation_id)
         where m.dismissed_at is not null and ${ownWhere}) as agent_dismissed,
       w.messages_waiting, w.oldest_message
     from (select count(*) as messages_waiting, min(received_at) as oldest_message
           from analytics.messages where operation_id is null and dismissed_at is null
             and outcome in ('ambiguous', 'divergent', 'orphan', 'not_correlated')
             and (kind is null or kind in ('DEP', 'BAL', 'FAIL'))) w`,
  );
  return {
    unproven_waiting: BigInt(r!.unproven!),
    settled: BigInt(r!.settled!),
    oldest_unproven: iso(r!.oldest),
    // An agent's view has no waiting message (a waiting message names no operation).
    messages_waiting: scope.fleet ? BigInt(r!.messages_waiting!) : 0n,
    oldest_message: scope.fleet ? iso(r!.oldest_message) : null,
    // An agent's: the dismissed messages tied to its operations.
    dismissed: BigInt(scope.fleet ? r!.dismissed! : r!.agent_dismissed!),
  };
}

async function expectExact(em: EntityManager = db.em()) {
  for (const scope of SCOPES) {
    const load = await loadFigures(em, scope, new Date());
    const t = await truth(scope, em);
    expect({
      unproven_waiting: load.unproven_waiting,
      settled: load.settled,
      oldest_unproven: iso(load.oldest_unproven),
      messages_waiting: load.messages_waiting,
      oldest_message: iso(load.oldest_message),
      dismissed: load.dismissed,
    }).toEqual(t);
  }
  // A row per agent, whatever the history; the fleet's dismissed in one row.
  for (const table of ["agent_load_counts", "agent_dismissed_counts"]) {
    const kept = await rows<{ n: string }>(db.em(), `select count(*) as n from analytics.${table}`);
    expect(Number(kept[0]!.n)).toBeLessThanOrEqual(AGENTS.length);
  }
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
    const fleet = await truth({ fleet: true }, db.em());
    expect(fleet.unproven_waiting).toBeGreaterThan(0n);
    expect(fleet.messages_waiting).toBeGreaterThan(0n);
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
      // Into and out of the unmatched queue: correlated, linked, re-kinded, restated, resolved.
      `update analytics.messages set outcome = 'orphan' where outcome in ('pending', 'attached') and message_id::text like '%5'`,
      `update analytics.messages set outcome = 'attached' where outcome = 'orphan' and message_id::text like '%6'`,
      `update analytics.messages set kind = 'OTHER' where kind = 'DEP' and message_id::text like '%7'`,
      `update analytics.messages set kind = null where kind = 'OTHER'`,
      `update analytics.messages set operation_id = '${uuid("c000", 1)}' where operation_id is null and message_id::text like '%9'`,
      `update analytics.messages set operation_id = null where message_id::text like '%0'`,
      `update analytics.messages set received_at = received_at - interval '30 days' where message_id::text like '%5'`,
      `delete from analytics.messages where operation_id is null and dismissed_at is null and message_id::text like '%6'`,
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

  it("are what loadFigures reads: the waiting messages differ from the rows once the trigger is dropped", async () => {
    const dropped = db.tx(async (em) => {
      await em.execute(`drop trigger message_load_counts_update on analytics.messages`);
      // Into the queue, the dismissed left as they are: only the waiting count can tell.
      await em.execute(
        `update analytics.messages set outcome = 'orphan', kind = 'DEP', operation_id = null where dismissed_at is null`,
      );
      await expectExact(em);
    });
    // The comparison fails, and its transaction (the drop with it) is rolled back.
    await expect(dropped).rejects.toThrow(/deeply equal/);
    await expectExact();
  });

  it("are what loadFigures reads: an agent's dismissed differs from the rows once its trigger is dropped", async () => {
    const dropped = db.tx(async (em) => {
      await em.execute(`drop trigger agent_dismissed_counts_update on analytics.agent_msg_daily`);
      // Messages tied to operations dismissed: only an agent's count can tell.
      const dismissed = await rows(
        em,
        `update analytics.messages m set dismissed_at = now() from analytics.operations o
          where o.operation_id = m.operation_id and m.dismissed_at is null returning m.message_id`,
      );
      expect(dismissed.length).toBeGreaterThan(0);
      await expectExact(em);
    });
    await expect(dropped).rejects.toThrow(/deeply equal/);
    await expectExact();
  });

  it("equal a rebuild, and are empty after the reset", async () => {
    const kept = async () => [
      await rows(db.em(), `select * from analytics.agent_load_counts where unproven <> 0 or settled <> 0 order by 1`),
      await rows(db.em(), `select * from analytics.message_load_counts`),
      await rows(db.em(), `select * from analytics.agent_dismissed_counts where dismissed <> 0 order by 1`),
    ];
    const before = await kept();
    expect(Number((before[1]![0] as { waiting: string }).waiting)).toBeGreaterThan(0);
    expect(before[2]!.length).toBeGreaterThan(0);
    await db.em().execute(`select analytics.rebuild_rollups()`);
    expect(await kept()).toEqual(before);
    for (const table of ["operations", "messages"]) await db.em().execute(`delete from analytics.${table}`);
    await expectExact();
    expect((await loadFigures(db.em(), { fleet: true }, new Date())).unproven_waiting).toBe(0n);
  });
});
