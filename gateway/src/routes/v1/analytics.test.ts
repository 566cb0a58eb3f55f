import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventWorld } from "../../../../test/support/analytics-world.ts";
import { dumpErrors } from "../../../../test/support/fleet-fixtures.ts";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";

// A fixed world (March 2026, local time UTC+1) whose every figure is computed by hand in
// the comments; events are published on the topics as dispatch, evidence, fleet and intake
// publish them, and read back through the gateway.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let awa: { token: string; agentId: string };
let bruno: { token: string; agentId: string };
let sup: { token: string; agentId: string };
let world: EventWorld;

const id = (n: number) => `00000000-0000-4000-8000-${n.toString().padStart(12, "0")}`;
const [S1, S2, S3, S4] = [id(901), id(902), id(903), id(904)];
const [D1, D2] = ["d1d1d1d1d1d1d1d1", "d2d2d2d2d2d2d2d2"];
const W = "from=2026-03-02&to=2026-03-04";
const hoursSince = (iso: string) => (Date.now() - Date.parse(iso)) / 3600_000;

function buildWorld(): EventWorld {
  const w = new EventWorld();
  const A = { agentId: awa.agentId, simId: S1, deviceId: D1, deviceLabel: "Handset One" };
  const B = { agentId: bruno.agentId, simId: S2, deviceId: D2, deviceLabel: "Handset Two" };
  const op = (n: number, who: typeof A, opType: string, montant: number, createdAt: string) => {
    const o = { id: id(n), opType, montant, createdAt, ...who };
    w.operation(o, { status: "queued", trigger: "create", at: createdAt });
    return o;
  };
  // O1 Mon 09:30 local, proven 30 s after its message arrived, fee 100.
  const o1 = op(1, A, "deposit", 10000, "2026-03-02T08:30:00Z");
  w.operation(o1, {
    status: "confirmed",
    previous: "awaiting_evidence",
    trigger: "proof",
    at: "2026-03-02T08:31:30Z",
    finishedAt: "2026-03-02T08:30:40Z",
    evidence: { receivedAt: "2026-03-02T08:31:00Z", fee: 100 },
  });
  // O2 created 23:30 UTC on the 2nd = Tue 00:30 local; proven 90 s after arrival; fee unreadable.
  const o2 = op(2, A, "deposit", 30000, "2026-03-02T23:30:00Z");
  w.operation(o2, {
    status: "confirmed",
    previous: "awaiting_evidence",
    trigger: "proof",
    at: "2026-03-02T23:41:30Z",
    finishedAt: "2026-03-02T23:31:00Z",
    evidence: { receivedAt: "2026-03-02T23:40:00Z" },
  });
  // O3 Tue 11:00: dialled, swept to no_evidence, settled by hand as arrived.
  const o3 = op(3, B, "withdrawal", 20000, "2026-03-03T10:00:00Z");
  const f3 = "2026-03-03T10:01:00Z";
  w.operation(o3, { status: "awaiting_evidence", previous: "running", trigger: "outcome", at: f3, finishedAt: f3 });
  w.operation(o3, {
    status: "no_evidence",
    previous: "awaiting_evidence",
    trigger: "sweep",
    at: "2026-03-03T10:12:00Z",
    finishedAt: f3,
  });
  w.operation(o3, {
    status: "confirmed",
    previous: "no_evidence",
    trigger: "settle",
    decision: "arrived",
    at: "2026-03-03T15:00:00Z",
    finishedAt: f3,
  });
  // O4 Tue 12:00: timed out, still in no_evidence (at risk, waiting).
  const o4 = op(4, B, "deposit", 50000, "2026-03-03T11:00:00Z");
  w.operation(o4, {
    status: "no_evidence",
    previous: "running",
    trigger: "outcome",
    outcome: "ussd_timeout",
    at: "2026-03-03T11:01:00Z",
    finishedAt: "2026-03-03T11:01:00Z",
  });
  // O5 Wed 10:00: no_evidence, then a person attached message M5 (fee 200): confirmed, not automatic.
  const o5 = op(5, A, "deposit", 40000, "2026-03-04T09:00:00Z");
  const f5 = "2026-03-04T09:02:00Z";
  w.operation(o5, { status: "awaiting_evidence", previous: "running", trigger: "outcome", at: f5, finishedAt: f5 });
  w.operation(o5, {
    status: "no_evidence",
    previous: "awaiting_evidence",
    trigger: "sweep",
    at: "2026-03-04T09:13:00Z",
    finishedAt: f5,
  });
  w.operation(o5, {
    status: "confirmed",
    previous: "no_evidence",
    trigger: "attach",
    at: "2026-03-04T10:00:00Z",
    finishedAt: f5,
    evidence: { receivedAt: "2026-03-04T09:30:00Z", fee: 200 },
  });
  // O6 Wed 11:00: the operator refused it (ussd_failed): lost.
  const o6 = op(6, A, "deposit", 15000, "2026-03-04T10:00:00Z");
  w.operation(o6, {
    status: "failed",
    previous: "running",
    trigger: "outcome",
    outcome: "ussd_failed",
    at: "2026-03-04T10:01:00Z",
    finishedAt: "2026-03-04T10:01:00Z",
  });
  // O7 Wed 13:00: a balance check proven 10 s after its message.
  const o7 = op(7, B, "balance", 1, "2026-03-04T12:00:00Z");
  w.operation(o7, {
    status: "confirmed",
    previous: "running",
    trigger: "proof",
    at: "2026-03-04T12:00:20Z",
    evidence: { receivedAt: "2026-03-04T12:00:10Z" },
  });
  // O8 Mon 10:00: no_evidence, arbitrated failed: lost, settled by hand.
  const o8 = op(8, B, "deposit", 60000, "2026-03-02T09:00:00Z");
  w.operation(o8, {
    status: "no_evidence",
    previous: "running",
    trigger: "outcome",
    outcome: "ussd_timeout",
    at: "2026-03-02T09:01:00Z",
    finishedAt: "2026-03-02T09:01:00Z",
  });
  w.operation(o8, {
    status: "failed",
    previous: "no_evidence",
    trigger: "arbitrate",
    decision: "failed",
    at: "2026-03-02T18:00:00Z",
    finishedAt: "2026-03-02T09:01:00Z",
  });
  // O9 created 23:00 UTC on the 1st = Mon 00:00 local exactly: in the window; cancelled.
  const o9 = op(9, A, "balance", 1, "2026-03-01T23:00:00Z");
  w.operation(o9, { status: "rejected", previous: "queued", trigger: "cancel", at: "2026-03-01T23:05:00Z" });
  // O10 Wed 15:00: dialled, still awaiting evidence.
  const o10 = op(10, B, "deposit", 5000, "2026-03-04T14:00:00Z");
  w.operation(o10, {
    status: "awaiting_evidence",
    previous: "running",
    trigger: "outcome",
    at: "2026-03-04T14:01:00Z",
    finishedAt: "2026-03-04T14:01:00Z",
  });
  // O12 Tue 17:00: no_evidence, settled by hand as arrived, then its message (M10, fee 80)
  // attached: the status stays confirmed; it is not unproven any more on its handset.
  const o12 = op(12, B, "deposit", 8000, "2026-03-03T16:00:00Z");
  const f12 = "2026-03-03T16:01:00Z";
  w.operation(o12, {
    status: "no_evidence",
    previous: "running",
    trigger: "outcome",
    outcome: "ussd_timeout",
    at: f12,
    finishedAt: f12,
  });
  w.operation(o12, {
    status: "confirmed",
    previous: "no_evidence",
    trigger: "settle",
    decision: "arrived",
    at: "2026-03-03T17:00:00Z",
    finishedAt: f12,
  });
  w.operation(o12, {
    status: "confirmed",
    previous: "confirmed",
    trigger: "attach",
    at: "2026-03-03T18:00:00Z",
    finishedAt: f12,
    evidence: { receivedAt: "2026-03-03T17:30:00Z", fee: 80 },
  });
  // O11 Thu 01:30 local: after the window.
  op(11, A, "deposit", 7000, "2026-03-05T00:30:00Z");
  // The previous window (Feb 27 – Mar 1): P1 Sat 11:00, P2 Sun 23:59 local, both proven.
  const p1 = op(21, A, "deposit", 25000, "2026-02-28T10:00:00Z");
  w.operation(p1, {
    status: "confirmed",
    previous: "awaiting_evidence",
    trigger: "proof",
    at: "2026-02-28T10:05:00.250Z",
    evidence: { receivedAt: "2026-02-28T10:04:00Z" },
  });
  const p2 = op(22, B, "deposit", 35000, "2026-03-01T22:59:00Z");
  w.operation(p2, {
    status: "confirmed",
    previous: "awaiting_evidence",
    trigger: "proof",
    at: "2026-03-01T23:10:00Z",
    evidence: { receivedAt: "2026-03-01T23:09:00Z" },
  });

  w.message({
    id: id(101),
    simId: S1,
    receivedAt: "2026-03-02T08:31:00Z",
    kind: "DEP",
    outcome: "confirmed",
    operationId: o1.id,
  });
  w.message({
    id: id(102),
    simId: S1,
    receivedAt: "2026-03-02T23:40:00Z",
    kind: "DEP",
    outcome: "confirmed",
    operationId: o2.id,
  });
  w.message({
    id: id(103),
    simId: S2,
    receivedAt: "2026-03-03T12:00:00Z",
    kind: "DEP",
    outcome: "ambiguous",
    ambiguous: true,
  });
  w.message({ id: id(104), simId: S2, receivedAt: "2026-03-04T08:00:00Z", kind: "DEP", outcome: "orphan" });
  w.message({ id: id(105), simId: S1, receivedAt: "2026-03-04T09:30:00Z", kind: "DEP", outcome: "orphan" });
  w.attach({
    id: id(105),
    simId: S1,
    receivedAt: "2026-03-04T09:30:00Z",
    operationId: o5.id,
    at: "2026-03-04T10:00:00Z",
  });
  w.message({
    id: id(106),
    simId: S2,
    receivedAt: "2026-03-04T12:00:10Z",
    kind: "BAL",
    outcome: "confirmed",
    operationId: o7.id,
  });
  w.message({ id: id(107), simId: S1, receivedAt: "2026-03-02T15:00:00Z", kind: "FAIL", outcome: "orphan" });
  w.dismiss({ id: id(107), simId: S1, at: "2026-03-02T16:00:00Z" });
  w.message({ id: id(108), simId: S1, receivedAt: "2026-02-20T10:00:00Z", kind: "DEP", outcome: "orphan" });
  w.message({ id: id(110), simId: S2, receivedAt: "2026-03-03T17:30:00Z", kind: "DEP", outcome: "orphan" });
  w.attach({
    id: id(110),
    simId: S2,
    receivedAt: "2026-03-03T17:30:00Z",
    operationId: id(12),
    at: "2026-03-03T18:00:00Z",
  });
  w.message({ id: id(109), simId: S2, receivedAt: "2026-03-03T13:00:00Z", kind: "MKT", outcome: "stored" });

  w.sim({
    id: S1,
    status: "active",
    deviceId: D1,
    balance: 500000,
    balanceAt: new Date(Date.now() - 3600_000).toISOString(),
  });
  w.sim({ id: S2, status: "active", deviceId: D2, balance: 200000, balanceAt: "2026-03-01T00:00:00Z" });
  w.sim({ id: S3, status: "frozen" });
  w.sim({ id: S4, status: "retired" });
  w.device(D1, "Handset One").device(D2, "Handset Two");

  w.transaction({
    id: id(200),
    state: "done",
    xaf: 13100,
    eur: 20,
    launchedBy: awa.agentId,
    date: "2026-02-28T09:00:00Z",
  });
  w.transaction({
    id: id(201),
    state: "done",
    xaf: 656000,
    eur: 1000,
    launchedBy: awa.agentId,
    date: "2026-03-02T10:00:00Z",
  });
  w.transaction({
    id: id(202),
    state: "launched",
    xaf: 65500,
    eur: 100,
    launchedBy: bruno.agentId,
    date: "2026-03-03T10:00:00Z",
  });
  w.transaction({ id: id(203), state: "cancelled", xaf: 100000, eur: 152, date: "2026-03-04T10:00:00Z" });
  w.transaction({ id: id(204), state: "pending", xaf: 32800, date: "2026-03-04T11:00:00Z" });
  return w;
}

const zeroDay = (day: string) => ({
  day,
  operations: 0,
  transfers: 0,
  balance_checks: 0,
  value_xaf: 0,
  confirmed: 0,
  auto_confirmed: 0,
  failed: 0,
  unproven: 0,
});
const weekdays = (counts: number[]) => counts.map((operations, i) => ({ weekday: i + 1, operations }));
const cell = (weekday: number, hour: number) => ({ weekday, hour, operations: 1 });

/** The fleet's report of the window, every field. */
const fleetExpected = () => ({
  fleet: true,
  since: "2026-03-01T23:00:00.000Z",
  until: "2026-03-04T23:00:00.000Z",
  money: {
    sent_xaf: 108000, // O1 10000 + O2 30000 + O3 20000 + O5 40000 + O12 8000
    transfers: 5,
    median_transfer: 20000, // 8000, 10000, 20000, 30000, 40000
    largest_transfer: 40000,
    eur_taken: 1100, // T1 1000 + T2 100 (T3 cancelled, T4 unknown EUR)
    received_xaf: 754300, // 656000 + 65500 + 32800
    realised_rate: 721500 / 1100, // over T1 and T2, the ones with an EUR amount
    fees_xaf: 380,
    fees_known_for: 3, // O1, O5, O12 (its message attached after the settlement)
    at_risk_xaf: 50000,
    at_risk_count: 1,
    lost_xaf: 75000, // O6 refused + O8 arbitrated failed
    lost_count: 2,
  },
  activity: {
    operations: 11,
    transfers: 9,
    balance_checks: 2,
    active_sims: 2,
    active_agents: 2,
    daily: [
      {
        day: "2026-03-02",
        operations: 3,
        transfers: 2,
        balance_checks: 1,
        value_xaf: 10000,
        confirmed: 1,
        auto_confirmed: 1,
        failed: 1,
        unproven: 0,
      },
      {
        day: "2026-03-03",
        operations: 4,
        transfers: 4,
        balance_checks: 0,
        value_xaf: 58000,
        confirmed: 3,
        auto_confirmed: 1,
        failed: 0,
        unproven: 1,
      },
      {
        day: "2026-03-04",
        operations: 4,
        transfers: 3,
        balance_checks: 1,
        value_xaf: 40000,
        confirmed: 2,
        auto_confirmed: 1,
        failed: 1,
        unproven: 0,
      },
    ],
    by_weekday: weekdays([3, 4, 4, 0, 0, 0, 0]),
    by_hour: [
      cell(1, 0),
      cell(1, 9),
      cell(1, 10),
      cell(2, 0),
      cell(2, 11),
      cell(2, 12),
      cell(2, 17),
      cell(3, 10),
      cell(3, 11),
      cell(3, 13),
      cell(3, 15),
    ],
    by_agent: [
      { agent_id: bruno.agentId, name: "Bruno Eto", operations: 6, value_xaf: 28000 },
      { agent_id: awa.agentId, name: "Awa Ngono", operations: 5, value_xaf: 80000 },
    ],
  },
  reliability: {
    confirmed: 6,
    auto_confirmed: 3, // O1, O2, O7; O3 and O12 settled, O5 attached
    auto_confirm_rate: 0.5,
    settled_by_hand: 3,
    failed: 2,
    unproven: 1,
    proof_delay_median_s: 30, // 10, 30, 90
    proof_delay_p90_s: 78, // 30 + 0.8 × 60
    total_messages: 9,
    ambiguous_messages: 1,
    collision_rate: 0.1111,
    thresholds: { evidence_window_s: 600, late_evidence_s: 7200 },
    by_status: { awaiting_evidence: 1, confirmed: 6, failed: 2, no_evidence: 1, rejected: 1 },
  },
  load: {
    unproven_waiting: 1,
    messages_waiting: 3, // M3 ambiguous, M4 and M8 orphans
    oldest_unproven_hours: expect.closeTo(hoursSince("2026-03-03T11:01:00Z"), 0),
    oldest_message_hours: expect.closeTo(hoursSince("2026-02-20T10:00:00Z"), 0),
    dismissed: 1,
    settled: 3,
    sims_unmeasured: 1,
    sims_stale: 1,
    sims_frozen: 1,
    sims_unassigned: 1,
  },
  previous: {
    sent_xaf: 60000,
    transfers: 2,
    confirmed: 2,
    auto_confirmed: 2,
    since: "2026-02-26T23:00:00.000Z",
    until: "2026-03-01T23:00:00.000Z",
    median_transfer: 30000,
    largest_transfer: 35000,
    realised_rate: 655,
  },
});

/** Awa's own report of the same window. */
const awaExpected = () => ({
  fleet: false,
  since: "2026-03-01T23:00:00.000Z",
  until: "2026-03-04T23:00:00.000Z",
  money: {
    sent_xaf: 80000,
    transfers: 3,
    median_transfer: 30000,
    largest_transfer: 40000,
    eur_taken: 1000,
    received_xaf: 656000,
    realised_rate: null,
    fees_xaf: 300,
    fees_known_for: 2,
    at_risk_xaf: 0,
    at_risk_count: 0,
    lost_xaf: 15000,
    lost_count: 1,
  },
  activity: {
    operations: 5,
    transfers: 4,
    balance_checks: 1,
    active_sims: 1,
    active_agents: 1,
    daily: [
      {
        day: "2026-03-02",
        operations: 2,
        transfers: 1,
        balance_checks: 1,
        value_xaf: 10000,
        confirmed: 1,
        auto_confirmed: 1,
        failed: 0,
        unproven: 0,
      },
      {
        day: "2026-03-03",
        operations: 1,
        transfers: 1,
        balance_checks: 0,
        value_xaf: 30000,
        confirmed: 1,
        auto_confirmed: 1,
        failed: 0,
        unproven: 0,
      },
      {
        day: "2026-03-04",
        operations: 2,
        transfers: 2,
        balance_checks: 0,
        value_xaf: 40000,
        confirmed: 1,
        auto_confirmed: 0,
        failed: 1,
        unproven: 0,
      },
    ],
    by_weekday: weekdays([2, 1, 2, 0, 0, 0, 0]),
    by_hour: [cell(1, 0), cell(1, 9), cell(2, 0), cell(3, 10), cell(3, 11)],
    by_agent: [],
  },
  reliability: {
    confirmed: 3,
    auto_confirmed: 2,
    auto_confirm_rate: 0.6667,
    settled_by_hand: 0,
    failed: 1,
    unproven: 0,
    proof_delay_median_s: 60, // even count: (30 + 90) / 2
    proof_delay_p90_s: 84,
    total_messages: 3, // M1, M2, M5: the messages of Awa's operations (not M7, an orphan on her SIM)
    ambiguous_messages: 0,
    collision_rate: 0,
    thresholds: { evidence_window_s: 600, late_evidence_s: 7200 },
    by_status: { confirmed: 3, failed: 1, rejected: 1 },
  },
  load: {
    unproven_waiting: 0,
    // Orphans (M8 waiting, M7 dismissed) are nobody's work until a person attaches them.
    messages_waiting: 0,
    oldest_unproven_hours: null,
    oldest_message_hours: null,
    dismissed: 0,
    settled: 0,
    sims_unmeasured: 0,
    sims_stale: 0,
    sims_frozen: 0,
    sims_unassigned: 0,
  },
  previous: {
    sent_xaf: 25000,
    transfers: 1,
    confirmed: 1,
    auto_confirmed: 1,
    since: "2026-02-26T23:00:00.000Z",
    until: "2026-03-01T23:00:00.000Z",
    median_transfer: 25000,
    largest_transfer: 25000,
    realised_rate: null,
  },
});

const handsetsExpected = () => ({
  fleet: true,
  since: "2026-03-01T23:00:00.000Z",
  until: "2026-03-04T23:00:00.000Z",
  handsets: [
    {
      device_id: D2,
      label: "Handset Two",
      dialled: 5, // O3, O4, O8, O10, O12
      unproven: 3, // O3 settled arrived, O4 waiting, O8 arbitrated failed (O12's message arrived)
      unproven_xaf: 130000,
      waiting: 1,
      waiting_xaf: 50000,
      settled_arrived: 1,
      settled_not_arrived: 1,
      unproven_rate: 0.6,
      oldest_waiting_hours: expect.closeTo(hoursSince("2026-03-03T11:01:00Z"), 0),
    },
  ],
});

const get = (path: string, token: string) => sys.api.get(path, { token });

beforeAll(async () => {
  sys = await startTestSystem();
  admin = await sys.api.bootstrapAdmin();
  awa = await sys.api.createAgent(admin.token, { login: "awa", full_name: "Awa Ngono" });
  bruno = await sys.api.createAgent(admin.token, { login: "bruno", full_name: "Bruno Eto" });
  sup = await sys.api.createAgent(admin.token, { login: "sup", role: "supervisor" });
  world = buildWorld();
  await world.publish(sys);
});
afterAll(async () => {
  dumpErrors(sys?.logs);
  await sys?.stop();
});

describe("GET /v1/analytics on a fixed world", () => {
  it("gives the fleet every block of the window, hand-computed", async () => {
    await eventually(
      async () => {
        const res = await get(`/v1/analytics?${W}`, admin.token);
        expect(res.status).toBe(200);
        expect(res.body).toEqual(fleetExpected());
        return true;
      },
      40_000,
      "the fleet report",
    );
  });

  it("gives an agent its own work only: fleet false, by_agent empty, realised_rate null", async () => {
    const res = await get(`/v1/analytics?${W}`, awa.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(awaExpected());
  });

  it("gives another agent its own money: an even count of transfers has the mean of the middle two as median", async () => {
    const res = await get(`/v1/analytics?${W}`, bruno.token);
    expect(res.status).toBe(200);
    expect(res.body.fleet).toBe(false);
    expect(res.body.money).toEqual({
      sent_xaf: 28000, // O3 20000 + O12 8000
      transfers: 2,
      median_transfer: 14000, // (8000 + 20000) / 2
      largest_transfer: 20000,
      eur_taken: 100, // T2, the one Bruno launched
      received_xaf: 65500,
      realised_rate: null,
      fees_xaf: 80,
      fees_known_for: 1,
      at_risk_xaf: 50000,
      at_risk_count: 1,
      lost_xaf: 60000,
      lost_count: 1,
    });
  });

  it("reaches every operation with all: no bounds, weekly series from the first operation to today", async () => {
    const res = await get("/v1/analytics?all=true", admin.token);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ fleet: true, since: null, until: null });
    expect(res.body.activity.operations).toBe(14); // O1–O12, P1, P2
    const daily = res.body.activity.daily as { day: string }[];
    expect(daily[0]).toEqual({
      day: "2026-02-23",
      operations: 2,
      transfers: 2,
      balance_checks: 0,
      value_xaf: 60000,
      confirmed: 2,
      auto_confirmed: 2,
      failed: 0,
      unproven: 0,
    });
    // The week of March 2 has O11 (Thursday) besides the ten of the window.
    expect(daily[1]).toEqual({
      day: "2026-03-02",
      operations: 12,
      transfers: 10,
      balance_checks: 2,
      value_xaf: 108000,
      confirmed: 6,
      auto_confirmed: 3,
      failed: 2,
      unproven: 1,
    });
    const last = daily.at(-1)!.day;
    expect(new Date(`${last}T00:00:00Z`).getUTCDay()).toBe(1);
    expect(Date.now() + 3600_000 - Date.parse(`${last}T00:00:00Z`)).toBeLessThan(7 * 86_400_000);
    expect(res.body.previous).toEqual({
      sent_xaf: 0,
      transfers: 0,
      confirmed: 0,
      auto_confirmed: 0,
      since: null,
      until: null,
      median_transfer: 0,
      largest_transfer: 0,
      realised_rate: null,
    });
  });

  it("gives a supervisor the fleet", async () => {
    const res = await get(`/v1/analytics?${W}`, sup.token);
    expect(res.status).toBe(200);
    expect(res.body).toEqual(fleetExpected());
  });

  it("lists the handsets whose transfers dialled and got no confirming message", async () => {
    const fleet = await get(`/v1/analytics/unproven-by-handset?${W}`, admin.token);
    expect(fleet.status).toBe(200);
    expect(fleet.body).toEqual(handsetsExpected());
    const own = await get(`/v1/analytics/unproven-by-handset?${W}`, awa.token);
    expect(own.status).toBe(200);
    expect(own.body).toEqual({ ...handsetsExpected(), fleet: false, handsets: [] });
  });

  it("buckets the series by week (dated by the Monday) past 120 days, daily at 120", async () => {
    const res = await get("/v1/analytics?from=2025-11-01&to=2026-03-04", admin.token);
    expect(res.status).toBe(200);
    const daily = res.body.activity.daily as { day: string }[];
    const mondays: string[] = [];
    for (let t = Date.parse("2025-10-27"); t <= Date.parse("2026-03-02"); t += 7 * 86_400_000) {
      mondays.push(new Date(t).toISOString().slice(0, 10));
    }
    expect(mondays).toHaveLength(19);
    expect(daily).toEqual(
      mondays.map((day) =>
        day === "2026-02-23"
          ? {
              day,
              operations: 2,
              transfers: 2,
              balance_checks: 0,
              value_xaf: 60000,
              confirmed: 2,
              auto_confirmed: 2,
              failed: 0,
              unproven: 0,
            }
          : day === "2026-03-02"
            ? {
                day,
                operations: 11,
                transfers: 9,
                balance_checks: 2,
                value_xaf: 108000,
                confirmed: 6,
                auto_confirmed: 3,
                failed: 2,
                unproven: 1,
              }
            : zeroDay(day),
      ),
    );
    expect(res.body.since).toBe("2025-10-31T23:00:00.000Z");
    expect(res.body.until).toBe("2026-03-04T23:00:00.000Z");
    expect(res.body.previous).toEqual({
      sent_xaf: 0,
      transfers: 0,
      confirmed: 0,
      auto_confirmed: 0,
      since: "2025-06-29T23:00:00.000Z",
      until: "2025-10-31T23:00:00.000Z",
      median_transfer: 0,
      largest_transfer: 0,
      realised_rate: null,
    });

    const exactly120 = await get("/v1/analytics?from=2025-11-05&to=2026-03-04", admin.token);
    const days = exactly120.body.activity.daily as { day: string }[];
    expect(days).toHaveLength(120);
    expect(days[0]).toEqual(zeroDay("2025-11-05"));
    expect(days.at(-1)).toMatchObject({ day: "2026-03-04", operations: 4 });
  });

  it("has an entry for every day of a days window, today included, and the window ends at the coming midnight", async () => {
    const today = new Date(Date.now() + 3600_000).toISOString().slice(0, 10);
    const midnight = (day: string, plus = 0) =>
      new Date(Date.parse(`${day}T00:00:00Z`) + plus * 86_400_000 - 3600_000).toISOString();
    const one = await get("/v1/analytics?days=1", admin.token);
    expect(one.status).toBe(200);
    expect(one.body.since).toBe(midnight(today));
    expect(one.body.until).toBe(midnight(today, 1));
    expect(one.body.activity.daily).toEqual([zeroDay(today)]);
    expect(one.body.previous).toMatchObject({ since: midnight(today, -1), until: midnight(today) });

    const week = await get("/v1/analytics", admin.token);
    expect(week.body.activity.daily.map((d: { day: string }) => d.day)).toEqual(
      [-6, -5, -4, -3, -2, -1, 0].map((k) => midnight(today, k + 1).slice(0, 10)),
    );
    expect(week.body.since).toBe(midnight(today, -6));
    // load is never windowed: the same today as over the March window.
    expect(week.body.load).toEqual(fleetExpected().load);
  });

  it("counts nothing twice when every event is delivered again", async () => {
    await world.publish(sys);
    // The consumers' lag (shown in /v1/health) reaches zero once the replay is consumed.
    await eventually(
      async () => {
        const h = await sys.api.get("/v1/health");
        expect(h.body.analytics).toMatchObject({
          lag: 0,
          lag_by_topic: { fleet: 0, operations: 0, messages: 0, transactions: 0 },
        });
        expect(h.body.analytics.last_event_at).toEqual(expect.any(String));
        return true;
      },
      40_000,
      "analytics lag 0",
    );
    expect((await get(`/v1/analytics?${W}`, admin.token)).body).toEqual(fleetExpected());
    expect((await get(`/v1/analytics?${W}`, awa.token)).body).toEqual(awaExpected());
    expect((await get(`/v1/analytics/unproven-by-handset?${W}`, admin.token)).body).toEqual(handsetsExpected());
  });

  it("keeps the rollups equal to the sums of the rows (triggers versus a rebuild in one pass)", async () => {
    const snapshot = async () => {
      const out: Record<string, unknown[]> = {};
      for (const [table, nonZero] of [
        ["op_daily", "n <> 0"],
        ["op_hourly", "n <> 0"],
        ["op_sim_daily", "n <> 0"],
        ["msg_daily", "n <> 0"],
        ["tx_daily", "xaf <> 0 or eur <> 0"],
      ]) {
        out[table] = await sys.db.query(`select * from analytics.${table} t where ${nonZero} order by t::text`);
      }
      return out;
    };
    const kept = await snapshot();
    expect(kept.op_daily.length).toBeGreaterThan(0);
    await sys.db.query(`select analytics.rebuild_rollups()`);
    expect(await snapshot()).toEqual(kept);
  });
});

describe("GET /v1/analytics refusals", () => {
  it.each([
    ["days=0", "invalid_request"],
    ["days=366", "invalid_request"],
    ["days=abc", "invalid_request"],
    ["from=2026-3-1", "invalid_request"],
    ["from=2026-02-30", "invalid_window"],
    ["from=2026-03-04&to=2026-03-02", "reversed_range"],
    ["from=2999-01-01", "future_range"],
    ["to=2999-01-07&days=3", "future_range"],
  ])("422 for %s (%s)", async (query, reason) => {
    for (const path of ["/v1/analytics", "/v1/analytics/unproven-by-handset"]) {
      const res = await get(`${path}?${query}`, admin.token);
      expect(res.status).toBe(422);
      expect(res.body.code).toBe("invalid_request");
      if (reason !== "invalid_request") expect(res.body.context.reason).toBe(reason);
    }
  });

  it("401 without a session, 403 with an API key or for an inactive agent", async () => {
    expect((await sys.api.get("/v1/analytics")).status).toBe(401);
    expect((await sys.api.get("/v1/analytics", { apiKey: true })).status).toBe(403);
    const gone = await sys.api.createAgent(admin.token, { login: "gone" });
    // Every way of deactivating revokes the sessions: an inactive agent's live session is
    // written directly, to hold the gateway's own refusal of an inactive caller.
    await sys.db.query(`update fleet.agents set is_active = false where id = $1`, [gone.agentId]);
    for (const path of ["/v1/analytics", "/v1/analytics/unproven-by-handset"]) {
      const res = await get(path, gone.token);
      expect(res.status).toBe(403);
      // The gateway refuses an inactive agent before the service (which refuses it too, for
      // direct gRPC callers, as not_allowed with reason agent_inactive).
      expect(res.body.code === "not_allowed" ? res.body.context.reason : res.body.code).toBe("agent_inactive");
    }
  });
});
