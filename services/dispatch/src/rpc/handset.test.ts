import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { beforeAll, describe, expect, it } from "vitest";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import { OperationChangedSchema, OperationFailedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import {
  addHandset,
  device,
  eventsOf,
  eventually,
  queueOn,
  refusalOf,
  session,
  useDispatchHarness,
  type DispatchHarness,
} from "../../../../test/support/dispatch-harness.ts";
import { recordStatements } from "../../../../test/support/statements.ts";

let h: DispatchHarness;
const agent = randomUUID();
const admin = randomUUID();
const PIN = "8642";

useDispatchHarness(
  { DEVICE_COOLDOWN_S: "10", EVIDENCE_WINDOW_S: "600", USSD_TIMEOUT_S: "75" },
  (started) => (h = started),
);
beforeAll(() => {
  h.fleet.addAgent(agent, { full_name: "Ada Agent" });
  h.fleet.addAgent(admin, { role: "admin", full_name: "Root Admin" });
});

/** A handset of its own with one operator_b SIM granted to the agent. */
const handset = (o: { slot?: number; pin?: string } = {}) => addHandset(h, agent, { pin: PIN, ...o });
const queue = (simId: string, o: Parameters<typeof queueOn>[3] = {}) => queueOn(h, agent, simId, o);

const poll = (deviceId: string) => h.client.getNextOperation({ caller: device(deviceId) });
const report = (
  deviceId: string,
  operationId: string,
  outcome: string,
  o: { ussdResponse?: string; failureDetail?: string } = {},
) =>
  h.client.reportOutcome({
    caller: device(deviceId),
    operationId,
    outcome,
    executedAt: timestampFromDate(new Date()),
    ...o,
  });
const row = async (id: string) => (await h.query(`select * from dispatch.operations where operation_id = $1`, [id]))[0];

describe("poll: an idle device", () => {
  it("gets no payload (204) and the poll writes nothing: at most a plain read, no lock, no transaction", async () => {
    const busy = handset();
    await queue(busy.simId); // work exists, for another device
    const idle = handset();
    const recorded = recordStatements();
    let answers: unknown[];
    let concurrent: number;
    try {
      answers = await Promise.all(Array.from({ length: 30 }, () => poll(idle.deviceId)));
      concurrent = recorded.statements.length;
      for (let i = 0; i < 20; i += 1) answers.push(await poll(idle.deviceId));
    } finally {
      recorded.stop();
    }
    // The polls' statements: those that name the idle device. The service's own jobs (the
    // sweeps, the relay) run meanwhile and are recorded too; a sweep's read of the operations
    // counted here once made 31 of 30.
    const statements = recorded.statements.filter((_, i) => recorded.params[i].includes(idle.deviceId));
    const later = recorded.statements
      .slice(concurrent)
      .filter((_, i) => recorded.params[concurrent + i].includes(idle.deviceId));
    expect(answers.every((a) => (a as { dispatch?: unknown }).dispatch === undefined)).toBe(true);
    const onOperations = statements.filter((s) => s.includes("dispatch.operations"));
    expect(onOperations.length).toBeGreaterThanOrEqual(1);
    expect(onOperations.length).toBeLessThanOrEqual(30);
    for (const s of onOperations) {
      expect(s.trim().toLowerCase().startsWith("select")).toBe(true);
      expect(s.toLowerCase()).not.toMatch(/for update|insert|update dispatch|delete|pg_notify/);
    }
    // Once read idle, the device is answered from memory: no statement at all.
    expect(later.filter((s) => s.includes("dispatch."))).toEqual([]);
    expect(recorded.statements.filter((s) => /outbox/.test(s) && /insert/i.test(s))).toEqual([]);
  });

  it("after an outcome that leaves the device nothing to do, its next poll is answered idle with no statement", async () => {
    const d = handset();
    const id = await queue(d.simId);
    expect((await poll(d.deviceId)).dispatch?.operationId).toBe(id);
    await report(d.deviceId, id, "ussd_ok");
    const { statements, stop } = recordStatements();
    try {
      expect(await poll(d.deviceId)).toMatchObject({ idle: true });
    } finally {
      stop();
    }
    expect(statements.filter((q) => q.includes("dispatch."))).toEqual([]);

    // Work still queued for it after the outcome: not idle (its cooldown answers), then claimed.
    const busy = handset();
    const first = await queue(busy.simId);
    const second = await queue(busy.simId);
    expect((await poll(busy.deviceId)).dispatch?.operationId).toBe(first);
    await report(busy.deviceId, first, "ussd_ok");
    const next = await poll(busy.deviceId);
    expect(next.idle).toBe(false);
    expect(next.dispatch).toBeUndefined();
    // Work queued after the outcome reaches the idle device's next poll.
    const later = await queue(d.simId);
    const cooling = await poll(d.deviceId); // in its cooldown (10 s)
    expect([cooling.idle, cooling.dispatch]).toEqual([false, undefined]);
    expect(await h.query(`select status from dispatch.operations where operation_id = $1`, [later])).toEqual([
      { status: "queued" },
    ]);
    expect(second).not.toBe(first);
  });

  it("forgets an idle device the moment work is queued for it", async () => {
    const d = handset();
    expect((await poll(d.deviceId)).dispatch).toBeUndefined();
    expect((await poll(d.deviceId)).dispatch).toBeUndefined();
    const id = await queue(d.simId);
    expect((await poll(d.deviceId)).dispatch?.operationId).toBe(id);
  });

  it("forgets an idle device when another replica queues work for it (NOTIFY), and not before", async () => {
    const d = handset();
    expect((await poll(d.deviceId)).dispatch).toBeUndefined();
    // Another replica's insert: only the notification tells this one.
    const id = await queue(d.simId);
    await h.query(`update dispatch.operations set status = 'failed' where operation_id = $1`, [id]);
    expect((await poll(d.deviceId)).dispatch).toBeUndefined();
    const other = randomUUID();
    await h.query(
      `insert into dispatch.operations (operation_id, request_id, status, origin, op_type, agent_id, operator, montant, msisdn_dest, sim_id, device_id, subscription_slot)
       values ($1, $2, 'queued', 'aggregated', 'deposit', $3, 'operator_b', 5000, '690000001', $4, $5, 1)`,
      [other, randomUUID(), agent, d.simId, d.deviceId],
    );
    // Without its notification the device is still known idle here...
    expect((await poll(d.deviceId)).dispatch).toBeUndefined();
    // ...and the notification ends that.
    await h.query(`select pg_notify('dispatch_device_work', $1)`, [d.deviceId]);
    const claimed = await eventually(async () => (await poll(d.deviceId)).dispatch, 5000, "the notified work");
    expect(claimed.operationId).toBe(other);
  });
});

describe("poll: claiming", () => {
  it("hands the device its oldest queued operation, now running, with the contract's payload", async () => {
    const d = handset({ slot: 1 });
    const first = await queue(d.simId, { partnerVerified: false });
    const second = await queue(d.simId);
    const res = await poll(d.deviceId);
    expect(res.dispatch).toMatchObject({
      operationId: first,
      simId: d.simId,
      subscriptionSlot: 1,
      ussdSteps: ["#148*2#", "5000", "690000001", PIN],
      ussdString: `#148*2*5000*690000001*${PIN}#`,
      expectedSender: "OrangeMoney",
      timeoutSeconds: 75,
      montant: 5000n,
      opType: "deposit",
      partnerVerified: false,
      destName: "Jean Dupont",
      msisdnDest: "690000001",
      operator: "operator_b",
    });
    const claimed = await row(first);
    expect([claimed.status, claimed.started_at !== null, claimed.ussd_string]).toEqual([
      "running",
      true,
      "#148*2*5000*690000001*****#",
    ]);
    expect((await row(second)).status).toBe("queued");
  });

  it("answers 409 while the device already runs an operation", async () => {
    const d = handset();
    await queue(d.simId);
    await queue(d.simId);
    await poll(d.deviceId);
    const refused = await refusalOf(poll(d.deviceId));
    expect([refused.status, refused.code, refused.context.reason, refused.detail]).toEqual([
      409,
      "conflict",
      "device_busy",
      `Device ${d.deviceId} already has a running operation`,
    ]);
  });

  it("answers 409 while the device runs its only operation (nothing left queued)", async () => {
    const d = handset();
    await queue(d.simId);
    expect((await poll(d.deviceId)).dispatch).toBeDefined();
    const refused = await refusalOf(poll(d.deviceId));
    expect([refused.status, refused.context.reason]).toEqual([409, "device_busy"]);
  });

  it("never gives one device two running operations when many pollers race (one 200, the rest 409 or 204)", async () => {
    const d = handset();
    for (let i = 0; i < 5; i += 1) await queue(d.simId);
    const results = await Promise.allSettled(Array.from({ length: 16 }, () => poll(d.deviceId)));
    const claimed = results.filter((r) => r.status === "fulfilled" && r.value.dispatch !== undefined);
    expect(claimed).toHaveLength(1);
    for (const r of results) {
      if (r.status !== "rejected") continue;
      const refused = await refusalOf(Promise.reject(r.reason));
      expect([refused.code, refused.context.reason]).toEqual(["conflict", "device_busy"]);
    }
    const [{ running }] = await h.query(
      `select count(*)::int as running from dispatch.operations where device_id = $1 and status = 'running'`,
      [d.deviceId],
    );
    expect(running).toBe(1);
  });

  it("refuses a second running operation on one device in the database itself (partial unique index)", async () => {
    const d = handset();
    const a = await queue(d.simId);
    const b = await queue(d.simId);
    await h.query(`update dispatch.operations set status = 'running' where operation_id = $1`, [a]);
    await expect(
      h.query(`update dispatch.operations set status = 'running' where operation_id = $1`, [b]),
    ).rejects.toThrow(/operations_one_running_per_device/);
  });

  it("answers 204 inside the cooldown after a finished operation, then claims once it is over", async () => {
    const d = handset();
    const first = await queue(d.simId);
    const second = await queue(d.simId);
    await poll(d.deviceId);
    await report(d.deviceId, first, "ussd_ok");
    expect((await poll(d.deviceId)).dispatch).toBeUndefined();
    h.clock.offsetMs += 10_001;
    try {
      expect((await poll(d.deviceId)).dispatch?.operationId).toBe(second);
    } finally {
      h.clock.offsetMs -= 10_001;
    }
  });

  it("answers 500 when the steps cannot be built, fails that operation, and moves on at the next poll", async () => {
    const d = handset();
    const broken = await queue(d.simId, { typeOp: "withdrawal", merchantCode: "M-1/2" });
    const fine = await queue(d.simId);
    const refused = await refusalOf(poll(d.deviceId));
    expect(refused.status).toBe(500);
    expect(await row(broken)).toMatchObject({
      status: "failed",
      failure_reason: "ussd_steps_unavailable",
      started_at: null,
    });
    expect((await poll(d.deviceId)).dispatch?.operationId).toBe(fine);
  });

  it("answers 500 when fleet no longer has the SIM's PIN", async () => {
    const d = handset();
    const id = await queue(d.simId);
    h.fleet.sims.delete(d.simId);
    expect((await refusalOf(poll(d.deviceId))).status).toBe(500);
    expect((await row(id)).status).toBe("failed");
  });

  it("keeps the PIN out of the database, the events and the logs", async () => {
    // Eight digits (the longest PIN): a shorter one can turn up by chance in random ids,
    // numbers and names of other tests' events and make this test fail without a leak.
    const secret = "97531864";
    const d = handset({ pin: secret });
    const id = await queue(d.simId);
    const res = await poll(d.deviceId);
    expect(res.dispatch?.ussdSteps.at(-1)).toBe(secret);
    await report(d.deviceId, id, "ussd_ok");
    await eventually(
      () => (eventsOf(h, "OperationChanged", id).length >= 3 ? true : undefined),
      5000,
      "the claim and outcome events",
    );
    const stored = JSON.stringify(await h.query(`select * from dispatch.operations where operation_id = $1`, [id]));
    expect(stored).not.toContain(secret);
    for (const e of h.events) expect(Buffer.from(e.value).includes(secret)).toBe(false);
    const outbox = await h.query(`select payload from dispatch.outbox`);
    for (const o of outbox) expect(Buffer.from(o.payload).includes(secret)).toBe(false);
    expect(h.logs.join("\n")).not.toContain(secret);
    expect(h.fleet.revealed).toContain(d.simId);
  });
});

describe("poll: work queued on a handset the SIM has left (a create that raced a move or an unassignment)", () => {
  it("reveals no PIN to the old handset and moves the work to the SIM's new one", async () => {
    const old = handset();
    const id = await queue(old.simId);
    const newDevice = `dev-${randomUUID().slice(0, 8)}`;
    // Fleet moved the SIM; dispatch has not consumed the event yet.
    Object.assign(h.fleet.sims.get(old.simId)!, { device_id: newDevice, subscription_slot: 0 });
    const revealedBefore = h.fleet.revealed.length;
    expect((await poll(old.deviceId)).dispatch).toBeUndefined();
    expect(h.fleet.revealed.length).toBe(revealedBefore);
    expect((await row(id)).device_id).toBe(newDevice);
    const res = await poll(newDevice);
    expect([res.dispatch?.operationId, res.dispatch?.ussdSteps.at(-1), res.dispatch?.subscriptionSlot]).toEqual([
      id,
      PIN,
      0,
    ]);
  });

  it("holds the work of an unassigned SIM off every handset, and the old handset goes on to its other work", async () => {
    const old = handset();
    const stranded = await queue(old.simId);
    const other = randomUUID();
    h.fleet.addSim({ sim_id: other, operator: "operator_b", device_id: old.deviceId, subscription_slot: 0 }, PIN);
    h.fleet.grant(agent, {
      allowed_sim_ids: [...(h.fleet.grants.get(agent)?.allowed_sim_ids ?? []), other],
      allowed_op_types: ["deposit", "balance", "withdrawal"],
    });
    const next = await queue(other);
    Object.assign(h.fleet.sims.get(old.simId)!, { device_id: null, subscription_slot: null });
    expect((await poll(old.deviceId)).dispatch?.operationId).toBe(next);
    expect([(await row(stranded)).device_id, (await row(stranded)).status]).toEqual([null, "queued"]);
  });
});

describe("transitions write their events in the statement that writes the row", () => {
  it("publishes, for the claim and for the outcome, the operation exactly as stored after each", async () => {
    const d = handset();
    const id = await queue(d.simId);
    const read = async () =>
      (await h.client.getOperation({ caller: session(admin, "admin"), operationId: id })).operation;
    const changes = () => eventsOf(h, "OperationChanged", id).map((e) => fromBinary(OperationChangedSchema, e.value));
    expect((await poll(d.deviceId)).dispatch?.operationId).toBe(id);
    const afterClaim = await read();
    const claimEvent = await eventually(() => changes().find((e) => e.trigger === "claim"), 5000, "the claim event");
    expect(claimEvent.operation).toEqual(afterClaim);
    await report(d.deviceId, id, "ussd_ok", { ussdResponse: "Depot effectue" });
    const afterOutcome = await read();
    const outcomeEvent = await eventually(
      () => changes().find((e) => e.trigger === "outcome"),
      5000,
      "the outcome event",
    );
    expect(outcomeEvent.operation).toEqual(afterOutcome);
    expect([afterClaim?.status, afterOutcome?.status]).toEqual(["running", "awaiting_evidence"]);
  });
});

describe("claim and outcome: their statements", () => {
  /** The statements of a flow inside its transaction (not the relay's, nor a plain read's). */
  const flowStatements = (r: { statements: string[]; inTransaction: boolean[] }) =>
    r.statements.filter((q, i) => r.inTransaction[i] && /dispatch\.operations|insert into "dispatch"\.outbox/.test(q));

  it("claims in two statements: the state read with the lock of the next row, then the update with its outbox rows", async () => {
    const d = handset();
    const id = await queue(d.simId);
    const recorded = recordStatements();
    try {
      expect((await poll(d.deviceId)).dispatch?.operationId).toBe(id);
    } finally {
      recorded.stop();
    }
    const claim = flowStatements(recorded);
    expect(claim).toHaveLength(2);
    expect(claim[0]).toMatch(/^\s*with next as \(/);
    expect(claim[1]).toMatch(/^\s*with changed as \(update dispatch\.operations/);
    expect(claim[1]).toMatch(/insert into "dispatch"\.outbox/);
  });

  it("records an outcome in two statements: the lock with the device's other work, then the update with its outbox rows", async () => {
    const d = handset();
    const id = await queue(d.simId);
    expect((await poll(d.deviceId)).dispatch?.operationId).toBe(id);
    const recorded = recordStatements();
    try {
      expect((await report(d.deviceId, id, "ussd_ok")).status).toBe("awaiting_evidence");
    } finally {
      recorded.stop();
    }
    const outcome = flowStatements(recorded);
    expect(outcome).toHaveLength(2);
    expect(outcome[0]).toMatch(/for update of o/);
    expect(outcome[0]).toMatch(/as device_has_queued/);
    expect(outcome[1]).toMatch(/^\s*with changed as \(update dispatch\.operations/);
    expect(outcome[1]).toMatch(/insert into "dispatch"\.outbox/);
    // The device was left with nothing: its next poll is answered from memory.
    expect(await poll(d.deviceId)).toMatchObject({ idle: true });
  });

  it("still tells a device with other work queued that it is not idle after its outcome", async () => {
    const d = handset();
    const first = await queue(d.simId);
    await queue(d.simId);
    expect((await poll(d.deviceId)).dispatch?.operationId).toBe(first);
    await report(d.deviceId, first, "ussd_ok");
    // In its cooldown (10 s): answered neither idle nor with work, by a read.
    const next = await poll(d.deviceId);
    expect([next.idle, next.dispatch]).toEqual([false, undefined]);
  });
});

describe("outcome report: every outcome of the contract", () => {
  it.each<[string, { ussdResponse?: string; failureDetail?: string }, string, string | null, boolean]>([
    ["ussd_ok", { ussdResponse: "Depot reussi" }, "awaiting_evidence", "ussd_ok", true],
    ["ussd_unconfirmed", {}, "awaiting_evidence", "ussd_unconfirmed", true],
    ["ussd_failed", { failureDetail: "Solde insuffisant" }, "failed", "Solde insuffisant", false],
    ["ussd_failed", {}, "failed", "ussd_failed", false],
    ["sim_absent", {}, "failed", "sim_absent", false],
    [
      "name_mismatch",
      { ussdResponse: "Depot de 5000 FCFA a PAUL BIYA (690000001)." },
      "failed",
      "Depot de 5000 FCFA a PAUL BIYA (690000001).",
      false,
    ],
    [
      "name_mismatch",
      { ussdResponse: "X", failureDetail: "screen showed PAUL" },
      "failed",
      "screen showed PAUL",
      false,
    ],
    ["ussd_timeout", {}, "no_evidence", "ussd_timeout", false],
    ["no_service", {}, "no_evidence", "no_service", false],
  ])("%s with %j: %s, failure_reason %s", async (outcome, extra, status, failureReason, awaits) => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    const before = Date.now();
    const res = await report(d.deviceId, id, outcome, extra);
    expect([res.operationId, res.status]).toEqual([id, status]);
    const stored = await row(id);
    expect([stored.status, stored.failure_reason, stored.device_outcome, stored.finished_at !== null]).toEqual([
      status,
      failureReason,
      outcome,
      true,
    ]);
    if (awaits) {
      const expires = Number(res.evidenceExpiresAt!.seconds) * 1000;
      expect(expires).toBeGreaterThanOrEqual(before + 600_000 - 1000);
      expect(expires).toBeLessThanOrEqual(Date.now() + 600_000);
    } else {
      expect(res.evidenceExpiresAt).toBeUndefined();
    }
    // The device slot is free again.
    const [{ running }] = await h.query(
      `select count(*)::int as running from dispatch.operations where device_id = $1 and status = 'running'`,
      [d.deviceId],
    );
    expect(running).toBe(0);
  });

  it("publishes operation.failed with the outcome as reason, and an alert for an absent SIM", async () => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    await report(d.deviceId, id, "sim_absent");
    const failed = await eventually(() => eventsOf(h, "OperationFailed", id)[0], 5000, "operation.failed");
    expect(fromBinary(OperationFailedSchema, failed.value).reason).toBe("sim_absent");
    const alert = await eventually(
      () => h.events.find((e) => e.topic === "alerts" && fromBinary(AlertRaisedSchema, e.value).operationId === id),
      5000,
      "the alert",
    );
    expect(fromBinary(AlertRaisedSchema, alert.value)).toMatchObject({
      kind: "sim_absent",
      simId: d.simId,
      deviceId: d.deviceId,
      severity: "critical",
    });
  });

  it("is idempotent: the same outcome again answers 200 with the current status; another outcome is 409", async () => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    const first = await report(d.deviceId, id, "ussd_ok");
    const again = await report(d.deviceId, id, "ussd_ok");
    expect([again.status, again.evidenceExpiresAt]).toEqual([first.status, first.evidenceExpiresAt]);
    const other = await refusalOf(report(d.deviceId, id, "ussd_failed"));
    expect([other.status, other.code, other.context.reason]).toEqual([409, "conflict", "outcome_conflict"]);
  });

  it("answers 404 for another device's operation and 409 for one not yet claimed", async () => {
    const d = handset();
    const e = handset();
    const id = await queue(d.simId);
    expect((await refusalOf(report(e.deviceId, id, "ussd_ok"))).status).toBe(404);
    expect((await refusalOf(report(d.deviceId, randomUUID(), "ussd_ok"))).status).toBe(404);
    const notRunning = await refusalOf(report(d.deviceId, id, "ussd_ok"));
    expect([notRunning.status, notRunning.code, notRunning.context.reason]).toEqual([
      409,
      "conflict",
      "operation_not_running",
    ]);
  });

  it("refuses an outcome outside the contract's list with 422", async () => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    expect((await refusalOf(report(d.deviceId, id, "maybe"))).status).toBe(422);
  });

  it("records the outcome of an operation cancelled mid-dial without moving it (200, still rejected)", async () => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    await h.client.cancelOperation({ caller: session(agent, "agent", "Ada Agent"), operationId: id });
    const res = await report(d.deviceId, id, "ussd_ok", { ussdResponse: "Depot reussi" });
    expect(res.status).toBe("rejected");
    expect(await row(id)).toMatchObject({
      status: "rejected",
      device_outcome: "ussd_ok",
      ussd_response: "Depot reussi",
    });
  });
});

describe("cancel", () => {
  it("rejects a running operation: slot released, finished_at, reject_reason, operation.failed cancelled_by_agent", async () => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    const res = await h.client.cancelOperation({ caller: session(agent, "agent", "Ada Agent"), operationId: id });
    expect(res.operation).toMatchObject({
      status: "rejected",
      rejectReason: "Cancelled by Ada Agent.",
      retryAllowed: true,
    });
    expect(res.operation?.finishedAt).toBeDefined();
    const failed = await eventually(() => eventsOf(h, "OperationFailed", id)[0], 5000, "operation.failed");
    expect(fromBinary(OperationFailedSchema, failed.value)).toMatchObject({ reason: "cancelled_by_agent" });
  });

  it("answers 409 operation_not_cancellable with the operation's id and status once it is terminal", async () => {
    const d = handset();
    const id = await queue(d.simId);
    await poll(d.deviceId);
    await report(d.deviceId, id, "ussd_failed");
    const refused = await refusalOf(h.client.cancelOperation({ caller: session(agent), operationId: id }));
    expect(refused).toEqual({
      status: 409,
      code: "operation_not_cancellable",
      detail: `Operation ${id} is failed and cannot be cancelled`,
      context: { reason: "operation_not_cancellable", operation_id: id, operation_status: "failed" },
    });
  });

  it("lets only the owner or an admin cancel (403), and 404 for an unknown id", async () => {
    const d = handset();
    const id = await queue(d.simId);
    const stranger = await refusalOf(h.client.cancelOperation({ caller: session(randomUUID()), operationId: id }));
    expect([stranger.status, stranger.code, stranger.context.reason]).toEqual([403, "not_allowed", "not_in_scope"]);
    expect(
      (await refusalOf(h.client.cancelOperation({ caller: session(agent), operationId: randomUUID() }))).status,
    ).toBe(404);
    const byAdmin = await h.client.cancelOperation({ caller: session(admin, "admin", "Root Admin"), operationId: id });
    expect(byAdmin.operation?.rejectReason).toBe("Cancelled by Root Admin.");
  });

  it("racing a poll, leaves one consistent winner every time", async () => {
    const d = handset();
    for (let round = 0; round < 12; round += 1) {
      const id = await queue(d.simId);
      h.clock.offsetMs += 60_000; // past any cooldown of the previous round
      const [polled, cancelled] = await Promise.allSettled([
        poll(d.deviceId),
        h.client.cancelOperation({ caller: session(agent), operationId: id }),
      ]);
      expect(cancelled.status).toBe("fulfilled");
      const stored = await row(id);
      expect(stored.status).toBe("rejected");
      const claimed = polled.status === "fulfilled" && polled.value.dispatch?.operationId === id;
      // Claimed first: it was running when cancelled. Cancelled first: no handset ever saw it.
      expect(stored.started_at !== null).toBe(claimed);
      if (polled.status === "fulfilled" && !claimed) expect(polled.value.dispatch).toBeUndefined();
      const [{ running }] = await h.query(
        `select count(*)::int as running from dispatch.operations where device_id = $1 and status = 'running'`,
        [d.deviceId],
      );
      expect(running).toBe(0);
    }
  });
});

describe("operations claimed by the device", () => {
  it("lists only claimed operations of the calling device, most recently changed first, with since and limit", async () => {
    const d = handset();
    const other = handset();
    const first = await queue(d.simId);
    await poll(d.deviceId);
    await report(d.deviceId, first, "ussd_ok");
    h.clock.offsetMs += 20_000;
    const second = await queue(d.simId);
    const unclaimed = await queue(d.simId);
    await poll(d.deviceId);
    await queue(other.simId);
    const all = await h.client.listDeviceOperations({ caller: device(d.deviceId) });
    expect(all.operations.map((o) => o.operationId)).toEqual([second, first]);
    expect(all.operations.map((o) => o.operationId)).not.toContain(unclaimed);
    expect(all.operations[1]).toMatchObject({
      status: "awaiting_evidence",
      simSlot: 1,
      simId: d.simId,
      operator: "operator_b",
    });
    expect(all.operations[1].evidenceExpiresAt).toBeDefined();
    const limited = await h.client.listDeviceOperations({ caller: device(d.deviceId), limit: 1 });
    expect(limited.operations.map((o) => o.operationId)).toEqual([second]);
    const future = await h.client.listDeviceOperations({
      caller: device(d.deviceId),
      since: timestampFromDate(new Date(Date.now() + 3600_000)),
    });
    expect(future.operations).toEqual([]);
  });
});
