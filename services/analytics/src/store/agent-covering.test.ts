// An agent's window reads from indexes that hold what they read (Migration0013AgentCovering),
// against real PostgreSQL: the statements the store sends, planned for their values, read
// the agent's SIMs, hours, statuses and series index-only (Migration0015AgentSeries for the
// series), never the scattered rows of its rollups.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import type { Window } from "../domain/window.ts";
import { migrations } from "./migrations/index.ts";
import { dailyRows, hourRows, operationTotals, statusCounts } from "./rollups.ts";

let tdb: TestDatabase;
let db: Database;

const AGENTS = Array.from({ length: 20 }, (_, i) => `00000000-0000-4000-8000-${String(i + 1).padStart(12, "0")}`);
const AGENT = AGENTS[7]!;
const WINDOW: Window = { all: false, firstDay: "2026-01-01", lastDay: "2026-11-29" };

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "analytics", migrations });
  // Day after day for every agent, as the consumers write them: one agent's rows spread over
  // the table (20 agents, 300 days, 10 SIMs, 12 hours, 3 statuses).
  const em = db.em();
  await em.execute(
    `insert into analytics.agent_sim_daily (agent_id, local_day, sim_id, n)
    select a::uuid, '2026-02-01'::date + d, ('00000000-0000-4000-9000-' || lpad(s::text, 12, '0'))::uuid, 1 + (d + s) % 3
    from generate_series(0, 299) d, jsonb_array_elements_text(?::jsonb) a, generate_series(1, 10) s`,
    [JSON.stringify(AGENTS)],
  );
  await em.execute(
    `insert into analytics.agent_hourly (agent_id, local_day, local_hour, local_dow, n)
    select a::uuid, '2026-02-01'::date + d, h, extract(isodow from '2026-02-01'::date + d), 1
    from generate_series(0, 299) d, jsonb_array_elements_text(?::jsonb) a, generate_series(8, 19) h`,
    [JSON.stringify(AGENTS)],
  );
  await em.execute(
    `insert into analytics.agent_op_daily (agent_id, local_day, status, is_transfer, auto, settled, lost, n,
      montant, fee, fee_n, delay_n)
    select a::uuid, '2026-02-01'::date + d, st, true, false, false, false, 2, 1000, 10, 2, 0
    from generate_series(0, 299) d, jsonb_array_elements_text(?::jsonb) a, unnest(array['confirmed', 'failed', 'no_evidence']) st`,
    [JSON.stringify(AGENTS)],
  );
  await em.execute(`vacuum analyze analytics.agent_sim_daily, analytics.agent_hourly, analytics.agent_op_daily`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

/** The statements `run` sends through the ORM, with their parameters. */
async function sent(run: () => Promise<unknown>): Promise<{ sql: string; params: unknown[] }[]> {
  const recorded = recordStatements();
  try {
    await run();
  } finally {
    recorded.stop();
  }
  return recorded.statements.map((sql, i) => ({ sql, params: recorded.params[i]! }));
}

interface PlanNode {
  "Node Type": string;
  "Relation Name"?: string;
  "Index Name"?: string;
  Plans?: PlanNode[];
}
const nodesOf = (p: PlanNode): PlanNode[] => [p, ...(p.Plans ?? []).flatMap(nodesOf)];

describe("an agent's window over its rollups", () => {
  it("reads the agent's SIMs, hours and statuses index-only, and answers as the rows say", async () => {
    const scope = { fleet: false as const, agentId: AGENT };
    const statements = [
      ...(await sent(() => operationTotals(db.em(), scope, WINDOW))),
      ...(await sent(() => hourRows(db.em(), scope, WINDOW))),
      ...(await sent(() => statusCounts(db.em(), scope, WINDOW))),
      ...(await sent(() => dailyRows(db.em(), scope, WINDOW, false))),
      ...(await sent(() => dailyRows(db.em(), scope, WINDOW, true))),
    ];
    const scans = new Map<string, string[]>();
    for (const s of statements) {
      const [plan] = await rows<{ "QUERY PLAN": [{ Plan: PlanNode }] }>(
        db.em(),
        `explain (analyze, format json) ${s.sql}`,
        s.params,
      );
      for (const n of nodesOf(plan!["QUERY PLAN"][0].Plan)) {
        if (!n["Relation Name"]) continue;
        if (!/^agent_(sim_daily|hourly|op_daily)$/.test(n["Relation Name"])) continue;
        const seen = scans.get(n["Relation Name"]) ?? [];
        scans.set(n["Relation Name"], [...seen, `${n["Node Type"]} ${n["Index Name"] ?? ""}`.trim()]);
      }
    }
    expect(scans.get("agent_sim_daily")).toEqual(["Index Only Scan agent_sim_daily_active"]);
    expect(scans.get("agent_hourly")).toEqual(["Index Only Scan agent_hourly_covering"]);
    // The totals read every column of the agent's edge days (a heap read); the statuses and the
    // series, daily and weekly, their index (Migration0015AgentSeries).
    expect(scans.get("agent_op_daily")?.filter((s) => s === "Index Only Scan agent_op_daily_series").length).toBe(3);

    const totals = await operationTotals(db.em(), scope, WINDOW);
    expect(totals.active_sims).toBe(10n);
    const hours = await hourRows(db.em(), scope, WINDOW);
    expect(hours.length).toBe(7 * 12);
    expect(await statusCounts(db.em(), scope, WINDOW)).toEqual({ confirmed: 600n, failed: 600n, no_evidence: 600n });
    // A point a day from 1 February (300 days), or a week dated by its Monday.
    const days = await dailyRows(db.em(), scope, WINDOW, false);
    expect(days.length).toBe(300);
    expect(days[0]).toMatchObject({
      day: "2026-02-01",
      operations: 6n,
      transfers: 6n,
      confirmed: 2n,
      failed: 2n,
      unproven: 2n,
      value_xaf: 1000n,
    });
    const weeks = await dailyRows(db.em(), scope, WINDOW, true);
    expect(weeks[0]).toMatchObject({ day: "2026-01-26", operations: 6n });
    expect(weeks.reduce((t, w) => t + w.operations, 0n)).toBe(1800n);
  });
});
