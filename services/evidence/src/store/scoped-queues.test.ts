// The unmatched queue and the movements in an agent's scope, against real PostgreSQL
// (Migration0015ScopedQueues): a page is read SIM by SIM of the grant, so a quiet SIM's few
// messages, older than the fleet's 20,000, are found in a few pages rather than by walking the
// fleet's entries newest first; and the page is the scope's newest, whatever the SIMs.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { planOfLast } from "../../../../test/support/statements.ts";
import type { Scope } from "../domain/scope.ts";
import { migrations } from "./migrations/index.ts";
import { listMovements, listUnmatched } from "./messages.ts";

let tdb: TestDatabase;
let db: Database;
/** Two messages of each list, older than every message of the busy SIMs. */
const QUIET = `sim-quiet-${randomUUID()}`;
/** A SIM with many of each, among the fleet's. */
const BUSY = "sim-busy-7";
const NOW = new Date("2026-11-20T12:00:00Z");
const ALL = { from: null, to: null };

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "evidence", migrations, poolMax: 2 });
  // 20,000 messages of 100 SIMs, a minute apart back from NOW: unmatched deposits and movements
  // by turns of 100 minutes (each SIM has both); then the quiet SIM's four, the oldest of all.
  await db.em().execute(
    `insert into evidence.messages (id, sim_id, sms_hash, sender, raw_text, received_at, kind, amount, direction,
       state, outcome)
     select gen_random_uuid(), 'sim-busy-' || (g % 100), md5(g::text) || md5('x' || g), 'OrangeMoney', 'text ' || g,
       ?::timestamptz - g * interval '1 minute', case when (g / 100) % 2 = 0 then 'DEP' else 'UV_IN' end, 100,
       case when (g / 100) % 2 = 0 then 'out' else 'in' end, 'done',
       case when (g / 100) % 2 = 0 then 'orphan' else 'movement' end
     from generate_series(1, 20000) g`,
    [NOW],
  );
  await db.em().execute(
    `insert into evidence.messages (id, sim_id, sms_hash, sender, raw_text, received_at, kind, amount, direction,
       state, outcome)
     select gen_random_uuid(), ?, md5('quiet' || g) || md5('q' || g), 'OrangeMoney', 'quiet ' || g,
       ?::timestamptz - (30000 + g) * interval '1 minute', case when g <= 2 then 'DEP' else 'UV_IN' end, 100,
       case when g <= 2 then 'out' else 'in' end, 'done', case when g <= 2 then 'orphan' else 'movement' end
     from generate_series(1, 4) g`,
    [QUIET, NOW],
  );
  await db.em().execute(`vacuum analyze evidence.messages`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

const agent = (...simIds: string[]): Scope => ({ fleet: false, simIds: new Set(simIds) });
const lists = [
  ["unmatched queue", listUnmatched, "DEP"],
  ["movements", listMovements, "UV_IN"],
] as const;

describe("a board list in an agent's scope", () => {
  it.each(lists)("%s: a quiet SIM's two, from a few pages", async (_name, list, kind) => {
    const { result, plan, pages } = await planOfLast(db.em(), () => list(db.em(), agent(QUIET), ALL, 50));
    expect(result.map((m) => [m.sim_id, m.kind])).toEqual([
      [QUIET, kind],
      [QUIET, kind],
    ]);
    // The statement's pages, not the fleet's 10,000 entries (about 30 index pages and 200 of the table).
    expect([pages < 40, plan.join("\n")]).toEqual([true, plan.join("\n")]);
  });

  it.each(lists)("%s: the scope's newest page, SIM by SIM merged, as the fleet's order", async (_name, list, kind) => {
    const scoped = await list(db.em(), agent(QUIET, BUSY, "sim-busy-8"), ALL, 50);
    const fleet = await list(db.em(), { fleet: true }, ALL, 20_000);
    const expected = fleet
      .filter((m) => [QUIET, BUSY, "sim-busy-8"].includes(m.sim_id))
      .slice(0, 50)
      .map((m) => m.id);
    expect(scoped.map((m) => m.id)).toEqual(expected);
    expect(new Set(scoped.map((m) => m.kind))).toEqual(new Set([kind]));
    expect(scoped).toHaveLength(50);
  });

  it.each(lists)(
    "%s: a grant of every SIM reads a page of entries from each, then the page's rows",
    async (_name, list) => {
      const every = agent(QUIET, ...Array.from({ length: 100 }, (_, i) => `sim-busy-${i}`));
      const { result, plan, pages } = await planOfLast(db.em(), () => list(db.em(), every, ALL, 50));
      const fleet = await list(db.em(), { fleet: true }, ALL, 50);
      expect(result.map((m) => m.id)).toEqual(fleet.map((m) => m.id));
      // Each SIM's 50 entries from its index alone (no row read for them), then the page's 50
      // rows: not the 5,050 rows whole (about 150 more pages).
      expect([
        plan.some((l) => /Index Only Scan using messages_(unmatched|movements)_sim/.test(l)),
        pages < 1000,
      ]).toEqual([true, true]);
    },
  );

  it.each(lists)("%s: a window and a grant of no SIM", async (_name, list) => {
    const from = new Date(NOW.getTime() - 360 * 60_000);
    const windowed = await list(db.em(), agent(BUSY), { from, to: null }, 50);
    expect(windowed.every((m) => m.sim_id === BUSY && m.received_at >= from)).toBe(true);
    expect(windowed.length).toBeGreaterThan(0);
    expect(await list(db.em(), agent(), ALL, 50)).toEqual([]);
  });
});
