// The arbitration queue's page and the settled-on-word list over a long backlog, against real
// PostgreSQL and under the plan a prepared statement ends with (generic, made without the
// window's values): an agent's scope reads its page SIM by SIM of its grant and from its own
// operations, so a quiet scope's few are found in a few pages (Migration0016ScopedQueues, and
// Migration0017ScopedContradicted for the contradicted), the fleet's contradicted part is walked
// to its page (Migration0018ContradictedPage), and
// a busy scope's page is walked in the queue's order, not sorted from the window's whole backlog
// (Migration0015UnprovenOrder); settled on word walks its own few, not every decision.

import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { lastStatementOf } from "../../../../test/support/statements.ts";
import { migrations } from "./migrations/index.ts";
import { listSettledOnWord, listUnproven, type QueueFilter } from "./queues.ts";

let tdb: TestDatabase;
let db: Database;
const AGENT = randomUUID();
const SIMS = Array.from({ length: 100 }, (_, i) => `sim-${i}`);
const QUIET_AGENT = randomUUID();
const QUIET_SIM = "sim-quiet";
/** The operations confirmed on word, in the list's order. */
const WORD: string[] = [];

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "dispatch", migrations, poolMax: 2 });
  // 40,000 unproven operations over 30 days on 100 SIMs, by other agents.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, started_at, finished_at, created_at)
     select gen_random_uuid(), 'order-' || g, 'no_evidence', 'aggregated', 'deposit', gen_random_uuid(), 'operator_b', 1000,
       '690000000', 'sim-' || (g % 100), now() - g * interval '1 minute', now() - g * interval '1 minute',
       now() - g * interval '1 minute'
     from generate_series(1, 40000) g`,
  );
  // A quiet SIM's two unproven and a quiet agent's own on a busy SIM, older than all of those.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, started_at, finished_at, created_at)
     select gen_random_uuid(), 'quiet-' || g, 'no_evidence', 'aggregated', 'deposit',
       case when g = 3 then ?::uuid else gen_random_uuid() end, 'operator_b', 1000, '690000000',
       case when g = 3 then 'sim-50' else ? end, now() - interval '29 days' - g * interval '1 minute',
       now() - interval '29 days' - g * interval '1 minute', now() - interval '29 days' - g * interval '1 minute'
     from generate_series(1, 3) g`,
    [QUIET_AGENT, QUIET_SIM],
  );
  // 5,000 failed transfers an operator's message then proved (contradicted), on the fleet's
  // SIMs outside the busy scope's, by other agents; and one on the quiet SIM, the newest of its.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, started_at, finished_at, created_at, failure_reason, contradicting_message_id)
     select gen_random_uuid(), 'contradicted-' || g, 'failed', 'aggregated', 'deposit', gen_random_uuid(), 'operator_b',
       1000, '690000000', case when g = 0 then ? else 'sim-' || (10 + g % 90) end,
       now() - interval '28 days' - g * interval '5 seconds', now() - interval '28 days' - g * interval '5 seconds',
       now() - interval '28 days' - g * interval '5 seconds', 'ussd_error', gen_random_uuid()
     from generate_series(0, 5000) g`,
    [QUIET_SIM],
  );
  // The quiet agent's own history on its SIM: 10,000 transfers proven in the window, which a
  // read of its scope's operations would go through to find its three.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, started_at, finished_at, created_at)
     select gen_random_uuid(), 'proven-' || g, 'confirmed', 'aggregated', 'deposit', ?, 'operator_b', 1000,
       '690000000', ?, now() - g * interval '3 minutes', now() - g * interval '3 minutes', now() - g * interval '3 minutes'
     from generate_series(1, 10000) g`,
    [QUIET_AGENT, QUIET_SIM],
  );
  // 10,000 decisions in the window (failed on word), 30 of them confirmed on word with no proof.
  await db.em().execute(
    `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant,
       msisdn_dest, sim_id, started_at, finished_at, created_at, decision, decided_by, decided_at, confirmed_by,
       failure_reason)
     select gen_random_uuid(), 'decided-' || g, case when g % 333 = 0 then 'confirmed' else 'failed' end, 'aggregated',
       'deposit', gen_random_uuid(), 'operator_b', 1000, '690000000', 'sim-' || (g % 100),
       now() - g * interval '2 minutes', now() - g * interval '2 minutes', now() - g * interval '2 minutes',
       case when g % 333 = 0 then 'arrived' else 'did_not_arrive' end, gen_random_uuid(), now() - g * interval '2 minutes',
       case when g % 333 = 0 then 'settle' end, case when g % 333 = 0 then null else 'did_not_arrive' end
     from generate_series(1, 10000) g`,
  );
  const word = await db
    .em()
    .execute(
      `select operation_id::text from dispatch.operations where confirmed_by = 'settle' order by decided_at desc, operation_id`,
    );
  WORD.push(...(word as { operation_id: string }[]).map((r) => r.operation_id));
  await db.em().execute(`vacuum analyze dispatch.operations`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

/** A statement the kit would send, as text with `$n` and its values (arrays expanded). */
function numbered(sql: string, params: unknown[]): { text: string; values: unknown[] } {
  const parts = sql.split("?");
  const values: unknown[] = [];
  let text = parts[0]!;
  params.forEach((p, i) => {
    text += Array.isArray(p) ? p.map((v) => `$${values.push(v)}`).join(", ") : `$${values.push(p)}`;
    text += parts[i + 1]!;
  });
  return { text, values };
}

/**
 * `run`'s last statement explained under the plan a prepared statement ends with: its page, its
 * plan, the entries a filter passed over (the most in one node) and its pages.
 */
async function genericPlanOf<T>(
  run: () => Promise<T>,
): Promise<{ result: T; plan: string; passedOver: number; pages: number }> {
  const { result, sql, params } = await lastStatementOf(run);
  const { text, values } = numbered(sql, params);
  const client = new pg.Client({ connectionString: tdb.url });
  await client.connect();
  try {
    await client.query(`set plan_cache_mode = force_generic_plan`);
    await client.query({ name: "queue_page", text, values });
    const args = values
      .map((v) =>
        v === null || v === undefined ? "null" : client.escapeLiteral(v instanceof Date ? v.toISOString() : String(v)),
      )
      .join(", ");
    const lines = (await client.query(`explain (analyze, buffers, costs off) execute queue_page(${args})`)).rows.map(
      (r: { "QUERY PLAN": string }) => r["QUERY PLAN"],
    );
    const passedOver = Math.max(
      0,
      ...lines.map((l) => Number(/Rows Removed by (?:Join )?Filter: (\d+)/.exec(l)?.[1] ?? 0)),
    );
    const pages = Number(/shared hit=(\d+)/.exec(lines.find((l) => l.includes("Buffers:")) ?? "")?.[1] ?? 0);
    return { result, plan: lines.join("\n"), passedOver, pages };
  } finally {
    await client.end();
  }
}

const thirtyDays = (limit = 50): Pick<QueueFilter, "from" | "to" | "limit"> => {
  const to = new Date(Date.now() + 60_000);
  return { from: new Date(to.getTime() - 30 * 86_400_000), to, limit };
};

describe("the arbitration queue's page", () => {
  it("in an agent's scope, under the generic plan: its page, walked in the queue's order", async () => {
    const filter: QueueFilter = { scope: { agent_id: AGENT, sim_ids: SIMS.slice(0, 4) }, ...thirtyDays() };
    const { result: page, plan, passedOver } = await genericPlanOf(() => listUnproven(db.em(), filter));
    expect(page).toHaveLength(50);
    expect(page.every((o) => SIMS.slice(0, 4).includes(o.sim_id!))).toBe(true);
    const times = page.map((o) => o.finished_at!.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // The page's walk: a page a SIM at most, not the window's 40,000 entries (nor, walking the
    // fleet's backlog, 1,200 passed over for the scope's 4 SIMs of 100).
    expect([passedOver < 200, plan]).toEqual([true, plan]);
    // Each SIM's entries from its index alone; only the page's rows are read whole.
    expect(plan).toMatch(/Index Only Scan using operations_no_evidence_sim/);
  });

  it("in a quiet scope, under the generic plan: its three, from a few pages", async () => {
    // The quiet SIM's two unproven and the agent's own on a busy SIM, older than the fleet's 40,000.
    const filter: QueueFilter = { scope: { agent_id: QUIET_AGENT, sim_ids: [QUIET_SIM] }, ...thirtyDays() };
    const { result: page, plan, pages } = await genericPlanOf(() => listUnproven(db.em(), filter));
    // The row shows no agent (the contract's unproven row): read beside it.
    const agentOf = new Map(
      (
        await rows<{ operation_id: string; agent_id: string }>(
          db.em(),
          `select operation_id, agent_id from dispatch.operations where operation_id in (?)`,
          [page.map((o) => o.operation_id)],
        )
      ).map((r) => [r.operation_id, r.agent_id]),
    );
    expect(page.map((o) => [o.sim_id, agentOf.get(o.operation_id)])).toEqual([
      // The contradicted first, the one of its SIM among the fleet's 5,000.
      [QUIET_SIM, expect.any(String)],
      [QUIET_SIM, expect.any(String)],
      [QUIET_SIM, expect.any(String)],
      ["sim-50", QUIET_AGENT],
    ]);
    expect(page[0]!.contradicting_message_id).not.toBeNull();
    // Not the window's 40,000 entries, nor the scope's 10,000 proven operations, nor the
    // fleet's 5,000 contradicted (Migration0017ScopedContradicted).
    expect([pages < 100, plan]).toEqual([true, plan]);
    // The contradicted part from the SIM's entries alone.
    expect(plan).toMatch(/Index Only Scan using operations_contradicted_sim/);
  });
});

describe("the fleet's arbitration queue (no scope)", () => {
  it("its page of the contradicted first, walked newest first, not the window's 5,000 read and sorted", async () => {
    const filter: QueueFilter = { scope: null, ...thirtyDays() };
    const { result: page, plan } = await genericPlanOf(() => listUnproven(db.em(), filter));
    expect(page).toHaveLength(50);
    expect(page.every((o) => o.contradicting_message_id !== null)).toBe(true);
    const times = page.map((o) => o.finished_at!.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));
    // Each part read up to its page (the contradicted from the entries of
    // Migration0018ContradictedPage), not the window's 5,001 contradicted fetched and sorted.
    const scanned = Math.max(...[...plan.matchAll(/Scan [^\n]*rows=(\d+)/g)].map((m) => Number(m[1])));
    expect([scanned <= 50, plan]).toEqual([true, plan]);
    expect(plan).toMatch(/Index Only Scan using operations_contradicted_page/);
  });
});

describe("settled on word", () => {
  it("a page of the few among the window's decisions, under the generic plan", async () => {
    const fleet = await genericPlanOf(() => listSettledOnWord(db.em(), { scope: null, ...thirtyDays(20) }));
    expect(fleet.result.map((o) => o.operation_id)).toEqual(WORD.slice(0, 20));
    expect([fleet.pages < 200, fleet.plan]).toEqual([true, fleet.plan]);
    const agent = await genericPlanOf(() =>
      listSettledOnWord(db.em(), { scope: { agent_id: QUIET_AGENT, sim_ids: [QUIET_SIM] }, ...thirtyDays() }),
    );
    expect(agent.result).toEqual([]);
    // The window's 30 decisions on word walked, not its 10,000 decisions.
    expect([agent.pages < 200, agent.plan]).toEqual([true, agent.plan]);
  });
});
