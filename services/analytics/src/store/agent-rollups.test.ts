import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { openDatabase, rows, type Database, type EntityManager } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { eventually } from "../../../../test/support/eventually.ts";
import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";
import { migrations } from "./migrations/index.ts";
import { loadFigures } from "./report.ts";
import { dailyRows, hourRows, messageTotals, operationTotals, statusCounts } from "./rollups.ts";

// The rollups of Migration0006AmountCounts and Migration0007AgentRollups: filled by their
// migrations from the rows already there, kept by triggers as operations and messages change
// (a message before its operation, an operation deleted under its messages, a message linked,
// dismissed, made ambiguous), equal to rebuild_rollups(); and every figure of an agent's view,
// and the fleet's median and largest transfer, read from them equal to SQL over the rows.

let tdb: TestDatabase;
let db: Database;

const uuid = (prefix: string, n: number) => `00000000-0000-4000-${prefix}-${String(n).padStart(12, "0")}`;
const AGENTS = [1, 2, 3].map((i) => uuid("a000", i));
/** An agent whose proof delays are whole seconds (its percentiles are then exact). */
const WHOLE = AGENTS[2];
const SIMS = [uuid("b000", 1), uuid("b000", 2), uuid("b000", 3), null];
const STATUSES = ["confirmed", "confirmed", "confirmed", "failed", "no_evidence", "rejected", "awaiting_evidence"];

let seed = 5;
const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
const pick = <T>(xs: readonly T[]): T => xs[Math.floor(next() * xs.length)];
const day = (d: number) => `2026-03-${String(d).padStart(2, "0")}`;

interface Op {
  operation_id: string;
  agent_id: string;
  sim_id: string | null;
  is_transfer: boolean;
  status: string;
  montant: number;
  local_day: string;
  local_dow: number;
  local_hour: number;
  confirmed_by: string | null;
  touched_by_hand: boolean;
  settled_by_hand: string | null;
  lost: boolean;
  fee: number | null;
  proof_delay_s: number | null;
}

function operation(i: number): Op {
  const agent = pick(AGENTS);
  const status = pick(STATUSES);
  const confirmedBy = status === "confirmed" ? pick(["proof", "proof", "proof", "attach", "settle"]) : null;
  const d = 1 + Math.floor(next() * 20);
  const delay = confirmedBy === "proof" ? (agent === WHOLE ? 5 + Math.floor(next() * 90) : 3 + next() * 700) : null;
  return {
    operation_id: uuid("c000", i),
    agent_id: agent,
    sim_id: pick(SIMS),
    is_transfer: next() < 0.9,
    status,
    // The operator's amounts: a few dozen multiples of 500, and now and then a large one.
    montant: next() < 0.03 ? 1_000_000 + 500 * Math.floor(next() * 4) : 500 * (1 + Math.floor(next() * 60)),
    local_day: day(d),
    local_dow: 1 + ((d + 6) % 7),
    local_hour: Math.floor(next() * 24),
    confirmed_by: confirmedBy,
    touched_by_hand: confirmedBy === "attach" || confirmedBy === "settle",
    settled_by_hand: confirmedBy === "settle" ? "arrived" : status === "failed" && next() < 0.3 ? "failed" : null,
    lost: status === "failed" && next() < 0.5,
    fee: confirmedBy && next() < 0.7 ? 50 + Math.floor(next() * 300) : null,
    proof_delay_s: delay,
  };
}

async function insertOps(ops: Op[]) {
  await db.em().execute(
    `insert into analytics.operations (operation_id, agent_id, sim_id, op_type, is_transfer, status, montant, created_at,
       local_day, local_dow, local_hour, confirmed_by, touched_by_hand, settled_by_hand, lost, fee, proof_delay_s, changed_at)
     select o.operation_id, o.agent_id, o.sim_id, case when o.is_transfer then 'deposit' else 'balance' end, o.is_transfer,
       o.status, o.montant, o.local_day::timestamptz, o.local_day, o.local_dow, o.local_hour, o.confirmed_by,
       o.touched_by_hand, o.settled_by_hand, o.lost, o.fee, o.proof_delay_s, now()
     from jsonb_to_recordset(?::jsonb) as o(operation_id uuid, agent_id uuid, sim_id uuid, is_transfer boolean, status text,
       montant bigint, local_day date, local_dow smallint, local_hour smallint, confirmed_by text, touched_by_hand boolean,
       settled_by_hand text, lost boolean, fee bigint, proof_delay_s double precision)`,
    [JSON.stringify(ops)],
  );
}

/** Messages, each tied to one of these operations (or none), on a day of the month. */
async function insertMessages(from: number, count: number, operationIds: (string | null)[]) {
  const messages = Array.from({ length: count }, (_, k) => ({
    message_id: uuid("d000", from + k),
    operation_id: pick(operationIds),
    local_day: day(1 + Math.floor(next() * 20)),
    is_ambiguous: next() < 0.1,
    dismissed: next() < 0.1,
  }));
  await db.em().execute(
    `insert into analytics.messages (message_id, sim_id, received_at, local_day, kind, outcome, is_ambiguous, operation_id,
       dismissed_at)
     select m.message_id, null, m.local_day::timestamptz, m.local_day, 'DEP',
       case when m.operation_id is null then 'orphan' else 'confirmed' end, m.is_ambiguous, m.operation_id,
       case when m.dismissed then now() end
     from jsonb_to_recordset(?::jsonb) as m(message_id uuid, operation_id uuid, local_day date, is_ambiguous boolean,
       dismissed boolean)`,
    [JSON.stringify(messages)],
  );
}

const ROLLUPS = [
  "amount_daily",
  "agent_op_daily",
  "agent_hourly",
  "agent_sim_daily",
  "agent_delay_seconds",
  "agent_amount_hist",
  "agent_amount_daily",
  "agent_msg_daily",
];
/** Every row of the new rollups that counts something, sums rounded to the microsecond. */
async function snapshot(): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const table of ROLLUPS) {
    const r = await rows<{ t: string }>(
      db.em(),
      `select (to_jsonb(t) - 'sum_s' || jsonb_build_object('sum_s', round(coalesce((to_jsonb(t)->>'sum_s')::numeric, 0), 6)))::text as t
       from analytics.${table} t where n <> 0 order by 1`,
    );
    out[table] = r.map((x) => x.t);
  }
  return out;
}

async function expectRebuildUnchanged() {
  const kept = await snapshot();
  expect(kept.agent_op_daily.length).toBeGreaterThan(50);
  expect(kept.agent_msg_daily.length).toBeGreaterThan(10);
  await db.em().execute(`select analytics.rebuild_rollups()`);
  expect(await snapshot()).toEqual(kept);
}

const ops = Array.from({ length: 900 }, (_, i) => operation(i));
const ids = ops.map((o) => o.operation_id);

beforeAll(async () => {
  tdb = await freshDatabase();
  // Migrated up to the delay histogram, with rows: a history migrated live. Some messages name
  // operations not projected yet (the topics are consumed apart).
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations: migrations.slice(0, 5) });
  await insertOps(ops.slice(0, 500));
  await insertMessages(0, 400, [...ids, null]);
  await db.close();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

describe("the per-agent rollups and the amounts' counts", () => {
  it("are filled from the rows already there by their migrations, as a rebuild fills them", async () => {
    await expectRebuildUnchanged();
  });

  it("drop the two indexes nothing reads after the migrations", async () => {
    const indexes = await rows<{ indexname: string }>(
      db.em(),
      `select indexname from pg_indexes where schemaname = 'analytics' and tablename = 'operations' order by 1`,
    );
    expect(indexes.map((i) => i.indexname)).not.toContain("operations_proof_delay");
    expect(indexes.map((i) => i.indexname)).not.toContain("operations_confirmed_amount");
    expect(indexes.map((i) => i.indexname)).toContain("operations_agent_day");
  });

  it("follow inserts, updates and deletes of operations and messages, and equal a rebuild from the rows", async () => {
    const em = db.em();
    // Operations whose messages came first; messages of operations yet to come.
    await insertOps(ops.slice(500, 800));
    await insertMessages(1000, 300, [...ids, null]);
    const statements = [
      `update analytics.operations set status = 'confirmed', confirmed_by = 'proof', proof_delay_s = 42
        where status = 'awaiting_evidence' and montant % 1000 = 0`,
      `update analytics.operations set montant = montant + 500 where local_day = '2026-03-03'`,
      `update analytics.operations set local_day = '2026-03-19', local_dow = 5, local_hour = 23 where local_day = '2026-03-04'`,
      `update analytics.operations set agent_id = '${AGENTS[0]}' where agent_id = '${AGENTS[1]}' and local_day = '2026-03-05'`,
      `update analytics.operations set sim_id = null where local_day = '2026-03-06'`,
      `update analytics.operations set changed_at = now(), finished_at = now() where local_day = '2026-03-07'`,
      `update analytics.messages set operation_id = '${ids[850]}' where operation_id is null and local_day < '2026-03-10'`,
      `update analytics.messages set is_ambiguous = not is_ambiguous where local_day = '2026-03-08'`,
      `update analytics.messages set dismissed_at = now() where local_day = '2026-03-09' and dismissed_at is null`,
      `update analytics.messages set local_day = '2026-03-11' where local_day = '2026-03-10'`,
      `delete from analytics.operations where local_day = '2026-03-12'`,
      `delete from analytics.messages where local_day = '2026-03-13'`,
    ];
    for (const sql of statements) await em.execute(sql);
    await insertOps(ops.slice(800));
    await expectRebuildUnchanged();
  });
});

/** SQL over the rows: what the agent's view read before its rollups (store/report.ts then). */
async function agentFromRows(em: EntityManager, agentId: string, w: Window) {
  const days = w.all ? "true" : `local_day between '${w.firstDay}' and '${w.lastDay}'`;
  const where = `agent_id = '${agentId}' and ${days}`;
  const confirmed = `is_transfer and status = 'confirmed'`;
  const [totals] = await rows<Record<string, string | number | null>>(
    em,
    `select count(*)::text as operations, (count(*) filter (where is_transfer))::text as transfers,
       (count(*) filter (where not is_transfer))::text as balance_checks,
       (count(distinct sim_id))::text as active_sims, (count(distinct agent_id))::text as active_agents,
       coalesce(sum(montant) filter (where ${confirmed}), 0)::text as sent_xaf,
       (count(*) filter (where ${confirmed}))::text as confirmed_transfers,
       coalesce(round(percentile_cont(0.5) within group (order by montant) filter (where ${confirmed})), 0)::text
         as median_transfer,
       coalesce(max(montant) filter (where ${confirmed}), 0)::text as largest_transfer,
       coalesce(sum(fee) filter (where ${confirmed}), 0)::text as fees_xaf,
       (count(fee) filter (where ${confirmed}))::text as fees_known_for,
       coalesce(sum(montant) filter (where is_transfer and status = 'no_evidence'), 0)::text as at_risk_xaf,
       (count(*) filter (where is_transfer and status = 'no_evidence'))::text as at_risk_count,
       coalesce(sum(montant) filter (where is_transfer and lost), 0)::text as lost_xaf,
       (count(*) filter (where is_transfer and lost))::text as lost_count,
       (count(*) filter (where status = 'confirmed'))::text as confirmed,
       (count(*) filter (where status = 'confirmed' and confirmed_by = 'proof' and not touched_by_hand))::text
         as auto_confirmed,
       (count(*) filter (where settled_by_hand is not null))::text as settled_by_hand,
       (count(*) filter (where status = 'failed'))::text as failed,
       (count(*) filter (where status = 'no_evidence'))::text as unproven,
       percentile_cont(0.5) within group (order by proof_delay_s) as proof_delay_median_s,
       percentile_cont(0.9) within group (order by proof_delay_s) as proof_delay_p90_s
     from analytics.operations where ${where}`,
  );
  const series = (bucket: string) =>
    rows(
      em,
      `select to_char(${bucket}, 'YYYY-MM-DD') as day, count(*)::text as operations,
         (count(*) filter (where is_transfer))::text as transfers, (count(*) filter (where not is_transfer))::text as balance_checks,
         coalesce(sum(montant) filter (where ${confirmed}), 0)::text as value_xaf,
         (count(*) filter (where status = 'confirmed'))::text as confirmed,
         (count(*) filter (where status = 'confirmed' and confirmed_by = 'proof' and not touched_by_hand))::text
           as auto_confirmed,
         (count(*) filter (where status = 'failed'))::text as failed,
         (count(*) filter (where status = 'no_evidence'))::text as unproven
       from analytics.operations where ${where} group by 1 order by 1`,
    );
  return {
    totals,
    daily: await series("local_day"),
    weekly: await series(`date_trunc('week', local_day)::date`),
    hours: await rows(
      em,
      `select local_dow::int as weekday, local_hour::int as hour, count(*)::text as operations
       from analytics.operations where ${where} group by 1, 2 order by 1, 2`,
    ),
    status: await rows(
      em,
      `select status, count(*)::text as count from analytics.operations where ${where} group by 1 order by 1`,
    ),
    messages: (
      await rows(
        em,
        `select count(*)::text as total, (count(*) filter (where m.is_ambiguous))::text as ambiguous
         from analytics.messages m join analytics.operations o on o.operation_id = m.operation_id
         where o.agent_id = '${agentId}' and ${days.replaceAll("local_day", "m.local_day")}`,
      )
    )[0],
  };
}

/** The same figures read from the rollups, in the same shape. */
async function agentFromRollups(em: EntityManager, scope: Scope, w: Window) {
  const text = <T extends object>(o: T) =>
    Object.fromEntries(Object.entries(o).map(([k, v]) => [k, typeof v === "bigint" ? String(v) : v]));
  const { proof_delay_median_s, proof_delay_p90_s, ...totals } = await operationTotals(em, scope, w);
  return {
    totals: { ...text(totals), proof_delay_median_s, proof_delay_p90_s },
    daily: (await dailyRows(em, scope, w, false)).map(text),
    weekly: (await dailyRows(em, scope, w, true)).map(text),
    hours: (await hourRows(em, scope, w)).map(text),
    status: Object.entries(await statusCounts(em, scope, w)).map(([status, count]) => ({
      status,
      count: String(count),
    })),
    messages: text(await messageTotals(em, scope, w)),
  };
}

const WINDOWS: Window[] = [
  { all: true },
  { all: false, firstDay: day(1), lastDay: day(20) },
  { all: false, firstDay: day(5), lastDay: day(11) },
  { all: false, firstDay: day(14), lastDay: day(14) },
  { all: false, firstDay: day(12), lastDay: day(12) },
  { all: false, firstDay: "2026-02-01", lastDay: "2026-02-07" },
  // Whole months from the monthly copies (Migration0014MonthlyRollups), with and without edges.
  { all: false, firstDay: "2026-03-01", lastDay: "2026-03-31" },
  { all: false, firstDay: "2026-02-20", lastDay: "2026-04-02" },
];

describe("an agent's view read from its rollups", () => {
  it.each(AGENTS.map((a, i) => [i + 1, a]))(
    "equals SQL over the rows for agent %s, every window",
    async (_, agentId) => {
      const em = db.em();
      for (const w of WINDOWS) {
        const want = await agentFromRows(em, agentId, w);
        const got = await agentFromRollups(em, { fleet: false, agentId }, w);
        const { proof_delay_median_s: d50, proof_delay_p90_s: d90, ...totals } = want.totals;
        expect({ ...got, totals: undefined }).toEqual({ ...want, totals: undefined });
        expect({ ...got.totals, proof_delay_median_s: undefined, proof_delay_p90_s: undefined }).toEqual({
          ...totals,
          proof_delay_median_s: undefined,
          proof_delay_p90_s: undefined,
        });
        // The delays from one-second buckets: exact on whole seconds, within a second below 600 s.
        for (const [rollup, exact] of [
          [got.totals.proof_delay_median_s, d50],
          [got.totals.proof_delay_p90_s, d90],
        ] as const) {
          if (exact === null) expect(rollup).toBeUndefined();
          else if (agentId === WHOLE) expect(rollup).toBe(Number(exact));
          else expect(Math.abs(rollup! - Number(exact))).toBeLessThan(Number(exact) < 600 ? 1 : Number(exact) * 0.1);
        }
      }
    },
  );

  it("has nothing for an agent without operations", async () => {
    const got = await agentFromRollups(db.em(), { fleet: false, agentId: uuid("a000", 99) }, WINDOWS[0]);
    expect(got.totals).toMatchObject({ operations: "0", active_agents: "0", active_sims: "0", median_transfer: "0" });
    expect(got.daily).toEqual([]);
  });

  it("gives the load's figures of an agent as the joins over the rows gave them", async () => {
    const em = db.em();
    for (const agentId of AGENTS) {
      const [want] = await rows<Record<string, string>>(
        em,
        `select (select count(*) from analytics.messages where dismissed_at is not null
                  and operation_id in (select operation_id from analytics.operations where agent_id = $1))::text as dismissed,
                (select count(*) from analytics.sims where sim_id in
                  (select distinct sim_id from analytics.operations where agent_id = $1))::text as sims`.replaceAll(
          "$1",
          `'${agentId}'`,
        ),
      );
      await em.execute(
        `insert into analytics.sims (sim_id, status) select s::uuid, 'frozen' from jsonb_array_elements_text(?::jsonb) s
         on conflict do nothing`,
        [JSON.stringify(SIMS.filter(Boolean))],
      );
      const load = await loadFigures(em, { fleet: false, agentId }, new Date());
      expect(load).toMatchObject({ dismissed: BigInt(want.dismissed), messages_waiting: 0n, oldest_message: null });
      const [frozen] = await rows<{ n: string }>(
        em,
        `select count(*)::text as n from analytics.sims where status = 'frozen' and sim_id in
           (select distinct sim_id from analytics.operations where agent_id = ?)`,
        [agentId],
      );
      expect(load.sims_frozen).toBe(BigInt(frozen.n));
      expect(load.dismissed).toBeGreaterThan(0n);
    }
  });
});

describe("the fleet's median and largest transfer read from the amounts' counts", () => {
  it("equal percentile_cont and max over the rows, every window", async () => {
    const em = db.em();
    // A day whose middle two transfers lie in two buckets about 10 % wide.
    await insertOps(
      [9000, 9000, 12000, 12000].map((montant, i) => ({
        ...operation(2000 + i),
        agent_id: AGENTS[0],
        is_transfer: true,
        status: "confirmed",
        montant,
        local_day: day(25),
      })),
    );
    for (const w of [...WINDOWS, { all: false as const, firstDay: day(25), lastDay: day(25) }]) {
      const days = w.all ? "true" : `local_day between '${w.firstDay}' and '${w.lastDay}'`;
      const [want] = await rows<{ median: string; largest: string }>(
        em,
        `select coalesce(round(percentile_cont(0.5) within group (order by montant)), 0)::text as median,
           coalesce(max(montant), 0)::text as largest
         from analytics.operations where is_transfer and status = 'confirmed' and ${days}`,
      );
      const got = await operationTotals(em, { fleet: true }, w);
      expect({ median: String(got.median_transfer), largest: String(got.largest_transfer) }).toEqual(want);
    }
    expect(
      (await operationTotals(em, { fleet: true }, { all: false, firstDay: day(25), lastDay: day(25) })).median_transfer,
    ).toBe(10500n);
  });
});

describe("an agent's messages counted from both sides at once", () => {
  it("counts a message once when its operation is written by another transaction at the same moment", async () => {
    const agentId = AGENTS[0];
    const count = async () =>
      Number(
        (
          await rows<{ n: string }>(
            db.em(),
            `select coalesce(sum(n), 0)::text as n from analytics.agent_msg_daily where agent_id = ? and local_day = '2026-03-28'`,
            [agentId],
          )
        )[0].n,
      );
    for (const [k, first] of [
      [0, "operation"],
      [1, "message"],
    ] as const) {
      const opId = uuid("e000", k);
      const writeOp = `insert into analytics.operations (operation_id, agent_id, op_type, is_transfer, status, montant,
          created_at, local_day, local_dow, local_hour, changed_at)
        values ('${opId}', '${agentId}', 'deposit', true, 'queued', 1000, now(), '2026-03-28', 6, 10, now())`;
      const writeMessage = `insert into analytics.messages (message_id, received_at, local_day, outcome, operation_id)
        values ('${uuid("f000", k)}', now(), '2026-03-28', 'confirmed', '${opId}')`;
      const [a, b] = [new pg.Client({ connectionString: tdb.url }), new pg.Client({ connectionString: tdb.url })];
      await a.connect();
      await b.connect();
      try {
        await a.query("begin");
        await b.query("begin");
        await a.query(first === "operation" ? writeOp : writeMessage);
        // The second writer waits for the first's lock on the operation's id, then sees its row
        // (without the lock it would not wait, see neither row, and count nothing).
        let written = false;
        const second = b.query(first === "operation" ? writeMessage : writeOp).then(() => (written = true));
        await eventually(
          async () => {
            const waiting = await rows(
              db.em(),
              `select 1 from pg_locks where locktype = 'advisory' and not granted
                 and database = (select oid from pg_database where datname = current_database())`,
            );
            return waiting.length > 0 || written ? true : undefined;
          },
          5_000,
          "the second writer waiting or done",
        );
        await a.query("commit");
        await second;
        await b.query("commit");
      } finally {
        await a.end();
        await b.end();
      }
      expect(await count()).toBe(k + 1);
    }
  });
});
