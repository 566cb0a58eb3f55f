import { randomUUID } from "node:crypto";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import type { WatchDeviceWorkResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  addHandset,
  device,
  eventually,
  queueOn,
  session,
  startDispatchHarness,
  type DispatchHarness,
} from "../../../test/support/dispatch-harness.ts";
import { IdlePolls } from "./idle-polls.ts";

// The gateway's mirror of dispatch's idle handsets, against a real dispatch (gRPC, PostgreSQL,
// LISTEN/NOTIFY): what it remembers, what makes it forget, and what happens when the watch ends.

let h: DispatchHarness;
let polls: IdlePolls;
const agent = randomUUID();
const admin = randomUUID();
const log = createLogger("gateway", { level: "silent" });

beforeAll(async () => {
  h = await startDispatchHarness({ DEVICE_COOLDOWN_S: "10" });
  h.fleet.addAgent(agent, { full_name: "Ada Agent" });
  h.fleet.addAgent(admin, { role: "admin", full_name: "Root Admin" });
  polls = new IdlePolls({ ttlMs: 60_000, log, retryMs: 100 });
  polls.start(h.client);
  await eventually(async () => polls.live || undefined, 10_000, "the watch of dispatch's work");
});
afterAll(async () => {
  polls?.stop();
  await h?.stop();
});

const handset = () => addHandset(h, agent);
const queue = (simId: string) => queueOn(h, agent, simId);

/** The gateway's poll: counts the calls that reached dispatch. */
function poller(deviceId: string) {
  const counter = { asked: 0 };
  const poll = () =>
    polls.poll(deviceId, () => {
      counter.asked += 1;
      return h.client.getNextOperation({ caller: device(deviceId) });
    });
  return { poll, counter };
}

describe("dispatch's answer to a poll", () => {
  it("says idle only when the device has nothing queued and nothing running", async () => {
    const d = handset();
    const ask = () => h.client.getNextOperation({ caller: device(d.deviceId) });
    expect(await ask()).toMatchObject({ idle: true });
    // Known idle inside dispatch too: still idle.
    expect(await ask()).toMatchObject({ idle: true });
    const first = await queue(d.simId);
    const claimed = await ask();
    expect([claimed.dispatch?.operationId, claimed.idle]).toEqual([first, false]);
    await h.client.reportOutcome({
      caller: device(d.deviceId),
      operationId: first,
      outcome: "ussd_failed",
      executedAt: timestampFromDate(new Date()),
    });
    await queue(d.simId);
    // Queued work inside the cooldown: nothing handed out, and not idle either.
    const cooling = await ask();
    expect([cooling.dispatch, cooling.idle]).toEqual([undefined, false]);
  });
});

describe("WatchDeviceWork", () => {
  it("starts with ready, then names every device given work: here, by another replica (NOTIFY), and a reset", async () => {
    const abort = new AbortController();
    const messages: WatchDeviceWorkResponse[] = [];
    const watching = (async () => {
      try {
        for await (const m of h.client.watchDeviceWork({}, { signal: abort.signal, timeoutMs: 60_000 })) {
          messages.push(m);
        }
      } catch {
        // aborted at the end
      }
    })();
    await eventually(async () => messages[0], 5000, "the first message");
    expect(messages[0]).toMatchObject({ ready: true, deviceIds: [], forgetAll: false });

    const here = handset();
    await queue(here.simId);
    const other = `dev-${randomUUID().slice(0, 8)}`;
    await h.query(`select pg_notify('dispatch_device_work', $1)`, [other]);
    const named = () => new Set(messages.flatMap((m) => m.deviceIds));
    await eventually(async () => (named().has(here.deviceId) && named().has(other)) || undefined, 5000, "both");

    await h.client.resetOperations({ caller: session(admin, "admin", "Root Admin") });
    await eventually(async () => messages.find((m) => m.forgetAll), 5000, "the reset");
    abort.abort();
    await watching;
  });
});

describe("the gateway's idle polls", () => {
  it("answers a known-idle device without asking dispatch, and asks again once work is queued for it", async () => {
    const d = handset();
    const { poll, counter } = poller(d.deviceId);
    expect((await poll())?.dispatch).toBeUndefined();
    expect(counter.asked).toBe(1);
    for (let i = 0; i < 20; i += 1) expect(await poll()).toBeUndefined();
    expect(counter.asked).toBe(1);

    const id = await queue(d.simId);
    const claimed = await eventually(async () => (await poll())?.dispatch, 5000, "the queued work");
    expect(claimed.operationId).toBe(id);
  });

  it("remembers a device its outcome report left with nothing to do, so the next poll asks dispatch nothing; not one with work still queued", async () => {
    const report = (deviceId: string, operationId: string) =>
      polls.outcome(deviceId, (onHeader) =>
        h.client.reportOutcome(
          { caller: device(deviceId), operationId, outcome: "ussd_ok", executedAt: timestampFromDate(new Date()) },
          { onHeader },
        ),
      );
    const alone = handset();
    const only = await queue(alone.simId);
    const a = poller(alone.deviceId);
    expect((await a.poll())?.dispatch?.operationId).toBe(only);
    expect((await report(alone.deviceId, only)).status).toBe("awaiting_evidence");
    expect(await a.poll()).toBeUndefined();
    expect(a.counter.asked).toBe(1);

    const busy = handset();
    const first = await queue(busy.simId);
    await queue(busy.simId);
    const b = poller(busy.deviceId);
    expect((await b.poll())?.dispatch?.operationId).toBe(first);
    await report(busy.deviceId, first);
    await b.poll(); // inside the cooldown: dispatch is asked, and says it is not idle
    expect(b.counter.asked).toBe(2);
    expect(polls.isIdle(busy.deviceId)).toBe(false);
  });

  it("forgets a device when another replica queues work for it (its NOTIFY), and not before", async () => {
    const d = handset();
    const { poll, counter } = poller(d.deviceId);
    await poll();
    const id = randomUUID();
    // Another replica's insert: only its notification tells anyone.
    await h.query(
      `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant, msisdn_dest, sim_id, device_id, subscription_slot)
       values ($1, $2, 'queued', 'aggregated', 'deposit', $3, 'operator_b', 5000, '690000001', $4, $5, 1)`,
      [id, randomUUID(), agent, d.simId, d.deviceId],
    );
    expect(await poll()).toBeUndefined();
    expect(counter.asked).toBe(1);
    await h.query(`select pg_notify('dispatch_device_work', $1)`, [d.deviceId]);
    const claimed = await eventually(async () => (await poll())?.dispatch, 5000, "the notified work");
    expect(claimed.operationId).toBe(id);
  });

  it("does not remember an answer when work was announced while it was in flight", async () => {
    const d = handset();
    const mark = polls.mark();
    polls.forget(`dev-${randomUUID().slice(0, 8)}`);
    polls.remember(d.deviceId, mark);
    expect(polls.isIdle(d.deviceId)).toBe(false);
    polls.remember(d.deviceId, polls.mark());
    expect(polls.isIdle(d.deviceId)).toBe(true);
  });

  it("forgets a device after its time to live, whatever was announced", async () => {
    const d = handset();
    polls.remember(d.deviceId, polls.mark(), Date.now() - 61_000);
    expect(polls.isIdle(d.deviceId)).toBe(false);
  });

  // Last: it stops dispatch.
  it("forgets everything, and asks dispatch on every poll, once the watch ends", async () => {
    const d = handset();
    const { poll } = poller(d.deviceId);
    await poll();
    expect(polls.isIdle(d.deviceId)).toBe(true);
    await h.service.stop();
    await eventually(async () => !polls.live || undefined, 10_000, "the end of the watch");
    expect(polls.isIdle(d.deviceId)).toBe(false);
    expect(polls.size).toBe(0);
    // Nothing is remembered while the watch is down.
    polls.remember(d.deviceId, polls.mark());
    expect(polls.isIdle(d.deviceId)).toBe(false);
  });
});
