import { randomUUID } from "node:crypto";
import { create, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { beforeAll, describe, expect, it } from "vitest";
import {
  DeviceChangedSchema,
  DeviceDeletedSchema,
  SimChangedSchema,
  SimDeletedSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { SimSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import {
  apiKey,
  device,
  eventually,
  refusalOf,
  session,
  useDispatchHarness,
  type DispatchHarness,
  queueOn,
} from "../../../../test/support/dispatch-harness.ts";

let h: DispatchHarness;
const agent = randomUUID();
const admin = randomUUID();

useDispatchHarness({ DEVICE_COOLDOWN_S: "0" }, (started) => (h = started));
beforeAll(() => {
  h.fleet.addAgent(agent);
  h.fleet.addAgent(admin, { role: "admin" });
});

function sim(deviceId = `dev-${randomUUID().slice(0, 6)}`): { simId: string; deviceId: string } {
  const simId = randomUUID();
  h.fleet.addSim({ sim_id: simId, operator: "operator_b", device_id: deviceId });
  return { simId, deviceId };
}
const queue = (simId: string, amount = 5000) =>
  queueOn(h, admin, simId, { caller: apiKey(), agentId: admin, montant: BigInt(amount) });
const row = async (id: string) => (await h.query(`select * from dispatch.operations where operation_id = $1`, [id]))[0];

async function publishFleet<S extends DescMessage>(schema: S, message: MessageShape<S>, key: string): Promise<void> {
  await h.bus.publish([
    {
      topic: "fleet",
      key,
      value: toBinary(schema, message),
      headers: {
        "event-id": randomUUID(),
        "event-type": schema.typeName,
        "occurred-at": new Date().toISOString(),
        "correlation-id": randomUUID(),
      },
    },
  ]);
}

describe("GetSimActivity", () => {
  it("counts a SIM's operations by status and lists them newest first", async () => {
    const s = sim();
    const queued = await queue(s.simId, 1000);
    const done = await queue(s.simId, 2000);
    await h.query(`update dispatch.operations set status = 'confirmed', finished_at = now() where operation_id = $1`, [
      done,
    ]);
    const a = await h.client.getSimActivity({ simId: s.simId });
    expect([a.queuedOrRunning, a.totalOperations, a.totalConfirmed, a.totalFailed, a.totalNoEvidence]).toEqual([
      1, 2, 1, 0, 0,
    ]);
    expect(a.operations.map((o) => o.operationId)).toEqual([done, queued]);
    expect(a.operations[0]).toMatchObject({
      status: "confirmed",
      opType: "deposit",
      montant: 2000n,
      msisdnDest: "690000001",
    });
  });
});

const totalsOf = async (simId: string) => {
  const a = await h.client.getSimActivity({ simId });
  return {
    operations: a.totalOperations,
    confirmed: a.totalConfirmed,
    failed: a.totalFailed,
    no_evidence: a.totalNoEvidence,
  };
};

describe("events from fleet", () => {
  it("on SimDeleted: fails the SIM's queued work and nulls sim_id on every operation of it", async () => {
    const s = sim();
    const queued = await queue(s.simId);
    const old = await queue(s.simId, 3000);
    await h.query(`update dispatch.operations set status = 'confirmed' where operation_id = $1`, [old]);
    await publishFleet(SimDeletedSchema, create(SimDeletedSchema, { simId: s.simId }), s.simId);
    await eventually(async () => ((await row(queued)).sim_id === null ? true : undefined), 5000, "sim_id nulled");
    expect(await row(queued)).toMatchObject({ status: "failed", failure_reason: "sim_deleted" });
    expect(await row(old)).toMatchObject({ status: "confirmed", sim_id: null });
  });

  it("on DeviceDeleted: fails queued work, moves a running operation to no_evidence, nulls device_id", async () => {
    const s = sim();
    const running = await queue(s.simId);
    const queued = await queue(s.simId);
    await h.client.getNextOperation({ caller: device(s.deviceId) });
    expect((await row(running)).status).toBe("running");
    await publishFleet(
      DeviceDeletedSchema,
      create(DeviceDeletedSchema, { deviceId: s.deviceId, unassignedSimIds: [s.simId] }),
      s.deviceId,
    );
    await eventually(
      async () => ((await row(running)).device_id === null ? true : undefined),
      5000,
      "device_id nulled",
    );
    expect(await row(running)).toMatchObject({ status: "no_evidence", sim_id: s.simId });
    expect(await row(queued)).toMatchObject({ status: "failed", failure_reason: "device_deleted", device_id: null });
  });

  it("on DeviceChanged frozen: hands the handset no queued work until it is restored", async () => {
    const s = sim();
    const queued = await queue(s.simId);
    await publishFleet(
      DeviceChangedSchema,
      create(DeviceChangedSchema, { deviceId: s.deviceId, label: "h", status: "frozen", change: "frozen" }),
      s.deviceId,
    );
    await eventually(
      async () =>
        (await h.query(`select 1 from dispatch.devices where device_id = $1`, [s.deviceId])).length ? true : undefined,
      5000,
      "frozen",
    );
    expect((await h.client.getNextOperation({ caller: device(s.deviceId) })).dispatch).toBeUndefined();
    await publishFleet(
      DeviceChangedSchema,
      create(DeviceChangedSchema, { deviceId: s.deviceId, label: "h", status: "active", change: "restored" }),
      s.deviceId,
    );
    const claimed = await eventually(
      async () => (await h.client.getNextOperation({ caller: device(s.deviceId) })).dispatch,
      5000,
      "restored",
    );
    expect(claimed.operationId).toBe(queued);
  });

  it("applies a redelivered event once (inbox)", async () => {
    const s = sim();
    const queued = await queue(s.simId);
    const message = toBinary(SimDeletedSchema, create(SimDeletedSchema, { simId: s.simId }));
    const headers = {
      "event-id": randomUUID(),
      "event-type": SimDeletedSchema.typeName,
      "occurred-at": new Date().toISOString(),
      "correlation-id": "c",
    };
    await h.bus.publish([{ topic: "fleet", key: s.simId, value: message, headers }]);
    await h.bus.publish([{ topic: "fleet", key: s.simId, value: message, headers }]);
    await eventually(async () => ((await row(queued)).sim_id === null ? true : undefined), 5000, "sim_id nulled");
    const [{ n }] = await h.query(`select count(*)::int as n from dispatch.inbox where event_id = $1`, [
      headers["event-id"],
    ]);
    expect(n).toBe(1);
    const [{ events }] = await h.query(`select count(*)::int as events from dispatch.outbox where key = $1`, [queued]);
    expect(events).toBe(3); // create, then one failed transition: OperationChanged + OperationFailed
  });

  it("on SimChanged (assigned elsewhere): the SIM's queued work follows it to its new handset", async () => {
    const s = sim();
    const queued = await queue(s.simId);
    const moved = create(SimSchema, {
      simId: s.simId,
      operator: "operator_b",
      msisdn: "690000000",
      status: "active",
      deviceId: "dev-new",
      subscriptionSlot: 1,
      createdAt: timestampFromDate(new Date()),
    });
    // Fleet moved the SIM (it reveals its PIN only to its new handset now) and says so.
    Object.assign(h.fleet.sims.get(s.simId)!, { device_id: "dev-new", subscription_slot: 1 });
    await publishFleet(SimChangedSchema, create(SimChangedSchema, { sim: moved, change: "assigned" }), s.simId);
    await eventually(async () => ((await row(queued)).device_id === "dev-new" ? true : undefined), 5000, "rerouted");
    expect((await row(queued)).subscription_slot).toBe(1);
    expect((await h.client.getNextOperation({ caller: device("dev-new") })).dispatch?.operationId).toBe(queued);
  });

  it("on SimChanged for a balance: nothing moves and no transaction runs (no inbox row)", async () => {
    const s = sim();
    const queued = await queue(s.simId);
    const before = await row(queued);
    const balance = { "event-id": randomUUID(), "event-type": SimChangedSchema.typeName };
    const withDevice = create(SimSchema, { simId: s.simId, operator: "operator_b", deviceId: "dev-other" });
    await h.bus.publish([
      {
        topic: "fleet",
        key: s.simId,
        value: toBinary(SimChangedSchema, create(SimChangedSchema, { sim: withDevice, change: "balance" })),
        headers: { ...balance, "occurred-at": new Date().toISOString(), "correlation-id": "c" },
      },
    ]);
    // An event behind it on the same key: once it is applied, the balance change was handled.
    const behind = randomUUID();
    await h.bus.publish([
      {
        topic: "fleet",
        key: s.simId,
        value: toBinary(DeviceChangedSchema, create(DeviceChangedSchema, { deviceId: "dev-other", status: "active" })),
        headers: {
          "event-id": behind,
          "event-type": DeviceChangedSchema.typeName,
          "occurred-at": new Date().toISOString(),
          "correlation-id": "c",
        },
      },
    ]);
    await eventually(
      async () =>
        (await h.query(`select 1 from dispatch.inbox where event_id = $1`, [behind])).length ? true : undefined,
      5000,
      "the event behind applied",
    );
    expect(await h.query(`select 1 from dispatch.inbox where event_id = $1`, [balance["event-id"]])).toEqual([]);
    expect((await row(queued)).device_id).toBe(before.device_id);
  });

  it("on SimChanged (unassigned): the SIM's queued work leaves the old handset and follows the next assignment", async () => {
    const s = sim();
    const queued = await queue(s.simId);
    const simOf = (deviceId: string, slot?: number) =>
      create(SimSchema, {
        simId: s.simId,
        operator: "operator_b",
        msisdn: "690000000",
        status: "active",
        deviceId,
        subscriptionSlot: slot,
        createdAt: timestampFromDate(new Date()),
      });
    Object.assign(h.fleet.sims.get(s.simId)!, { device_id: null, subscription_slot: null });
    await publishFleet(SimChangedSchema, create(SimChangedSchema, { sim: simOf(""), change: "unassigned" }), s.simId);
    await eventually(async () => ((await row(queued)).device_id === null ? true : undefined), 5000, "held");
    expect((await row(queued)).status).toBe("queued");
    expect((await h.client.getNextOperation({ caller: device(s.deviceId) })).dispatch).toBeUndefined();
    Object.assign(h.fleet.sims.get(s.simId)!, { device_id: "dev-next", subscription_slot: 0 });
    await publishFleet(
      SimChangedSchema,
      create(SimChangedSchema, { sim: simOf("dev-next", 0), change: "assigned" }),
      s.simId,
    );
    await eventually(async () => ((await row(queued)).device_id === "dev-next" ? true : undefined), 5000, "rerouted");
    expect((await h.client.getNextOperation({ caller: device("dev-next") })).dispatch?.operationId).toBe(queued);
  });
});

describe("GetSweepBacklog and ResetOperations", () => {
  it("counts unproven transfers waiting for a person", async () => {
    const s = sim();
    const id = await queue(s.simId);
    const before = (await h.client.getSweepBacklog({})).unprovenWaiting;
    await h.query(
      `update dispatch.operations set status = 'no_evidence', finished_at = now() where operation_id = $1`,
      [id],
    );
    expect((await h.client.getSweepBacklog({})).unprovenWaiting).toBe(before + 1);
  });

  it("refuses a reset from anyone but an admin, then deletes every operation and purges the queue", async () => {
    const s = sim();
    await queue(s.simId);
    expect((await refusalOf(h.client.resetOperations({ caller: session(agent) }))).status).toBe(403);
    const [{ total }] = await h.query(`select count(*)::int as total from dispatch.operations`);
    const res = await h.client.resetOperations({ caller: session(admin, "admin") });
    expect(res.queuePurged).toBe(true);
    expect(res.deleted.operations).toBe(BigInt(total));
    const [{ left }] = await h.query(`select count(*)::int as left from dispatch.operations`);
    expect(left).toBe(0);
    expect(await h.query(`select * from dispatch.sim_operation_counts`)).toEqual([]);
    expect(await totalsOf(s.simId)).toEqual({ operations: 0, confirmed: 0, failed: 0, no_evidence: 0 });
    expect((await h.client.getNextOperation({ caller: device(s.deviceId) })).dispatch).toBeUndefined();
  });
});
