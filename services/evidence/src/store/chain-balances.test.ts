// A SIM's last printed balance before a time, against real PostgreSQL (Migration0012ChainBalances):
// a SIM whose messages print no balance is answered in one descent of `messages_sim_balance`, at
// a day's reconciliation (`chainsOfPeriod`) and at each SMS (`chainNeighbours`), not by reading
// its history back to the last balance, and the answer is what the rows give.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { recordStatements } from "../../../../test/support/statements.ts";
import { migrations } from "./migrations/index.ts";
import { chainNeighbours, chainsOfPeriod, findMessage } from "./messages.ts";

let tdb: TestDatabase;
let db: Database;
/** 20,000 messages over the 100 days before DAY, none printing a balance, after one that did. */
const QUIET = `sim-quiet-${randomUUID()}`;
/** A SIM whose every message prints one. */
const PRINTING = `sim-printing-${randomUUID()}`;
const DAY = new Date("2026-11-20T00:00:00Z");
const NEXT_DAY = new Date("2026-11-21T00:00:00Z");
const OLD_BALANCE_AT = new Date("2026-05-01T10:00:00Z");
let todays: string;

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "evidence", migrations, poolMax: 2 });
  const insert = (sim: string, count: number, from: string, balance: string) =>
    db.em().execute(
      `insert into evidence.messages (id, sim_id, sms_hash, sender, raw_text, received_at, kind, amount, balance_after,
         direction, operator_ref, state, outcome)
       select gen_random_uuid(), ?, md5(? || g) || md5(g::text), 'OrangeMoney', 'text ' || g,
         ?::timestamptz + g * interval '7 minutes', 'UV_IN', 100, ${balance}, 'in', 'ref-' || g, 'done', 'movement'
       from generate_series(1, ?) g`,
      [sim, sim, from, count],
    );
  // The quiet SIM: one balance long ago, then messages the chain reads but that print none,
  // and restatements and an unknown sender's that print one the chain must not take.
  await db.em().execute(
    `insert into evidence.messages (id, sim_id, sms_hash, sender, raw_text, received_at, kind, amount, balance_after,
       direction, state, outcome)
     values (gen_random_uuid(), ?, repeat('a', 64), 'OrangeMoney', 'old', ?, 'UV_IN', 100, 5000, 'in', 'done', 'movement')`,
    [QUIET, OLD_BALANCE_AT],
  );
  await insert(QUIET, 20_000, "2026-08-12T00:00:00Z", "null");
  await db.em().execute(
    `update evidence.messages set balance_after = 999, outcome = case when random() < 0.5 then 'restated' else 'unknown_sender' end
     where sim_id = ? and received_at > '2026-11-10' and received_at < ?`,
    [QUIET, DAY],
  );
  await insert(PRINTING, 2_000, "2026-11-10T00:00:00Z", "100000 + g");
  await db.em().execute(
    `insert into evidence.messages (id, sim_id, sms_hash, sender, raw_text, received_at, kind, amount, direction, state, outcome)
     values (?, ?, repeat('b', 64), 'OrangeMoney', 'today', ?, 'UV_IN', 100, 'in', 'done', 'movement')`,
    [(todays = randomUUID()), QUIET, new Date(DAY.getTime() + 3_600_000)],
  );
  await db.em().execute(`vacuum analyze evidence.messages`);
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

/** Runs `read`, then explains (analyze, buffers) the last statement it sent: its plan's lines and the buffers its top node read. */
async function planOf(read: () => Promise<unknown>): Promise<{ plan: string[]; buffers: number }> {
  const recorded = recordStatements();
  try {
    await read();
  } finally {
    recorded.stop();
  }
  const plan = (
    await rows<{ "QUERY PLAN": string }>(
      db.em(),
      `explain (analyze, buffers, costs off) ${recorded.statements.at(-1)!}`,
      recorded.params.at(-1)!,
    )
  ).map((r) => r["QUERY PLAN"]);
  const top = plan.find((l) => l.includes("Buffers:")) ?? "";
  const buffers = [...top.matchAll(/(hit|read)=(\d+)/g)].reduce((s, m) => s + Number(m[2]), 0);
  return { plan, buffers };
}

/** What the rows give: the SIM's last chain message before `at` that printed a balance. */
const lastBalance = async (sim: string, at: Date) =>
  (
    await rows<{ id: string }>(
      db.em(),
      `select id from evidence.messages where sim_id = ? and state = 'done' and outcome not in ('unknown_sender', 'restated')
         and balance_after is not null and received_at < ? order by received_at desc, stored_at desc limit 1`,
      [sim, at],
    )
  )[0]?.id;

describe("a SIM's last printed balance before a time", () => {
  it("is found in one descent for a SIM whose messages print none, at a day's reconciliation", async () => {
    for (const sims of [[QUIET], [QUIET, PRINTING]]) {
      let chains: Awaited<ReturnType<typeof chainsOfPeriod>> | undefined;
      const { plan, buffers } = await planOf(async () => (chains = await chainsOfPeriod(db.em(), sims, DAY, NEXT_DAY)));
      expect([sims.length, plan.some((l) => l.includes("messages_sim_balance"))]).toEqual([sims.length, true]);
      // A few index pages a SIM; the walk back through the quiet SIM's 20,000 messages read about a thousand.
      expect([sims.length, buffers < 60, buffers]).toEqual([sims.length, true, buffers]);
      expect(chains!.get(QUIET)!.before?.id).toBe(await lastBalance(QUIET, DAY));
      expect(chains!.get(QUIET)!.before?.balance_after).toBe(5000);
      expect(chains!.get(QUIET)!.messages.map((m) => m.id)).toEqual([todays]);
      if (sims.length > 1) expect(chains!.get(PRINTING)!.before?.id).toBe(await lastBalance(PRINTING, DAY));
    }
  });

  it("is found in one descent at each SMS of that SIM (its chain's neighbours)", async () => {
    const m = (await findMessage(db.em(), todays))!;
    let found: Awaited<ReturnType<typeof chainNeighbours>> | undefined;
    const { plan, buffers } = await planOf(async () => (found = await chainNeighbours(db.em(), m)));
    expect(plan.some((l) => l.includes("messages_sim_balance"))).toBe(true);
    expect(buffers).toBeLessThan(60);
    expect(found!.previous?.id).toBe(await lastBalance(QUIET, m.received_at));
    expect(found!.previous?.balance_after).toBe(5000);
    expect(found!.next).toBeUndefined();
  });
});
