// The evidence routes through the gateway, the real services, PostgreSQL and Kafka:
// submission, the unmatched queue, dismissal, movements and attach, with the scope of
// every role, and the proof journeys (confirmed, restated, orphan, arbitration, late
// evidence) down to dispatch's operation and fleet's balance mirror.

import { beforeAll, describe, expect, it } from "vitest";
import {
  depositConfirmation,
  transferReceived,
  balanceReply,
  failure,
} from "../../../../services/evidence/src/domain/sms-templates.ts";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import { SimulatedHandset, SimulatedOperator } from "../../../../test/simulator/index.ts";
import { OperatorSms } from "../../../../test/simulator/operator-sms.ts";
import {
  createSim,
  grantAccess,
  provisionHandset,
  statusesFor,
  type Credentials,
  type Device,
  type Sim,
} from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };
let handset: { device: Device; sim: Sim };
let other: { device: Device; sim: Sim };
/** A handset only the dialled journeys use, so its queue holds nothing but their operations. */
let dialer: { device: Device; sim: Sim };
let agent: { token: string; agentId: string };
let outsider: { token: string; agentId: string };
let supervisor: { token: string };

const START_BALANCE = 5_000_000;

routeSystem(
  {
    prefix: "ev",
    env: {
      DEVICE_COOLDOWN_S: "0",
      // A short evidence window and a quick sweep, so the late-evidence and arbitration journeys run in seconds.
      EVIDENCE_WINDOW_S: "3",
      SWEEP_INTERVAL_S: "0.5",
      EVIDENCE_REDRIVE_INTERVAL_MS: "500",
      EVIDENCE_REDRIVE_GRACE_MS: "1000",
    },
  },
  (s) => ({ sys, admin, creds } = s),
);
beforeAll(async () => {
  const a = await provisionHandset(sys.api, admin.token, {
    operators: ["operator_b"],
    balance: START_BALANCE,
    label: "Evidence handset",
  });
  handset = { device: a.device, sim: a.sims[0] };
  const b = await provisionHandset(sys.api, admin.token, {
    operators: ["operator_b"],
    balance: START_BALANCE,
    label: "Other handset",
  });
  other = { device: b.device, sim: b.sims[0] };
  const c = await provisionHandset(sys.api, admin.token, {
    operators: ["operator_b"],
    balance: START_BALANCE,
    label: "Dialling handset",
  });
  dialer = { device: c.device, sim: c.sims[0] };
  agent = await sys.api.createAgent(admin.token, { login: "ev-owner" });
  outsider = await sys.api.createAgent(admin.token, { login: "ev-outsider" });
  supervisor = await sys.api.createAgent(admin.token, { login: "ev-super", role: "supervisor" });
  await grantAccess(sys.api, admin.token, agent.agentId, {
    simIds: [handset.sim.simId, dialer.sim.simId],
    opTypes: ["deposit", "balance"],
  });
  await grantAccess(sys.api, admin.token, outsider.agentId, {
    simIds: [other.sim.simId],
    opTypes: ["deposit", "balance"],
  });
});

let seq = 0;
const uniqueAmount = () => 10_000 + ++seq * 137;
const ref = () => `CI261122.${String(1000 + seq).slice(-4)}.B${String(10_000 + seq * 7).slice(-5)}`;
const customer = () => `69${String(1_000_000 + seq * 31).slice(-7)}`;

function depositText(amount: number, msisdn: string, o: { ref?: string; balanceAfter?: number } = {}) {
  return depositConfirmation("operator_b", {
    amount,
    balanceAfter: o.balanceAfter ?? START_BALANCE - amount,
    ref: o.ref ?? ref(),
    msisdn,
    name: "CLARISSE MBALLA",
    at: new Date(),
    language: "fr",
  });
}

async function submit(
  raw: string | string[],
  o: { token?: string; simId?: string; correlate?: boolean; clientMessageId?: string; sender?: string } = {},
) {
  const list = Array.isArray(raw) ? raw : [raw];
  return sys.api.post("/v1/device/messages", {
    token: o.token ?? handset.device.token,
    body: {
      sim_id: o.simId ?? handset.sim.simId,
      subscription_slot: 0,
      ...(o.correlate === undefined ? {} : { correlate: o.correlate }),
      messages: list.map((r) => ({
        sender: o.sender ?? "OrangeMoney",
        raw: r,
        received_at: new Date().toISOString(),
        device_received_at: new Date().toISOString(),
        ...(o.clientMessageId ? { client_message_id: o.clientMessageId } : {}),
      })),
    },
  });
}

/** A deposit created by the automation caller for the agent, on the given SIM. */
async function createDeposit(
  amount: number,
  msisdn: string,
  simId = handset.sim.simId,
  agentId = agent.agentId,
): Promise<string> {
  const res = await sys.api.post("/v1/operations", {
    apiKey: true,
    body: {
      request_id: `ev-${++seq}-${Date.now()}`,
      agent_id: agentId,
      operator: "operator_b",
      client: { msisdn, nom: "CLARISSE MBALLA" },
      montant: amount,
      sim_id: simId,
    },
  });
  if (res.status !== 202) throw new Error(`create operation: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.operation_id;
}

/** The handset claims its next operation and reports the outcome. */
async function dial(device: Device, operationId: string, outcome = "ussd_ok") {
  const next = await sys.api.nextWork(device.token);
  expect(next.status).toBe(200);
  expect(next.body.operation_id).toBe(operationId);
  const done = await sys.api.post("/v1/device/outcome", {
    token: device.token,
    body: {
      operation_id: operationId,
      outcome,
      ussd_response: "Transaction en cours",
      executed_at: new Date().toISOString(),
    },
  });
  expect(done.status).toBe(200);
  return done.body;
}

/** Submission options of the dialling handset's SIM. */
const onDialer = () => ({ token: dialer.device.token, simId: dialer.sim.simId });
const getOperation = async (id: string) => (await sys.api.get(`/v1/operations/${id}`, { token: admin.token })).body;
const unmatched = (token: string, query = "unmatched=true&all=true") =>
  sys.api.get(`/v1/evidences?${query}`, { token });

describe("submit SMS messages (POST /v1/device/messages)", () => {
  it("proves a dialled deposit: confirmed, evidence on the operation, balance mirror from balance_after", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn, dialer.sim.simId);
    await dial(dialer.device, opId);
    const before = (await sys.api.get(`/v1/sims/${dialer.sim.simId}`, { token: admin.token })).body.balance_mirror;
    const text = depositText(amount, msisdn, { balanceAfter: 4_000_000 + seq });
    const res = await submit(text, onDialer());
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      matched: true,
      restated: false,
      kind: "DEP",
      outcome: "confirmed",
      balance: 4_000_000 + seq,
      previous_balance: before,
    });
    expect(res.body.operation).toMatchObject({ operation_id: opId, status: "confirmed", montant: amount });
    expect(res.body.results).toHaveLength(1);
    expect(res.body.results[0]).toMatchObject({ duplicate: false, operation_id: opId, is_ambiguous: false });
    const op = await getOperation(opId);
    expect(op.status).toBe("confirmed");
    expect(op.evidence).toMatchObject({ amount, kind: "DEP", raw_text: text, is_ambiguous: false });
    const sim = (await sys.api.get(`/v1/sims/${dialer.sim.simId}`, { token: admin.token })).body;
    expect(sim.balance_mirror).toBe(4_000_000 + seq);

    const again = await submit(text, onDialer());
    expect(again.body).toMatchObject({ matched: true, outcome: "confirmed", balance: res.body.balance });
    expect(again.body.results[0]).toMatchObject({ duplicate: true, message_id: res.body.results[0].message_id });
  });

  it("answers a restatement of the same reference with restated and the same operation", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const r = ref();
    const first = await submit(depositText(amount, msisdn, { ref: r }));
    expect(first.body.outcome).toBe("confirmed");
    const second = await submit(depositText(amount, msisdn, { ref: r, balanceAfter: 1 }));
    expect(second.body).toMatchObject({ matched: true, restated: true, outcome: "restated" });
    expect(second.body.operation.operation_id).toBe(opId);
  });

  it("keeps an SMS that matches nothing as an orphan in the unmatched queue", async () => {
    const res = await submit(depositText(uniqueAmount(), customer()));
    expect(res.body).toMatchObject({
      matched: false,
      restated: false,
      outcome: "orphan",
      operation: null,
      balance: null,
    });
    const list = await unmatched(agent.token);
    expect(list.body.map((e: { id: string }) => e.id)).toContain(res.body.results[0].message_id);
  });

  it("confirms nothing on a divergent MSISDN and notifies the fleet", async () => {
    const amount = uniqueAmount();
    const opId = await createDeposit(amount, customer());
    const res = await submit(depositText(amount, customer()));
    expect(res.body).toMatchObject({ matched: false, outcome: "divergent" });
    expect((await getOperation(opId)).status).toBe("queued");
    await eventually(
      async () => {
        const n = await sys.db
          .query(`select 1 from fleet.notifications where operation_id = $1`, [opId])
          .catch(() => []);
        return n.length > 0 ? n : undefined;
      },
      30_000,
      "the divergence alert to reach fleet's notifications",
    );
  });

  it("confirms nothing when the amount to the operation's destination differs, and notifies the fleet", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const res = await submit(depositText(amount + 500, msisdn));
    expect(res.body).toMatchObject({ matched: false, outcome: "divergent", kind: "DEP" });
    expect((await getOperation(opId)).status).toBe("queued");
    const alerts = await eventually(
      async () => {
        const n = await sys.db
          .query(`select context from fleet.notifications where operation_id = $1 and kind = 'evidence_divergent'`, [
            opId,
          ])
          .catch(() => []);
        return n.length > 0 ? n : undefined;
      },
      30_000,
      "the amount divergence alert to reach fleet's notifications",
    );
    expect(alerts[0].context).toMatchObject({ expected_amount: amount, found_amount: amount + 500 });
  });

  it("refuses a SIM of another handset with 403, other credentials with 401/403, a bad body with 422", async () => {
    const res = await submit(depositText(1000, customer()), { simId: other.sim.simId });
    expect(res.status).toBe(403);
    expect([res.body.code, res.body.context.reason]).toEqual(["not_allowed", "sim_not_assigned_to_device"]);
    const body = {
      sim_id: handset.sim.simId,
      messages: [{ sender: "x", raw: "y", received_at: new Date().toISOString() }],
    };
    const statuses = await statusesFor(
      sys.api,
      creds,
      "POST",
      "/v1/device/messages",
      ["none", "agent", "admin", "apiKey", "revokedDevice", "device"],
      body,
    );
    // The fixtures' device has no SIM: it is not that SIM's handset either.
    expect(statuses).toEqual({ none: 401, agent: 403, admin: 403, apiKey: 403, revokedDevice: 401, device: 403 });
    const slotAsText = await sys.api.post("/v1/device/messages", {
      token: handset.device.token,
      body: {
        sim_id: handset.sim.simId,
        subscription_slot: "0",
        correlate: false,
        messages: [{ sender: "x", raw: "slot as text", received_at: new Date().toISOString() }],
      },
    });
    expect(slotAsText.status).toBe(200);
    // Nothing can be filed without a SIM: the one refusal of the whole submission.
    const noSim = await sys.api.post("/v1/device/messages", {
      token: handset.device.token,
      body: { messages: [{ sender: "x", raw: "y", received_at: new Date().toISOString() }] },
    });
    expect([noSim.status, noSim.body.code]).toEqual([422, "invalid_request"]);
  });

  it("stores every valid message of a batch and refuses the others one by one (never the batch)", async () => {
    const now = new Date().toISOString();
    const valid = (i: number) => ({
      sender: "OrangeMoney",
      raw: `batch notice ${i} ${now}`,
      received_at: now,
      client_message_id: `batch-${now}-${i}`,
    });
    const messages: unknown[] = [
      valid(0),
      { ...valid(1), raw: "x".repeat(4001) },
      { ...valid(2), sender: "s".repeat(101) },
      { ...valid(3), received_at: "2026-11-25T10:00:00" },
      { ...valid(4), client_message_id: "z".repeat(65) },
      "not a message",
      // More than 100 messages in all: no longer refused whole (storing past 100 valid ones
      // is asked again later: domain/submission.test.ts).
      ...Array.from({ length: 100 }, (_, i) => ({ ...valid(10 + i), raw: "" })),
      valid(200),
    ];
    const res = await sys.api.post("/v1/device/messages", {
      token: handset.device.token,
      body: { sim_id: handset.sim.simId, subscription_slot: 2, correlate: false, messages },
    });
    expect(res.status).toBe(200);
    const results = res.body.results as { outcome: string; refused_reason: string | null; message_id: string }[];
    expect(results).toHaveLength(messages.length);
    expect(results.slice(1, 6).map((r) => [r.outcome, r.refused_reason])).toEqual(
      Array(5).fill(["refused", "invalid_message"]),
    );
    expect((results[1] as unknown as { refused_detail: string }).refused_detail).toMatch(/^raw: /);
    expect((results[3] as unknown as { refused_detail: string }).refused_detail).toMatch(/^received_at: /);
    // The two valid messages, first and last, are stored and answered in their places.
    const stored = results.flatMap((r, at) => (r.outcome === "refused" ? [] : [at]));
    expect(stored).toEqual([0, messages.length - 1]);
    expect(stored.every((at) => results[at]!.message_id && results[at]!.refused_reason === null)).toBe(true);
    const rows = await sys.db.query(
      `select client_message_id from evidence.messages where client_message_id like $1 order by 1`,
      [`batch-${now}-%`],
    );
    expect(rows.map((r: { client_message_id: string }) => r.client_message_id)).toEqual([
      `batch-${now}-0`,
      `batch-${now}-200`,
    ]);
    // An empty batch is answered, not refused.
    const empty = await sys.api.post("/v1/device/messages", {
      token: handset.device.token,
      body: { sim_id: handset.sim.simId, messages: [] },
    });
    expect([empty.status, empty.body.results]).toEqual([200, []]);
  });

  it("stores without correlating when correlate is false", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const res = await submit(depositText(amount, msisdn), { correlate: false });
    expect(res.body).toMatchObject({ matched: false, outcome: "not_correlated", kind: "DEP" });
    expect((await getOperation(opId)).status).toBe("queued");
  });

  it("answers a batch message by message, with the first match at the top level", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    await createDeposit(amount, msisdn);
    const res = await submit([
      balanceReply("operator_b", { balance: 123, language: "fr" }),
      depositText(amount, msisdn),
    ]);
    expect(res.body.results.map((r: { outcome: string }) => r.outcome)).toEqual(["orphan", "confirmed"]);
    expect(res.body).toMatchObject({ matched: true, outcome: "confirmed", kind: "DEP" });
  });
});

describe("who may speak for the operator, and what no rule recognises", () => {
  const notificationsOf = (kind: string, simId: string) =>
    sys.db
      .query(`select context from fleet.notifications where kind = $1 and sim_id = $2`, [kind, simId])
      .catch(() => []);

  it("stores, flags and alerts on the operator's wording from an ordinary number, confirms nothing; the operator's own copy still confirms", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const text = depositText(amount, msisdn);
    const forged = await submit(text, { sender: "+237670000000" });
    expect(forged.status).toBe(200);
    expect(forged.body).toMatchObject({ matched: false, restated: false, kind: "DEP", outcome: "unknown_sender" });
    expect(forged.body.results[0]).toMatchObject({ duplicate: false, operation_id: null });
    expect((await getOperation(opId)).status).toBe("queued");
    // Sent again, it is the same stored message, still confirming nothing.
    const again = await submit(text, { sender: "+237670000000" });
    expect(again.body.results[0]).toMatchObject({ duplicate: true, outcome: "unknown_sender" });
    expect((await getOperation(opId)).status).toBe("queued");
    // Flagged in the unmatched queue for a person, with its sender.
    const queue = await unmatched(admin.token);
    const listed = queue.body.find((e: { id: string }) => e.id === forged.body.results[0].message_id);
    expect(listed).toMatchObject({ outcome: "unknown_sender", sender: "+237670000000", kind: "DEP", amount });
    // This message's alert (the SIM may hold other messages' alerts already).
    const alerted = await eventually(
      async () => {
        const rows = await notificationsOf("evidence_unknown_sender", handset.sim.simId);
        const ids = rows.map((r: { context: { message_id: string } }) => r.context.message_id);
        return ids.includes(forged.body.results[0].message_id) ? ids : undefined;
      },
      30_000,
      "the unknown-sender alert to reach fleet's notifications",
    );
    expect(alerted).toContain(forged.body.results[0].message_id);
    // The operator's own copy of the same words is not a duplicate of the forged one.
    const genuine = await submit(text, { sender: "Orange Money" });
    expect(genuine.body).toMatchObject({ matched: true, outcome: "confirmed" });
    expect(genuine.body.results[0].duplicate).toBe(false);
    expect((await getOperation(opId)).status).toBe("confirmed");
  });

  it("refuses another operator's sender id too", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const res = await submit(depositText(amount, msisdn), { sender: "MobileMoney" });
    expect(res.body).toMatchObject({ matched: false, outcome: "unknown_sender" });
    expect((await getOperation(opId)).status).toBe("queued");
  });

  it("keeps a text no rule recognises as an orphan with what it labels, never confirming a same-amount transfer", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const text = `Operation validee vers ${msisdn}. Montant: ${amount} FCFA. Ref: ZX${seq}.0042. Nouveau solde: 77000 FCFA.`;
    const res = await submit(text);
    expect(res.body).toMatchObject({ matched: false, kind: null, outcome: "orphan" });
    expect((await getOperation(opId)).status).toBe("queued");
    const listed = (await unmatched(admin.token)).body.find(
      (e: { id: string }) => e.id === res.body.results[0].message_id,
    );
    expect(listed).toMatchObject({ kind: null, amount, balance_after: 77_000, operator_ref: `ZX${seq}.0042` });
  });
});

describe("concurrency through the whole system", () => {
  it("stores one message and confirms once when the same SMS arrives three times at once", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const text = depositText(amount, msisdn);
    const all = await Promise.all([submit(text), submit(text), submit(text)]);
    for (const r of all) expect(r.body).toMatchObject({ matched: true, outcome: "confirmed" });
    const ids = new Set(all.map((r) => r.body.results[0].message_id));
    expect(ids.size).toBe(1);
    const rows = await sys.db.query(`select count(*)::int as n from evidence.messages where raw_text = $1`, [text]);
    expect(rows[0].n).toBe(1);
    const proofs = await sys.db.query(
      `select count(*)::int as n from evidence.messages where operation_id = $1 and link = 'proof'`,
      [opId],
    );
    expect(proofs[0].n).toBe(1);
  });

  it("keeps a message racing a cancel consistent with the operation", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn);
    const [cancel, sms] = await Promise.all([
      sys.api.post(`/v1/operations/${opId}/cancel`, { token: admin.token }),
      submit(depositText(amount, msisdn)),
    ]);
    const op = await getOperation(opId);
    if (sms.body.outcome === "confirmed") {
      expect(cancel.status).toBe(409);
      expect(op.status).toBe("confirmed");
    } else {
      expect(cancel.status).toBe(200);
      expect(sms.body.outcome).toBe("orphan");
      expect(op.status).toBe("rejected");
      expect(op.evidence).toBeNull();
    }
  });
});

describe("unmatched evidence (GET /v1/evidences?unmatched=true)", () => {
  it("scopes agents to their grant, supervisors and admins to the fleet; refuses the API key and devices", async () => {
    const mine = (await submit(depositText(uniqueAmount(), customer()))).body.results[0].message_id;
    const theirs = (
      await submit(depositText(uniqueAmount(), customer()), { token: other.device.token, simId: other.sim.simId })
    ).body.results[0].message_id;
    const ids = async (token: string) => (await unmatched(token)).body.map((e: { id: string }) => e.id);
    expect(await ids(agent.token)).toContain(mine);
    expect(await ids(agent.token)).not.toContain(theirs);
    expect(await ids(outsider.token)).toContain(theirs);
    expect(await ids(outsider.token)).not.toContain(mine);
    for (const token of [supervisor.token, admin.token])
      expect(await ids(token)).toEqual(expect.arrayContaining([mine, theirs]));
    expect(await ids(creds.agent.token!)).toEqual([]);
    const statuses = await statusesFor(sys.api, creds, "GET", "/v1/evidences?unmatched=true", [
      "none",
      "apiKey",
      "device",
      "inactive",
    ]);
    expect(statuses).toEqual({ none: 401, apiKey: 403, device: 403, inactive: 403 });
  });

  it("returns the evidence record fields", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const r = ref();
    const id = (await submit(depositText(amount, msisdn, { ref: r }))).body.results[0].message_id;
    const row = (await unmatched(agent.token)).body.find((e: { id: string }) => e.id === id);
    expect(row).toMatchObject({
      id,
      sim_id: handset.sim.simId,
      source: "handset",
      operator_ref: r,
      amount,
      is_ambiguous: false,
      counterparty_msisdn: msisdn,
      counterparty_name: "CLARISSE MBALLA",
      direction: "out",
      kind: "DEP",
    });
    expect(typeof row.raw_text).toBe("string");
    expect(new Date(row.received_at).getTime()).toBeGreaterThan(0);
  });

  it("answers 400 without unmatched=true and 422 for a bad limit or range", async () => {
    expect((await unmatched(agent.token, "")).status).toBe(400);
    const refused = (await unmatched(agent.token, "unmatched=false")).body;
    expect([refused.code, refused.context.reason]).toEqual(["bad_request", "unmatched_required"]);
    expect((await unmatched(agent.token, "unmatched=true&limit=251")).status).toBe(422);
    expect((await unmatched(agent.token, "unmatched=true&from=2026-02-02&to=2026-02-01")).status).toBe(422);
    expect((await unmatched(agent.token, "unmatched=true&days=400")).status).toBe(422);
    expect((await unmatched(agent.token, "unmatched=true&limit=1")).body).toHaveLength(1);
  });
});

describe("dismiss evidence (POST /v1/evidences/:id/dismiss)", () => {
  it("dismisses idempotently with 204 and takes the message out of the queue", async () => {
    const id = (await submit(depositText(uniqueAmount(), customer()))).body.results[0].message_id;
    const path = `/v1/evidences/${id}/dismiss`;
    expect((await sys.api.post(path, { token: agent.token, body: { reason: "balance_reading" } })).status).toBe(204);
    expect((await sys.api.post(path, { token: agent.token, body: { reason: "balance_reading" } })).status).toBe(204);
    expect((await unmatched(agent.token)).body.map((e: { id: string }) => e.id)).not.toContain(id);
  });

  it("answers 403 outside the grant, 404 unknown, 409 attached, 422 bad reason or id", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    await createDeposit(amount, msisdn);
    const linked = (await submit(depositText(amount, msisdn))).body.results[0].message_id;
    const orphan = (await submit(depositText(uniqueAmount(), customer()))).body.results[0].message_id;
    const dismiss = (id: string, token: string, reason = "other") =>
      sys.api.post(`/v1/evidences/${id}/dismiss`, { token, body: { reason } });
    const refused = (await dismiss(orphan, outsider.token)).body;
    expect([refused.code, refused.context.reason]).toEqual(["not_allowed", "sim_not_in_grant"]);
    expect((await dismiss(orphan, outsider.token)).status).toBe(403);
    expect((await dismiss("00000000-0000-4000-8000-000000000000", agent.token)).status).toBe(404);
    expect((await dismiss(linked, agent.token)).status).toBe(409);
    expect((await dismiss(orphan, agent.token, "spam")).status).toBe(422);
    expect((await dismiss("not-a-uuid", agent.token)).status).toBe(422);
    expect((await dismiss(orphan, supervisor.token)).status).toBe(204);
    const statuses = await statusesFor(
      sys.api,
      creds,
      "POST",
      `/v1/evidences/${orphan}/dismiss`,
      ["none", "apiKey", "device", "inactive", "agent"],
      { reason: "other" },
    );
    // The fixtures' agent has no grant: the SIM is not its.
    expect(statuses).toEqual({ none: 401, apiKey: 403, device: 403, inactive: 403, agent: 403 });
  });
});

describe("movements (GET /v1/evidences/movements)", () => {
  it("lists movements newest first, dismissed ones included, out of the unmatched queue", async () => {
    const move = (amount: number) =>
      transferReceived("operator_b", {
        amount,
        balanceAfter: 99_000,
        ref: ref(),
        msisdn: "699111222",
        name: "PAUL EKANE",
        at: new Date(),
        language: "fr",
      });
    const first = (await submit(move(uniqueAmount()))).body;
    const second = (await submit(move(uniqueAmount()))).body;
    expect(first).toMatchObject({ outcome: "movement", kind: "UV_IN", matched: false });
    const firstId = first.results[0].message_id;
    expect(
      (await sys.api.post(`/v1/evidences/${firstId}/dismiss`, { token: agent.token, body: { reason: "not_ours" } }))
        .status,
    ).toBe(204);
    const list = await sys.api.get("/v1/evidences/movements?all=true", { token: agent.token });
    expect(list.status).toBe(200);
    const ids = list.body.map((e: { id: string }) => e.id);
    expect(ids.indexOf(second.results[0].message_id)).toBeLessThan(ids.indexOf(firstId));
    expect(list.body.find((e: { id: string }) => e.id === firstId).dismiss_reason).toBe("not_ours");
    expect((await unmatched(agent.token)).body.map((e: { id: string }) => e.id)).not.toContain(firstId);
    expect(
      (await sys.api.get("/v1/evidences/movements?all=true", { token: outsider.token })).body.map(
        (e: { id: string }) => e.id,
      ),
    ).not.toContain(firstId);
    const statuses = await statusesFor(sys.api, creds, "GET", "/v1/evidences/movements", [
      "none",
      "apiKey",
      "device",
      "inactive",
      "agent",
      "supervisor",
      "admin",
    ]);
    expect(statuses).toEqual({
      none: 401,
      apiKey: 403,
      device: 403,
      inactive: 403,
      agent: 200,
      supervisor: 200,
      admin: 200,
    });
    expect((await sys.api.get("/v1/evidences/movements?limit=0", { token: agent.token })).status).toBe(422);
    expect((await sys.api.get("/v1/evidences/movements?limit=1&all=true", { token: agent.token })).body).toHaveLength(
      1,
    );
  });
});

describe("attach evidence (POST /v1/operations/:id/evidence) and the late journeys", () => {
  it("attaches the operator's deposit to the dialled operation it proves: confirmed, linked, out of the queue, the SIM's balance the SMS printed; a second attach is 409", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    // The operator's SMS arrived before the operation was recorded: correlation never pairs them.
    const printed = 3_000_000 + seq;
    const id = (await submit(depositText(amount, msisdn, { balanceAfter: printed }), onDialer())).body.results[0]
      .message_id;
    const row = (await unmatched(agent.token)).body.find((e: { id: string }) => e.id === id);
    expect(row).toMatchObject({ sender: "OrangeMoney", sender_is_operator: true, can_prove: true });
    expect(row.cannot_prove_reason).toBeNull();
    const opId = await createDeposit(amount, msisdn, dialer.sim.simId);
    await dial(dialer.device, opId, "ussd_timeout");
    expect((await getOperation(opId)).status).toBe("no_evidence");
    const before = (await sys.api.get(`/v1/sims/${dialer.sim.simId}`, { token: admin.token })).body.balance_mirror;
    expect(before).not.toBe(printed);
    const res = await sys.api.post(`/v1/operations/${opId}/evidence`, {
      token: agent.token,
      body: { evidence_id: id },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operation_id: opId, status: "confirmed" });
    expect(res.body.evidence).toMatchObject({ amount, balance_after: printed });
    expect((await unmatched(agent.token)).body.map((e: { id: string }) => e.id)).not.toContain(id);
    // The attached proof's balance is the SIM's measured balance, as an automatic match's is.
    const sim = (await sys.api.get(`/v1/sims/${dialer.sim.simId}`, { token: admin.token })).body;
    expect(sim.balance_mirror).toBe(printed);
    const again = await sys.api.post(`/v1/operations/${opId}/evidence`, {
      token: agent.token,
      body: { evidence_id: id },
    });
    expect(again.status).toBe(409);
    expect([again.body.code, again.body.context.reason]).toEqual(["conflict", "evidence_already_linked"]);
  });

  it("answers 404 for an unknown operation or evidence (and to an outsider), 409 for a terminal operation, 422 for another SIM", async () => {
    const orphan = (await submit(depositText(uniqueAmount(), customer()))).body.results[0].message_id;
    const attach = (opId: string, evidenceId: string, token = agent.token) =>
      sys.api.post(`/v1/operations/${opId}/evidence`, { token, body: { evidence_id: evidenceId } });
    expect((await attach("00000000-0000-4000-8000-000000000000", orphan)).status).toBe(404);
    const amount = uniqueAmount();
    const msisdn = customer();
    const openOp = await createDeposit(amount, msisdn);
    expect((await attach(openOp, "00000000-0000-4000-8000-000000000000")).status).toBe(404);
    expect((await attach(openOp, orphan, outsider.token)).status).toBe(404);
    // A message on a SIM outside the agent's grant answers as one that does not exist.
    const theirs = (
      await submit(depositText(uniqueAmount(), customer()), { token: other.device.token, simId: other.sim.simId })
    ).body.results[0].message_id;
    const nothing = "00000000-0000-4000-8000-000000000002";
    const hidden = await attach(openOp, theirs);
    const none = await attach(openOp, nothing);
    expect([hidden.status, hidden.body.context.reason]).toEqual([404, "evidence_not_found"]);
    expect(JSON.stringify(hidden.body).replaceAll(theirs, "ID")).toBe(
      JSON.stringify(none.body).replaceAll(nothing, "ID"),
    );
    const otherOp = await createDeposit(uniqueAmount(), customer(), other.sim.simId, outsider.agentId);
    const wrongSim = await attach(otherOp, orphan, admin.token);
    expect([wrongSim.status, wrongSim.body.context.reason]).toEqual([422, "evidence_sim_mismatch"]);
    // The message's SIM is not named: it may be outside the caller's scope.
    expect(JSON.stringify(wrongSim.body)).not.toContain(handset.sim.simId);
    await submit(depositText(amount, msisdn)); // confirms openOp
    expect((await attach(openOp, orphan)).status).toBe(409);
    expect((await attach("nope", orphan)).status).toBe(422);
    const statuses = await statusesFor(
      sys.api,
      creds,
      "POST",
      `/v1/operations/${openOp}/evidence`,
      ["none", "apiKey", "device", "inactive"],
      { evidence_id: orphan },
    );
    expect(statuses).toEqual({ none: 401, apiKey: 403, device: 403, inactive: 403 });
  });

  it("checks that the caller may act on the operation before saying anything of the message", async () => {
    const attach = (opId: string, evidenceId: string, token: string) =>
      sys.api.post(`/v1/operations/${opId}/evidence`, { token, body: { evidence_id: evidenceId } });
    // A message that already proves the agent's operation, and an operation of the outsider's.
    const amount = uniqueAmount();
    const msisdn = customer();
    const provenOp = await createDeposit(amount, msisdn);
    const proof = (await submit(depositText(amount, msisdn))).body.results[0];
    expect([proof.outcome, proof.operation_id]).toEqual(["confirmed", provenOp]);
    const agentsOp = await createDeposit(uniqueAmount(), customer());
    // Outside the caller's scope, an operation that exists answers exactly as one that does not.
    const nobody = "00000000-0000-4000-8000-000000000001";
    for (const evidenceId of [proof.message_id, "00000000-0000-4000-8000-000000000000"]) {
      const res = await attach(agentsOp, evidenceId, outsider.token);
      expect([res.status, res.body.code, res.body.context.reason]).toEqual([404, "not_found", "operation_not_found"]);
      const none = await attach(nobody, evidenceId, outsider.token);
      expect(JSON.stringify(res.body).replaceAll(agentsOp, "ID")).toBe(
        JSON.stringify(none.body).replaceAll(nobody, "ID"),
      );
      expect(res.headers.get("content-length")).toBe(none.headers.get("content-length"));
    }
    // In scope: the 409 says the message is taken, never by which operation.
    const taken = await attach(agentsOp, proof.message_id, supervisor.token);
    expect([taken.status, taken.body.context.reason]).toEqual([409, "evidence_already_linked"]);
    expect(JSON.stringify(taken.body)).not.toContain(provenOp);
  });

  it("proves a no_evidence operation with a late SMS inside the late window", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const opId = await createDeposit(amount, msisdn, dialer.sim.simId);
    await dial(dialer.device, opId, "no_service");
    expect((await getOperation(opId)).status).toBe("no_evidence");
    const res = await submit(depositText(amount, msisdn), onDialer());
    expect(res.body).toMatchObject({ matched: true, outcome: "confirmed" });
    expect((await getOperation(opId)).status).toBe("confirmed");
  });

  it("leaves two same-amount transfers on one SIM to a person (ambiguous), who settles one by attaching", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    // Two transfers of one amount to one customer, both dialled.
    const a = await createDeposit(amount, msisdn, dialer.sim.simId);
    const b = await createDeposit(amount, msisdn, dialer.sim.simId);
    await dial(dialer.device, a);
    await dial(dialer.device, b);
    const res = await submit(depositText(amount, msisdn), onDialer());
    // The SMS fits both: nothing is confirmed.
    expect(res.body).toMatchObject({ matched: false, outcome: "ambiguous" });
    expect(res.body.results[0].is_ambiguous).toBe(true);
    const id = res.body.results[0].message_id;
    const row = (await unmatched(agent.token)).body.find((e: { id: string }) => e.id === id);
    expect(row.is_ambiguous).toBe(true);
    const attached = await sys.api.post(`/v1/operations/${a}/evidence`, {
      token: supervisor.token,
      body: { evidence_id: id },
    });
    expect(attached.status).toBe(200);
    expect((await getOperation(b)).status).not.toBe("confirmed");
  });
});

describe("attach is proof: only a message that could have proved the operation by itself", () => {
  const attach = (opId: string, evidenceId: string, token = agent.token) =>
    sys.api.post(`/v1/operations/${opId}/evidence`, { token, body: { evidence_id: evidenceId } });
  /** A deposit of the dialling handset's SIM, dialled; the SMS offered was stored before it, so never paired. */
  async function dialledDeposit(amount: number, msisdn: string): Promise<string> {
    const opId = await createDeposit(amount, msisdn, dialer.sim.simId);
    await dial(dialer.device, opId);
    return opId;
  }
  const refusedAndUntouched = async (res: Awaited<ReturnType<typeof attach>>, opId: string, reason: string) => {
    expect([res.status, res.body.code, res.body.context.reason]).toEqual([422, "refused", reason]);
    const op = await getOperation(opId);
    expect(op.status).not.toBe("confirmed");
    expect(op.evidence).toBeNull();
  };

  it("refuses an operator refusal (FAIL) attached to a dialled deposit never confirmed", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const text = failure("operator_b", { amount, language: "fr" });
    const fail = (await submit(text, onDialer())).body.results[0];
    const row = (await unmatched(agent.token)).body.find((e: { id: string }) => e.id === fail.message_id);
    expect(row).toMatchObject({
      kind: "FAIL",
      sender_is_operator: true,
      can_prove: false,
      cannot_prove_reason: "kind_cannot_prove",
    });
    const opId = await dialledDeposit(amount, msisdn);
    await refusedAndUntouched(await attach(opId, fail.message_id), opId, "evidence_kind_cannot_prove");
  });

  it("refuses an unknown sender's text, which the queue shows as such and offers to no operation", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const forged = (await submit(depositText(amount, msisdn), { ...onDialer(), sender: "+237670000000" })).body
      .results[0];
    expect(forged.outcome).toBe("unknown_sender");
    const row = (await unmatched(agent.token)).body.find((e: { id: string }) => e.id === forged.message_id);
    expect(row).toMatchObject({
      sender: "+237670000000",
      sender_is_operator: false,
      can_prove: false,
      cannot_prove_reason: "unknown_sender",
    });
    // Every word of it fits a dialled operation: still not the operator's proof.
    const opId = await dialledDeposit(amount, msisdn);
    await refusedAndUntouched(await attach(opId, forged.message_id, supervisor.token), opId, "evidence_unknown_sender");
  });

  it("refuses 777 attached to an operation of 5,000", async () => {
    const msisdn = customer();
    const sms = (await submit(depositText(777, msisdn), onDialer())).body.results[0];
    const opId = await dialledDeposit(5000, msisdn);
    const res = await attach(opId, sms.message_id, admin.token);
    await refusedAndUntouched(res, opId, "evidence_amount_mismatch");
    expect(res.body.context).toMatchObject({ expected_amount: 5000, found_amount: 777 });
  });

  it("refuses a deposit to another number than the operation's", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const elsewhere = `${msisdn.slice(0, -1)}${(Number(msisdn.at(-1)) + 1) % 10}`;
    const sms = (await submit(depositText(amount, elsewhere), onDialer())).body.results[0];
    const opId = await dialledDeposit(amount, msisdn);
    await refusedAndUntouched(await attach(opId, sms.message_id), opId, "evidence_number_mismatch");
  });

  it("refuses the operator's exact deposit attached to an operation never dialled", async () => {
    const amount = uniqueAmount();
    const msisdn = customer();
    const sms = (await submit(depositText(amount, msisdn))).body.results[0];
    expect(sms.outcome).toBe("orphan");
    const opId = await createDeposit(amount, msisdn);
    expect((await getOperation(opId)).status).toBe("queued");
    await refusedAndUntouched(await attach(opId, sms.message_id), opId, "operation_never_dialled");
    expect((await getOperation(opId)).status).toBe("queued");
  });

  it("lists each refusal among the route's documented 422 reasons", async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body;
    const text = JSON.stringify(doc.paths["/v1/operations/{operation_id}/evidence"].post.responses["422"]);
    for (const reason of [
      "evidence_unknown_sender",
      "evidence_kind_cannot_prove",
      "evidence_amount_mismatch",
      "evidence_number_mismatch",
      "operation_never_dialled",
    ])
      expect(text).toContain(reason);
  });
});

describe("events and deletion", () => {
  it("publishes every stored message and link on the messages topic (the outbox drains to Kafka)", async () => {
    await eventually(
      async () => {
        const rows = await sys.db.query(`select count(*)::int as n from evidence.outbox where published_at is null`);
        return rows[0].n === 0 ? true : undefined;
      },
      30_000,
      "the evidence outbox to drain",
    );
    const types = await sys.db.query(`select distinct type from evidence.outbox where topic = 'messages'`);
    expect(types.map((r: { type: string }) => r.type).sort()).toEqual(
      expect.arrayContaining([
        "transferops.evidence.v1.MessageCorrelated",
        "transferops.evidence.v1.MessageDismissed",
        "transferops.evidence.v1.MessageLinked",
        "transferops.evidence.v1.MessageStored",
      ]),
    );
  });

  it("deletes a SIM's evidences and daily reconciliations with the SIM", async () => {
    const extra = await createSim(sys.api, admin.token, {
      operator: "operator_b",
      deviceId: handset.device.deviceId,
      slot: 1,
    });
    await submit(depositText(uniqueAmount(), customer()), { simId: extra.simId });
    const count = async () =>
      (
        await sys.db.query(
          `select (select count(*) from evidence.messages where sim_id = $1) + (select count(*) from evidence.daily_reconciliations where sim_id = $1) as n`,
          [extra.simId],
        )
      )[0].n;
    expect(Number(await count())).toBe(2);
    expect((await sys.api.delete(`/v1/sims/${extra.simId}`, { token: admin.token })).status).toBe(204);
    await eventually(
      async () => (Number(await count()) === 0 ? true : undefined),
      30_000,
      "evidence to delete the SIM's messages",
    );
  });

  it("names every evidence route in the OpenAPI document", async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body;
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((p) =>
      Object.values(p).map((o) => o.operationId),
    );
    expect(ids).toEqual(
      expect.arrayContaining([
        "submitMessages",
        "listUnmatchedEvidence",
        "dismissEvidence",
        "listMovements",
        "attachEvidence",
      ]),
    );
  });
});

describe("journeys with the simulated handset and operator", () => {
  let device: Device;
  let simA: Sim;
  let simB: Sim;
  let network: SimulatedOperator;
  let sms: OperatorSms;
  let phone: SimulatedHandset;
  const FLOAT = 2_000_000;

  beforeAll(async () => {
    const p = await provisionHandset(sys.api, admin.token, {
      operators: ["operator_a", "operator_b"],
      balance: FLOAT,
      label: "Simulated handset",
    });
    device = p.device;
    [simA, simB] = p.sims;
    await grantAccess(sys.api, admin.token, agent.agentId, {
      simIds: [handset.sim.simId, dialer.sim.simId, simA.simId, simB.simId],
      opTypes: ["deposit", "balance"],
    });
    network = new SimulatedOperator();
    network.registerSim(simA.msisdn, "operator_a", { pin: simA.pin, balance: FLOAT });
    network.registerSim(simB.msisdn, "operator_b", { pin: simB.pin, balance: FLOAT });
    sms = new OperatorSms({ baseUrl: sys.url, token: device.token, seed: 42 });
    phone = new SimulatedHandset({
      baseUrl: sys.url,
      token: device.token,
      operator: network,
      onDialled: sms.onDialled,
    });
    await phone.refreshSims(false);
  });

  let n = 0;
  /** A customer of the operator, registered on the network with a name. */
  function customerOf(operator: "operator_a" | "operator_b"): string {
    n += 1;
    const msisdn = `${operator === "operator_a" ? "677" : "699"}${String(100_000 + n * 7919).slice(-6)}`;
    network.registerCustomer(msisdn, ["Jean Dupont", "Marie-Claire Ngo", "Paul Ekane", "Rose Abena"][n % 4]);
    return msisdn;
  }

  async function queue(sim: Sim, amount: number, msisdn: string, typeOp = "deposit"): Promise<string> {
    const res = await sys.api.post("/v1/operations", {
      apiKey: true,
      body: {
        request_id: `sim-${++seq}-${Date.now()}`,
        agent_id: agent.agentId,
        operator: sim.operator,
        client: { msisdn, nom: "Client" },
        montant: amount,
        type_op: typeOp,
        sim_id: sim.simId,
      },
    });
    if (res.status !== 202) throw new Error(`create operation: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.operation_id;
  }

  /** The handset polls until it has dialled the operation (and forwarded the operator's SMS). */
  async function dialled(operationId: string) {
    return eventually(
      async () => {
        const r = await phone.pollOnce();
        return r.operation?.operation_id === operationId ? r : undefined;
      },
      20_000,
      `the handset to dial ${operationId}`,
    );
  }

  const statusOf = async (id: string) => (await getOperation(id)).status as string;
  const mirrorOf = async (sim: Sim) =>
    (await sys.api.get(`/v1/sims/${sim.simId}`, { token: admin.token })).body.balance_mirror;

  it("takes a deposit on each operator from creation to confirmed, with the balance the network reports", async () => {
    for (const sim of [simA, simB]) {
      const amount = uniqueAmount();
      const id = await queue(sim, amount, customerOf(sim.operator));
      const before = sms.deliveries.length;
      const r = await dialled(id);
      expect(r.result?.outcome).toBe("ussd_ok");
      const [delivery] = sms.deliveries.slice(before);
      expect(delivery.status).toBe(200);
      expect(delivery.body).toMatchObject({ matched: true, outcome: "confirmed", kind: "DEP", operation_id: id });
      expect(await statusOf(id)).toBe("confirmed");
      expect(await mirrorOf(sim)).toBe(network.balanceOf(sim.msisdn));
    }
  });

  it("confirms a balance check with the balance reply", async () => {
    const id = await queue(simB, 1, simB.msisdn, "balance");
    await dialled(id);
    expect(sms.deliveries.at(-1)!.body).toMatchObject({ outcome: "confirmed", kind: "BAL" });
    expect(await statusOf(id)).toBe("confirmed");
    expect(await mirrorOf(simB)).toBe(network.balanceOf(simB.msisdn));
  });

  it("answers an SMS the handset sent twice once, and one the network sent twice as a restatement", async () => {
    const first = await queue(simA, uniqueAmount(), customerOf("operator_a"));
    sms.failNext({ kind: "duplicated", by: "handset" });
    const before = sms.deliveries.length;
    await dialled(first);
    const [a, b] = sms.deliveries.slice(before);
    expect(a.body).toMatchObject({ outcome: "confirmed", duplicate: false });
    expect(b.body).toMatchObject({ outcome: "confirmed", duplicate: true, message_id: a.body.message_id });

    const second = await queue(simB, uniqueAmount(), customerOf("operator_b"));
    sms.failNext({ kind: "duplicated", by: "operator", concurrent: true });
    const mark = sms.deliveries.length;
    await dialled(second);
    const outcomes = sms.deliveries
      .slice(mark)
      .map((d) => d.body.outcome)
      .sort();
    expect(outcomes).toEqual(["confirmed", "restated"]);
    for (const d of sms.deliveries.slice(mark)) expect(d.body.operation_id).toBe(second);
  });

  it("pairs reordered SMS with their own operations", async () => {
    const one = await queue(simB, uniqueAmount(), customerOf("operator_b"));
    const two = await queue(simB, uniqueAmount(), customerOf("operator_b"));
    sms.failNext({ kind: "reordered" });
    const mark = sms.deliveries.length;
    await dialled(one);
    await dialled(two);
    const got = sms.deliveries.slice(mark).map((d) => d.body.operation_id);
    expect(got).toEqual([two, one]);
    expect([await statusOf(one), await statusOf(two)]).toEqual(["confirmed", "confirmed"]);
  });

  it("confirms with late evidence: the SMS arrives after the evidence window, inside the late window", async () => {
    const id = await queue(simA, uniqueAmount(), customerOf("operator_a"));
    sms.failNext({ kind: "delayed" });
    await dialled(id);
    expect(await statusOf(id)).toBe("awaiting_evidence");
    await eventually(
      async () => ((await statusOf(id)) === "no_evidence" ? true : undefined),
      20_000,
      "the sweep to close the window",
    );
    const unproven = await sys.api.get("/v1/operations/unproven?all=true", { token: agent.token });
    expect(unproven.body.find((u: { operation_id: string }) => u.operation_id === id)).toMatchObject({
      self_resolving: true,
    });
    const [late] = await sms.releaseDelayed();
    expect(late.body).toMatchObject({ matched: true, outcome: "confirmed", operation_id: id });
    expect(await statusOf(id)).toBe("confirmed");
  });

  it("leaves a lost SMS's operation to arbitration, and noise confirms nothing", async () => {
    const id = await queue(simB, uniqueAmount(), customerOf("operator_b"));
    sms.failNext({ kind: "lost" });
    await dialled(id);
    const noise = await sms.batch([
      sms.promotionSms(simB.simId, "operator_b"),
      sms.movement(simB.simId, "operator_b"),
      sms.promotionSms(simB.simId, "operator_b"),
    ]);
    expect(noise.map((d) => d.body.outcome)).toEqual(["stored", "movement", "stored"]);
    await eventually(
      async () => ((await statusOf(id)) === "no_evidence" ? true : undefined),
      20_000,
      "the sweep to close the window",
    );
    const arbitrated = await sys.api.post(`/v1/admin/operations/${id}/arbitrate`, {
      token: admin.token,
      body: { decision: "failed", note: "Customer says nothing arrived" },
    });
    expect(arbitrated.status).toBe(200);
    expect(arbitrated.body.status).toBe("failed");
    const moves = await sys.api.get("/v1/evidences/movements?all=true", { token: agent.token });
    expect(moves.body.map((m: { id: string }) => m.id)).toContain(noise[1].body.message_id);
  });

  it("gives each of two same-amount transfers on one SIM its own message: the one dialled takes it, not the one still queued", async () => {
    const amount = uniqueAmount();
    const [c1, c2] = [customerOf("operator_b"), customerOf("operator_b")];
    const first = await queue(simB, amount, c1);
    const second = await queue(simB, amount, c2);
    const mark = sms.deliveries.length;
    // The first's message arrives while the second, same amount, is still queued (never dialled).
    await dialled(first);
    await dialled(second);
    const ds = sms.deliveries.slice(mark);
    expect(ds.map((d) => [d.body.outcome, d.body.operation?.operation_id])).toEqual([
      ["confirmed", first],
      ["confirmed", second],
    ]);
    expect([await statusOf(first), await statusOf(second)]).toEqual(["confirmed", "confirmed"]);
  });

  it("keeps a deposit dialled by hand as an orphan until the agent attaches it to the matching operation", async () => {
    const msisdn = customerOf("operator_b");
    const amount = uniqueAmount();
    // The agent dials on the handset by hand: no operation exists, the network still sends its SMS.
    const session = network.open(simB.msisdn, "#148*2#");
    session.reply(String(amount));
    session.reply(msisdn);
    const screen = session.reply(simB.pin);
    expect(screen.receipt?.kind).toBe("deposit");
    const handDial = {
      ...sms.smsFor({ operation_id: "", sim_id: simB.simId, operator: "operator_b" } as never, {
        outcome: "ussd_ok",
        ussd_response: screen.text,
        failure_detail: null,
        receipt: screen.receipt,
        executed_at: new Date(),
      })[0],
    };
    const [orphan] = await sms.deliver(handDial);
    expect(orphan.body).toMatchObject({ matched: false, outcome: "orphan" });
    // Recorded afterwards: the SMS predates it, so correlation never pairs them on its own.
    const matching = await sys.api.post("/v1/operations/matching", {
      token: agent.token,
      body: { beneficiary_msisdn: msisdn, montant: amount, sim_id: simB.simId },
    });
    expect(matching.status).toBe(201);
    const attached = await sys.api.post(`/v1/operations/${matching.body.operation_id}/evidence`, {
      token: agent.token,
      body: { evidence_id: orphan.body.message_id },
    });
    expect(attached.status).toBe(200);
    expect(attached.body.status).toBe("confirmed");
  });
});

// Last: the reset wipes what every test above stored.
describe("reset production data", () => {
  it("deletes every evidence and daily reconciliation through fleet's reset orchestration", async () => {
    const before = await sys.db.query(`select count(*)::int as n from evidence.messages`);
    expect(before[0].n).toBeGreaterThan(0);
    const res = await sys.api.post("/v1/admin/reset", {
      token: admin.token,
      body: { confirm: "RESET SERVICE PRODUCTION DATA" },
    });
    expect(res.status).toBe(200);
    expect(res.body.deleted).toMatchObject({ evidences: before[0].n });
    expect(res.body.deleted.daily_reconciliations).toBeGreaterThan(0);
    const after = await sys.db.query(
      `select (select count(*) from evidence.messages)::int as m, (select count(*) from evidence.daily_reconciliations)::int as d`,
    );
    expect(after[0]).toEqual({ m: 0, d: 0 });
  });
});
