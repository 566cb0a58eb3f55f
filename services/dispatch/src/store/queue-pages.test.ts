// The arbitration queue's page over a long backlog, against real PostgreSQL and under the plan
// a prepared statement ends with (generic, made without the window's values): an agent's scope
// walks the unproven operations in the queue's order and stops at its page, not sorting the
// window's whole backlog (Migration0015UnprovenOrder).

import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import { migrations } from "./migrations/index.ts";
import { listUnproven, type QueueFilter } from "./queues.ts";

let tdb: TestDatabase;
let db: Database;
const AGENT = randomUUID();
const SIMS = Array.from({ length: 100 }, (_, i) => `sim-${i}`);

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

describe("the arbitration queue's page", () => {
  it("in an agent's scope, under the generic plan: its page, walked in the queue's order", async () => {
    const to = new Date(Date.now() + 60_000);
    const filter: QueueFilter = {
      scope: { agent_id: AGENT, sim_ids: SIMS.slice(0, 4) },
      from: new Date(to.getTime() - 30 * 86_400_000),
      to,
      limit: 50,
    };
    const recorded = recordStatements();
    let page: { sim_id: string | null; finished_at: Date | null }[];
    try {
      page = await listUnproven(db.em(), filter);
    } finally {
      recorded.stop();
    }
    expect(page).toHaveLength(50);
    expect(page.every((o) => SIMS.slice(0, 4).includes(o.sim_id!))).toBe(true);
    const times = page.map((o) => o.finished_at!.getTime());
    expect(times).toEqual([...times].sort((a, b) => b - a));

    const { text, values } = numbered(recorded.statements.at(-1)!, recorded.params.at(-1)!);
    const client = new pg.Client({ connectionString: tdb.url });
    await client.connect();
    try {
      await client.query(`set plan_cache_mode = force_generic_plan`);
      await client.query({ name: "unproven_page", text, values });
      const args = values
        .map((v) =>
          v === null || v === undefined
            ? "null"
            : client.escapeLiteral(v instanceof Date ? v.toISOString() : String(v)),
        )
        .join(", ");
      const plan = (
        await client.query(`explain (analyze, buffers, costs off) execute unproven_page(${args})`)
      ).rows.map((r: { "QUERY PLAN": string }) => r["QUERY PLAN"]);
      // The page's walk: about 50 over the scope's share of the backlog (4 SIMs of 100: 1,250
      // entries, 1,200 of them passed over), not the window's 40,000 entries.
      const passedOver = Math.max(...plan.map((l) => Number(/Rows Removed by Filter: (\d+)/.exec(l)?.[1] ?? 0)));
      expect([passedOver < 4000, plan.join("\n")]).toEqual([true, plan.join("\n")]);
    } finally {
      await client.end();
    }
  });
});
