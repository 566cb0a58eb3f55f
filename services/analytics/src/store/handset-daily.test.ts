import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database, type EntityManager } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import type { Scope } from "../domain/scope.ts";
import { windowSince, type Window } from "../domain/window.ts";
import { and, agentFilter, dayFilter } from "./filters.ts";
import { migrations } from "./migrations/index.ts";
import { unprovenByHandset, unprovenByHandsetQuery } from "./report.ts";

// The unproven-by-handset sums kept per agent, day, device and label (Migration0010HandsetDaily)
// and each handset's oldest waiting transfer read from the window's start (Migration0012HandsetOldest):
// filled by the migration from the rows already there, then, after every change of a column the
// report reads, equal to the statement that grouped the window's rows (kept below as the
// reference), for the fleet and each agent, over several windows.

let tdb: TestDatabase;
let db: Database;

const uuid = (prefix: string, n: number) => `00000000-0000-4000-${prefix}-${String(n).padStart(12, "0")}`;
const AGENTS = [1, 2, 3].map((i) => uuid("a000", i));
const DEVICES = ["dev-a", "dev-b", "dev-c", "dev-d", null];
const STATUSES = ["confirmed", "failed", "no_evidence", "no_evidence", "rejected", "awaiting_evidence"];
const SETTLED = ["arrived", "confirmed", "did_not_arrive", "failed"];
let seed = 11;
const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)]!;

async function insertOps(from: number, count: number) {
  const ops = Array.from({ length: count }, (_, k) => {
    const device = pick(DEVICES);
    return {
      operation_id: uuid("c000", from + k),
      agent_id: pick(AGENTS),
      device_id: device,
      // dev-d has no row in analytics.devices: its label is the operations' largest.
      device_label: device && next() < 0.9 ? `label ${device}${next() < 0.2 ? " old" : ""}` : null,
      is_transfer: next() < 0.85,
      dialled: next() < 0.8,
      status: pick(STATUSES),
      settled_by_hand: next() < 0.3 ? pick(SETTLED) : null,
      has_message: next() < 0.3,
      montant: 500 * (1 + Math.floor(next() * 20)),
      day: 1 + Math.floor(next() * 20),
      minute: Math.floor(next() * 1440),
      finished: next() < 0.7,
    };
  });
  await db.em().execute(
    `insert into analytics.operations (operation_id, agent_id, device_id, device_label, op_type, is_transfer, dialled,
       status, montant, created_at, finished_at, local_day, local_dow, local_hour, settled_by_hand, has_message, changed_at)
     select o.operation_id, o.agent_id, o.device_id, o.device_label, case when o.is_transfer then 'deposit' else 'balance' end,
       o.is_transfer, o.dialled, o.status, o.montant,
       '2026-03-01'::timestamptz + o.day * interval '1 day' + o.minute * interval '1 minute',
       case when o.finished then '2026-03-01'::timestamptz + o.day * interval '1 day' + o.minute * interval '1 minute'
         + interval '1 hour' end,
       (('2026-03-01'::timestamptz + o.day * interval '1 day' + o.minute * interval '1 minute') at time zone 'UTC'
         + interval '1 hour')::date, 1, 10, o.settled_by_hand, o.has_message, now()
     from jsonb_to_recordset(?::jsonb) as o(operation_id uuid, agent_id uuid, device_id text, device_label text,
       is_transfer boolean, dialled boolean, status text, settled_by_hand text, has_message boolean, montant bigint,
       day int, minute int, finished boolean)`,
    [JSON.stringify(ops)],
  );
}

const SCOPES: Scope[] = [{ fleet: true }, ...AGENTS.map((agentId) => ({ fleet: false as const, agentId }))];
const WINDOWS: Window[] = [
  { all: true },
  { all: false, firstDay: "2026-03-01", lastDay: "2026-03-31" },
  { all: false, firstDay: "2026-03-05", lastDay: "2026-03-09" },
  { all: false, firstDay: "2026-03-12", lastDay: "2026-03-12" },
  { all: false, firstDay: "2026-03-09", lastDay: "2026-03-09" },
];

/** The statement the report read before Migration0010HandsetDaily: every dialled transfer of the window. */
async function reference(em: EntityManager, scope: Scope, w: Window) {
  const f = and(agentFilter(scope), dayFilter(w), { sql: "is_transfer and dialled", params: [] });
  const unproven = `status = 'no_evidence' or (settled_by_hand is not null and not has_message)`;
  return rows<Record<string, unknown>>(
    em,
    `select coalesce(o.device_id, '') as device_id, coalesce(d.label, o.label, '') as label, o.dialled, o.unproven,
       o.unproven_xaf, o.waiting, o.waiting_xaf, o.settled_arrived, o.settled_not_arrived, o.oldest_waiting
     from (select device_id, max(device_label) as label, count(*) as dialled,
             count(*) filter (where ${unproven}) as unproven,
             coalesce(sum(montant) filter (where ${unproven}), 0) as unproven_xaf,
             count(*) filter (where status = 'no_evidence') as waiting,
             coalesce(sum(montant) filter (where status = 'no_evidence'), 0) as waiting_xaf,
             count(*) filter (where status = 'confirmed' and settled_by_hand in ('arrived', 'confirmed') and not has_message)
               as settled_arrived,
             count(*) filter (where status = 'failed' and settled_by_hand in ('did_not_arrive', 'failed')) as settled_not_arrived,
             min(coalesce(finished_at, created_at)) filter (where status = 'no_evidence') as oldest_waiting
           from analytics.operations where ${f.sql} group by device_id) o
     left join analytics.devices d on d.device_id = o.device_id
     where o.unproven > 0
     order by o.unproven desc, o.unproven_xaf desc, device_id`,
    f.params,
  );
}

const asText = (row: object) => {
  const x = row as Record<string, unknown>;
  return {
    device_id: String(x.device_id),
    label: String(x.label),
    figures: [
      x.dialled,
      x.unproven,
      x.unproven_xaf,
      x.waiting,
      x.waiting_xaf,
      x.settled_arrived,
      x.settled_not_arrived,
    ].map((v) => String(v)),
    oldest_waiting: x.oldest_waiting ? new Date(x.oldest_waiting as string).toISOString() : null,
  };
};

async function expectExact(em: EntityManager = db.em()) {
  let handsets = 0;
  for (const scope of SCOPES) {
    for (const w of WINDOWS) {
      const kept = (await unprovenByHandset(em, scope, w)).map(asText);
      expect(kept).toEqual((await reference(em, scope, w)).map(asText));
      handsets += kept.length;
    }
  }
  return handsets;
}

beforeAll(async () => {
  tdb = await freshDatabase();
  // A history migrated live: rows before Migration0010HandsetDaily, summed by its fill.
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations: migrations.slice(0, 9), poolMax: 2 });
  await db
    .em()
    .execute(
      `insert into analytics.devices (device_id, label) values ('dev-a', 'Tecno A'), ('dev-b', 'Itel B'), ('dev-c', 'Tecno C')`,
    );
  await insertOps(0, 500);
  await db.close();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations, poolMax: 3 });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("the unproven-by-handset sums kept per day and handset", () => {
  it("are filled by the migration from the rows already there", async () => {
    expect(await expectExact()).toBeGreaterThan(20);
  });

  it("follow inserts, status changes, settlements, has_message flips, amount, device, agent and label edits, deletes", async () => {
    const em = db.em();
    await insertOps(1000, 300);
    await expectExact();
    const statements = [
      `update analytics.operations set status = 'confirmed' where status = 'no_evidence' and local_day = '2026-03-03'`,
      `update analytics.operations set status = 'no_evidence' where status in ('failed', 'awaiting_evidence') and local_day = '2026-03-04'`,
      `update analytics.operations set settled_by_hand = 'arrived', status = 'confirmed' where settled_by_hand is null and local_day = '2026-03-06'`,
      `update analytics.operations set settled_by_hand = 'did_not_arrive', status = 'failed' where local_day = '2026-03-05' and not has_message`,
      `update analytics.operations set settled_by_hand = null where local_day = '2026-03-07'`,
      `update analytics.operations set has_message = not has_message where local_day in ('2026-03-08', '2026-03-06')`,
      `update analytics.operations set montant = montant * 3 + 7 where local_day = '2026-03-09'`,
      `update analytics.operations set dialled = not dialled where local_day = '2026-03-10'`,
      `update analytics.operations set is_transfer = not is_transfer where local_day = '2026-03-11'`,
      `update analytics.operations set device_id = 'dev-b' where device_id = 'dev-a' and local_day = '2026-03-12'`,
      `update analytics.operations set device_id = null where device_id = 'dev-c' and local_day = '2026-03-13'`,
      `update analytics.operations set device_label = 'label dev-d zz' where device_id = 'dev-d' and local_day = '2026-03-14'`,
      `update analytics.operations set agent_id = '${AGENTS[0]}' where agent_id = '${AGENTS[1]}' and local_day = '2026-03-15'`,
      `update analytics.operations set local_day = local_day + 1 where local_day = '2026-03-16'`,
      // Finished before it was created (two clocks): read without the window's bound.
      `update analytics.operations set finished_at = created_at - interval '2 days' where status = 'no_evidence' and local_day = '2026-03-12'`,
      // Created before a window and finished in it (walked from the window's start, not counted),
      // created in it and finished after it (later ones walked before it).
      `update analytics.operations set finished_at = created_at + interval '3 days' where status = 'no_evidence' and local_day = '2026-03-04'`,
      `update analytics.operations set finished_at = created_at + interval '10 days' where status = 'no_evidence' and local_day = '2026-03-09'`,
      `update analytics.operations set finished_at = null where status = 'no_evidence' and local_day = '2026-03-08'`,
      // Unfinished, created at the first instant of the window 2026-03-05 (its bound, 00:00 at
      // UTC+1) and one just before it (a day earlier, outside).
      `insert into analytics.operations (operation_id, agent_id, device_id, op_type, is_transfer, dialled, status, montant,
         created_at, local_day, local_dow, local_hour, changed_at)
       values ('${uuid("c000", 9000)}', '${AGENTS[0]}', 'dev-a', 'deposit', true, true, 'no_evidence', 1000,
           '2026-03-04T23:00:00Z', '2026-03-05', 4, 0, now()),
         ('${uuid("c000", 9001)}', '${AGENTS[0]}', 'dev-a', 'deposit', true, true, 'no_evidence', 1000,
           '2026-03-04T22:59:59.999Z', '2026-03-04', 3, 23, now())`,
      // The last labelled row of dev-d's window goes: its label no longer counts.
      `delete from analytics.operations where device_label = 'label dev-d zz'`,
      `delete from analytics.operations where local_day = '2026-03-17'`,
    ];
    for (const sql of statements) {
      await em.execute(sql);
      await expectExact();
    }
  });

  it("differ from the rows once a trigger is dropped", async () => {
    const dropped = db.tx(async (em) => {
      await em.execute(`drop trigger handset_rollup_update on analytics.operations`);
      await em.execute(`update analytics.operations set status = 'no_evidence' where local_day = '2026-03-18'`);
      await expectExact(em);
    });
    // The comparison fails, and its transaction (the drop with it) is rolled back.
    await expect(dropped).rejects.toThrow(/deeply equal/);
    await expectExact();
  });

  it("equal a rebuild, and are empty after the reset", async () => {
    const kept = (table: string) => `select * from analytics.${table} where dialled <> 0 order by 1, 2, 3, 4`;
    const before = [await rows(db.em(), kept("handset_daily")), await rows(db.em(), kept("agent_handset_daily"))];
    await db.em().execute(`select analytics.rebuild_rollups()`);
    expect([await rows(db.em(), kept("handset_daily")), await rows(db.em(), kept("agent_handset_daily"))]).toEqual(
      before,
    );
    await db.em().execute(`delete from analytics.operations`);
    expect(await expectExact()).toBe(0);
  });

  it("read each handset's oldest waiting transfer in two descents of its ordered index, the fleet's or the agent's", async () => {
    await insertOps(2000, 300);
    await db.em().execute(`analyze analytics.operations`);
    const w: Window = { all: false, firstDay: "2026-03-05", lastDay: "2026-03-20" };
    for (const [scope, index] of [
      [SCOPES[0]!, "operations_device_oldest"],
      [SCOPES[1]!, "operations_agent_device_oldest"],
    ] as const) {
      const q = unprovenByHandsetQuery(scope, w);
      const [plan] = await rows<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        db.em(),
        `explain (analyze, format json) ${q.sql}`,
        q.params,
      );
      const reads = scansOf(plan!["QUERY PLAN"][0].Plan).filter((p) => p["Relation Name"] === "operations");
      expect(reads.map((p) => [p["Node Type"], p["Index Name"]])).toEqual([
        ["Index Only Scan", index],
        ["Index Only Scan", index],
      ]);
      // The first from the window's start, a row each: before it, only transfers created before
      // the window and finished in it (their day checked in the index), not the handset's backlog.
      const mine = and(agentFilter(scope), { sql: "status = 'no_evidence' and is_transfer and dialled", params: [] });
      const [before] = await rows<{ total: string; crossing: string }>(
        db.em(),
        `select count(*) as total, count(*) filter (where coalesce(finished_at, created_at) >= ?) as crossing
         from analytics.operations where ${mine.sql} and local_day < ?`,
        [windowSince(w), ...mine.params, w.firstDay],
      );
      const [first] = reads;
      expect(first!["Actual Rows"]).toBe(1);
      expect(first!["Actual Loops"]).toBeGreaterThan(1);
      expect((first!["Rows Removed by Filter"] ?? 0) * first!["Actual Loops"]).toBeLessThanOrEqual(
        Number(before!.crossing) + 0.5,
      );
      expect(Number(before!.crossing)).toBeLessThan(Number(before!.total));
    }
  });
});

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  "Actual Rows": number;
  "Actual Loops": number;
  "Rows Removed by Filter"?: number;
  Plans?: PlanNode[];
}

/** The plan's nodes, depth first. */
const scansOf = (p: PlanNode): PlanNode[] => [p, ...(p.Plans ?? []).flatMap(scansOf)];
