import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import {
  apiKey,
  useDispatchHarness,
  type DispatchHarness,
  queueOn,
} from "../../../../test/support/dispatch-harness.ts";
import { countSimHistory, deleteAllOperations, sweepBacklog } from "./fleet-facing.ts";
import { forgetReference } from "./fleet-changes.ts";
import { migrations } from "./migrations/index.ts";

// The unproven backlog of fleet health (sweepBacklog) from the SIMs' counts rows
// (Migration0012UnprovenCounts): equal, after every change, to the count over the operations.

let h: DispatchHarness;
let db: Database;
const admin = randomUUID();
useDispatchHarness({ DEVICE_COOLDOWN_S: "0" }, (started) => (h = started));
beforeAll(async () => {
  await h.fleet.addAgent(admin, { role: "admin" });
  db = await openDatabase({ url: h.databaseUrl, schema: "dispatch", migrations, poolMax: 2 });
});
afterAll(() => db?.close());

function sim(): string {
  const simId = randomUUID();
  h.fleet.addSim({ sim_id: simId, operator: "operator_b", device_id: `dev-${randomUUID().slice(0, 6)}` });
  return simId;
}
const queue = (simId: string) => queueOn(h, admin, simId, { caller: apiKey(), agentId: admin });
const set = (id: string, column: string, value: string | null) =>
  h.query(`update dispatch.operations set ${column} = $2 where operation_id = $1`, [id, value]);

/** The old statement: every unproven operation, counted from the table. */
const truth = async () =>
  Number(
    (
      await h.query(
        `select count(*) as n from dispatch.operations
          where status = 'no_evidence' and op_type not in ('balance', 'mini_statement')`,
      )
    )[0].n,
  );
const perSim = async () =>
  h.query(
    `select c.sim_id, c.unproven::int as kept, count(o.operation_id)::int as counted
       from dispatch.sim_operation_counts c
       left join dispatch.operations o on o.sim_id = c.sim_id and o.status = 'no_evidence'
        and o.op_type not in ('balance', 'mini_statement')
      group by c.sim_id, c.unproven having c.unproven <> count(o.operation_id)`,
  );
const backlog = async () => (await db.tx((em) => sweepBacklog(em, new Date()))).unproven_waiting;
const expectExact = async () => {
  expect(await perSim()).toEqual([]);
  expect(await backlog()).toBe(await truth());
};

describe("fleet health's unproven backlog, from the SIMs' counts rows", () => {
  it("follows inserts, every move into and out of no_evidence, a move to another SIM and a deleted SIM", async () => {
    const [s, other] = [sim(), sim()];
    const ops = [await queue(s), await queue(s), await queue(s), await queue(s)];
    await expectExact();
    await set(ops[0]!, "status", "no_evidence");
    await set(ops[1]!, "status", "no_evidence");
    expect(await backlog()).toBe(2);
    await set(ops[2]!, "op_type", "balance");
    await set(ops[2]!, "status", "no_evidence"); // not a transfer of money: not counted
    await expectExact();
    expect(await backlog()).toBe(2);
    await set(ops[0]!, "status", "confirmed"); // a late proof
    await set(ops[1]!, "status", "failed"); // arbitrated
    await set(ops[1]!, "status", "no_evidence"); // and back
    await expectExact();
    expect(await backlog()).toBe(1);
    await set(ops[1]!, "sim_id", other); // to another SIM, unproven
    await set(ops[3]!, "status", "no_evidence");
    await set(ops[3]!, "sim_id", other); // moved and ...
    await set(ops[3]!, "status", "rejected"); // ... out
    await expectExact();
    expect(await backlog()).toBe(1);
    // The SIM deleted: its row goes, its unproven operations are of no SIM and still counted.
    await db.tx((em) => forgetReference(em, "sim_id", other));
    await expectExact();
    expect(await backlog()).toBe(1);
    await set(ops[1]!, "status", "confirmed");
    await expectExact();
    expect(await backlog()).toBe(0);
  });

  it("counts a SIM the migration left uncounted from its rows, then from its row once counted", async () => {
    const s = sim();
    const [a, b] = [await queue(s), await queue(s)];
    await set(a, "status", "no_evidence");
    await set(b, "status", "no_evidence");
    await h.query(
      `update dispatch.sim_operation_counts set unproven = 0, operations = 0, counted = false where sim_id = $1`,
      [s],
    );
    expect(await backlog()).toBe(await truth());
    while (await db.tx((em) => countSimHistory(em)));
    await expectExact();
  });

  it("loses no change of two transactions committing on two connections", async () => {
    const s = sim();
    const ids = [await queue(s), await queue(s), await queue(s), await queue(s)];
    await set(ids[2]!, "status", "no_evidence");
    await set(ids[3]!, "status", "no_evidence");
    const before = await backlog();
    const [w1, w2] = [
      new pg.Client({ connectionString: h.databaseUrl }),
      new pg.Client({ connectionString: h.databaseUrl }),
    ];
    await Promise.all([w1.connect(), w2.connect()]);
    try {
      await w1.query(`begin`);
      await w2.query(`begin`);
      await w1.query(`update dispatch.operations set status = 'no_evidence' where operation_id = $1`, [ids[0]]);
      await w2.query(`update dispatch.operations set status = 'no_evidence' where operation_id = $1`, [ids[1]]);
      await w1.query(`update dispatch.operations set status = 'confirmed' where operation_id = $1`, [ids[2]]);
      await w2.query(`update dispatch.operations set status = 'failed' where operation_id = $1`, [ids[3]]);
      await Promise.all([w1.query(`commit`), w2.query(`commit`)]);
    } finally {
      await Promise.all([w1.end(), w2.end()]);
    }
    await expectExact();
    expect(await backlog()).toBe(before);
  });

  it("is empty after the reset, and counts again after it", async () => {
    const s = sim();
    await set(await queue(s), "status", "no_evidence");
    expect(await backlog()).toBeGreaterThan(0);
    await db.tx((em) => deleteAllOperations(em));
    expect(await backlog()).toBe(0);
    await set(await queue(s), "status", "no_evidence");
    await expectExact();
    expect(await backlog()).toBe(1);
  });
});
