import { randomUUID } from "node:crypto";
import { create, toBinary } from "@bufbuild/protobuf";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { SimDeletedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import {
  apiKey,
  device,
  eventually,
  useDispatchHarness,
  type DispatchHarness,
  queueOn,
} from "../../../../test/support/dispatch-harness.ts";
import { countSimHistory } from "./fleet-facing.ts";
import { migrations } from "./migrations/index.ts";

// A SIM's history totals from its counts row (Migration0011SimCounts): kept at each commit by
// the triggers, counted a SIM at a time for a history migrated live, read by GetSimActivity.

let h: DispatchHarness;
const admin = randomUUID();
useDispatchHarness({ DEVICE_COOLDOWN_S: "0" }, (started) => (h = started));
beforeAll(() => h.fleet.addAgent(admin, { role: "admin" }));

function sim(): { simId: string; deviceId: string } {
  const simId = randomUUID();
  const deviceId = `dev-${randomUUID().slice(0, 6)}`;
  h.fleet.addSim({ sim_id: simId, operator: "operator_b", device_id: deviceId });
  return { simId, deviceId };
}
const queue = (simId: string, amount = 5000) =>
  queueOn(h, admin, simId, { caller: apiKey(), agentId: admin, montant: BigInt(amount) });

/** Counts every SIM left uncounted, a SIM per transaction, as the start does (flows/fleet-facing.ts). */
async function countAll(db: Database): Promise<number> {
  let n = 0;
  while (await db.tx((em) => countSimHistory(em))) n++;
  return n;
}

/** What the SIM history's totals must say: the SIM's operations counted from the table. */
async function truth(simId: string) {
  const [r] = await h.query(
    `select count(*)::int as operations, (count(*) filter (where status = 'confirmed'))::int as confirmed,
       (count(*) filter (where status = 'failed'))::int as failed,
       (count(*) filter (where status = 'no_evidence'))::int as no_evidence
     from dispatch.operations where sim_id = $1`,
    [simId],
  );
  return r as { operations: number; confirmed: number; failed: number; no_evidence: number };
}
const countsRow = async (simId: string) =>
  (
    await h.query(
      `select operations::int, confirmed::int, failed::int, no_evidence::int, counted
         from dispatch.sim_operation_counts where sim_id = $1`,
      [simId],
    )
  )[0];
const totalsOf = async (simId: string) => {
  const a = await h.client.getSimActivity({ simId });
  return {
    operations: a.totalOperations,
    confirmed: a.totalConfirmed,
    failed: a.totalFailed,
    no_evidence: a.totalNoEvidence,
  };
};
const setStatus = (id: string, status: string) =>
  h.query(`update dispatch.operations set status = $2 where operation_id = $1`, [id, status]);

describe("GetSimActivity's totals, from the SIM's counts row", () => {
  let db: Database;
  beforeAll(async () => {
    // A second handle on the service's database, as another replica starting would open.
    db = await openDatabase({ url: h.databaseUrl, schema: "dispatch", migrations, poolMax: 2 });
  });
  afterAll(() => db.close());

  it("follows every insert and status change, a claim and a move to another SIM", async () => {
    const s = sim();
    const other = sim();
    const ops = [await queue(s.simId, 1000), await queue(s.simId, 2000), await queue(s.simId, 3000)];
    await h.client.getNextOperation({ caller: device(s.deviceId) }); // claimed: running
    await setStatus(ops[1]!, "confirmed");
    await setStatus(ops[2]!, "no_evidence");
    await setStatus(ops[2]!, "confirmed"); // a late proof
    await setStatus(ops[1]!, "failed"); // any change between counted statuses
    await h.query(`update dispatch.operations set sim_id = $2 where operation_id = $1`, [ops[1], other.simId]);
    for (const id of [s.simId, other.simId]) {
      expect(await totalsOf(id)).toEqual(await truth(id));
      expect(await countsRow(id)).toEqual({ ...(await truth(id)), counted: true });
    }
    expect(await truth(s.simId)).toEqual({ operations: 2, confirmed: 1, failed: 0, no_evidence: 0 });
  });

  it("answers from the SIM's rows until a history migrated live is counted, then from its row", async () => {
    const s = sim();
    const [a, b] = [await queue(s.simId), await queue(s.simId)];
    await setStatus(a, "confirmed");
    await setStatus(b, "failed");
    // As the migration leaves a SIM that had operations: uncounted.
    await h.query(
      `update dispatch.sim_operation_counts set operations = 0, confirmed = 0, failed = 0, no_evidence = 0,
         counted = false where sim_id = $1`,
      [s.simId],
    );
    expect(await totalsOf(s.simId)).toEqual({ operations: 2, confirmed: 1, failed: 1, no_evidence: 0 });
    expect(await countAll(db)).toBeGreaterThanOrEqual(1);
    expect(await countsRow(s.simId)).toEqual({ operations: 2, confirmed: 1, failed: 1, no_evidence: 0, counted: true });
  });

  it("counts a SIM without losing or doubling a change committed during its count, in either order", async () => {
    const s = sim();
    const [a, b] = [await queue(s.simId), await queue(s.simId)];
    const uncount = () =>
      h.query(`update dispatch.sim_operation_counts set operations = 0, counted = false where sim_id = $1`, [s.simId]);
    const writer = new pg.Client({ connectionString: h.databaseUrl });
    await writer.connect();
    try {
      // The change is made, not committed, when the count runs: the count does not see it, the
      // writer's commit adds it.
      await uncount();
      await writer.query(`begin`);
      await writer.query(`update dispatch.operations set status = 'failed' where operation_id = $1`, [a]);
      await countAll(db);
      await writer.query(`commit`);
      expect(await countsRow(s.simId)).toEqual({ ...(await truth(s.simId)), counted: true });

      // The writer holds the SIM's row (its trigger ran) when the count starts: the count waits
      // for its commit and sees its change.
      await uncount();
      await writer.query(`begin`);
      await writer.query(`update dispatch.operations set status = 'confirmed' where operation_id = $1`, [b]);
      await writer.query(`set constraints all immediate`);
      const counting = countAll(db);
      await new Promise((r) => setTimeout(r, 200));
      await writer.query(`commit`);
      await counting;
      expect(await countsRow(s.simId)).toEqual({
        operations: 2,
        confirmed: 1,
        failed: 1,
        no_evidence: 0,
        counted: true,
      });
    } finally {
      await writer.end();
    }
  });

  it("vacuums the operations by a 1 % share and the outbox by count (the migration's settings)", async () => {
    const options = async (table: string) =>
      (await h.query(`select reloptions from pg_class where oid = $1::regclass`, [table]))[0].reloptions;
    expect(await options("dispatch.operations")).toEqual([
      "autovacuum_vacuum_scale_factor=0.01",
      "autovacuum_analyze_scale_factor=0.005",
      "autovacuum_vacuum_insert_scale_factor=0.01",
    ]);
    expect(await options("dispatch.outbox")).toEqual([
      "autovacuum_vacuum_scale_factor=0",
      "autovacuum_vacuum_threshold=10000",
    ]);
  });

  it("drops a deleted SIM's counts with its reference", async () => {
    const s = sim();
    await queue(s.simId);
    await h.bus.publish([
      {
        topic: "fleet",
        key: s.simId,
        value: toBinary(SimDeletedSchema, create(SimDeletedSchema, { simId: s.simId })),
        headers: {
          "event-id": randomUUID(),
          "event-type": SimDeletedSchema.typeName,
          "occurred-at": new Date().toISOString(),
          "correlation-id": randomUUID(),
        },
      },
    ]);
    await eventually(async () => ((await countsRow(s.simId)) === undefined ? true : undefined), 5000, "row dropped");
    expect(await totalsOf(s.simId)).toEqual({ operations: 0, confirmed: 0, failed: 0, no_evidence: 0 });
  });
});
