import { randomUUID } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, KafkaBus, type Subscription } from "@transferops/kit";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import { OperationChangedSchema, OperationFailedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";
import { handsetWorld } from "../../../../test/support/handset-world.ts";
import {
  SimulatedHandset,
  SimulatedOperator,
  type DialResult,
  type DispatchPayload,
  type FailureMode,
} from "../../../../test/simulator/index.ts";
import { OperatorSms } from "../../../../test/simulator/operator-sms.ts";
import { TEST_PIN as PIN_B } from "../../../../test/support/constants.ts";

// End-to-end journeys: the handset simulator polls the gateway, dials against the
// simulated operator, reports outcomes; operations go through gateway, dispatch, fleet,
// evidence, PostgreSQL and the real Kafka broker.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let handsetDevice: Device;
let simB: Sim;
let simA: Sim;
let operator: SimulatedOperator;
let handset: SimulatedHandset;
let sms: OperatorSms;
/** Whether the network's SMS reach the service (off: the transfer stays unproven). */
let smsOn = true;
let kafka: KafkaBus;
let subscription: Subscription;
const seen: { type: string; key: string; value: Uint8Array }[] = [];

const PIN_A = "28461937";
const START_BALANCE = 500_000;

beforeAll(async () => {
  sys = await startTestSystem({
    DEVICE_COOLDOWN_S: "0",
    EVIDENCE_WINDOW_S: "2",
    LATE_EVIDENCE_S: "3600",
    SWEEP_INTERVAL_S: "0.5",
  });
  admin = await sys.api.bootstrapAdmin();
  agent = await sys.api.createAgent(admin.token, { login: "journey-agent", full_name: "Jules Journey" });
  ({
    device: handsetDevice,
    sims: [simB, simA],
    operator,
    handset,
    sms,
  } = await handsetWorld(sys.api, sys.url, admin.token, {
    label: "Journey handset",
    sims: [
      { operator: "operator_b", pin: PIN_B },
      { operator: "operator_a", pin: PIN_A },
    ],
    balance: START_BALANCE,
    customers: { "690111222": "Marie-Claire Ngo", "670111222": "Jean Dupont" },
    seed: 7,
    smsOn: () => smsOn,
  }));
  await grantAccess(sys.api, admin.token, agent.agentId, {
    simIds: [simB.simId, simA.simId],
    opTypes: ["deposit", "balance", "withdrawal"],
  });

  kafka = new KafkaBus({
    brokers: sys.env.KAFKA_BROKERS.split(","),
    clientId: "journeys",
    prefix: sys.topicPrefix,
    log: createLogger("journeys", { level: "silent" }),
  });
  subscription = await kafka.subscribe(`journeys-${randomUUID()}`, ["operations", "alerts"], async (m) => {
    seen.push({ type: m.headers["event-type"], key: m.key, value: m.value });
  });
});
afterAll(async () => {
  await subscription?.close();
  await kafka?.close();
  await sys?.stop();
});

async function create(o: Record<string, unknown> = {}): Promise<string> {
  const res = await sys.api.post("/v1/operations", {
    apiKey: true,
    body: {
      request_id: randomUUID(),
      agent_id: agent.agentId,
      operator: "operator_b",
      client: { msisdn: "690111222", nom: "Marie-Claire Ngo" },
      montant: 5000,
      ...o,
    },
  });
  expect(res.status).toBe(202);
  return res.body.operation_id;
}

const get = async (id: string) => (await sys.api.get(`/v1/operations/${id}`, { token: admin.token })).body;
const until = (id: string, status: string) =>
  eventually(
    async () => {
      const op = await get(id);
      return op.status === status ? op : undefined;
    },
    20_000,
    `operation ${id} ${status}`,
  );

/** Polls until the handset claims and dials `id` (other work first, if any). */
async function dial(
  id: string,
  failure?: FailureMode,
): Promise<{ operation: DispatchPayload; result: DialResult; report: { status: number; body: any } }> {
  if (failure) handset.failNext(id, failure);
  return eventually(
    async () => {
      const r = await handset.pollOnce();
      return r.operation?.operation_id === id
        ? { operation: r.operation, result: r.result!, report: r.report! }
        : undefined;
    },
    20_000,
    `the handset to dial ${id}`,
  );
}

const changesOf = (id: string) =>
  seen
    .filter((e) => e.key === id && e.type.endsWith(".OperationChanged"))
    .map((e) => fromBinary(OperationChangedSchema, e.value).trigger);

describe("journeys with the simulated handset and operator", () => {
  it("a deposit: queued, claimed with the contract's payload, dialled with the PIN, confirmed by the operator's SMS", async () => {
    smsOn = true;
    const id = await create();
    const { operation, result, report } = await dial(id);
    expect(Object.keys(operation).sort()).toEqual(
      [
        "operation_id",
        "sim_id",
        "subscription_slot",
        "ussd_string",
        "ussd_steps",
        "expected_sender",
        "timeout_seconds",
        "montant",
        "op_type",
        "partner_verified",
        "dest_name",
        "msisdn_dest",
        "operator",
      ].sort(),
    );
    expect(operation).toMatchObject({
      sim_id: simB.simId,
      subscription_slot: 0,
      op_type: "deposit",
      montant: 5000,
      dest_name: "Marie-Claire Ngo",
      partner_verified: true,
    });
    expect(operation.ussd_steps.at(-1)).toBe(PIN_B);
    expect([result.outcome, report.status, report.body.status]).toEqual(["ussd_ok", 200, "awaiting_evidence"]);
    expect(operator.balanceOf("690111222")).toBeGreaterThanOrEqual(5000);
    const confirmed = await until(id, "confirmed");
    expect(confirmed.evidence).toMatchObject({ amount: 5000, kind: "DEP", is_ambiguous: false });
    expect(confirmed.evidence.balance_after).toBe(operator.balanceOf(simB.msisdn));
    await eventually(async () => (changesOf(id).includes("proof") ? true : undefined), 20_000, "the events on Kafka");
    expect(changesOf(id)).toEqual(["create", "claim", "outcome", "proof"]);
    expect(seen.some((e) => e.key === id && e.type.endsWith(".OperationConfirmed"))).toBe(true);
    const claimed = await sys.api.get("/v1/device/operations?limit=5", { token: handsetDevice.token });
    expect(claimed.body.find((o: { operation_id: string }) => o.operation_id === id)).toMatchObject({
      status: "confirmed",
      sms_kind: "DEP",
      sim_slot: 0,
    });
  });

  it("a transfer whose SMS never comes: awaiting_evidence, swept to no_evidence, in the arbitration queue, settled as arrived", async () => {
    smsOn = false;
    const id = await create({ montant: 5100 });
    const { report } = await dial(id);
    expect(report.body.status).toBe("awaiting_evidence");
    expect(Date.parse(report.body.evidence_expires_at) - Date.now()).toBeLessThanOrEqual(2000);
    await until(id, "no_evidence");
    const queue = await sys.api.get("/v1/operations/unproven", { token: agent.token });
    const row = queue.body.find((r: { operation_id: string }) => r.operation_id === id);
    expect(row).toMatchObject({
      op_type: "deposit",
      montant: 5100,
      sim_id: simB.simId,
      self_resolving: true,
      evidence_count: 0,
      status: "no_evidence",
      contradicting_message_id: null,
    });
    expect(Object.keys(row).sort()).toEqual(
      [
        "operation_id",
        "request_id",
        "sim_id",
        "device_id",
        "op_type",
        "montant",
        "msisdn_dest",
        "dest_name",
        "contact_id",
        "finished_at",
        "ussd_response",
        "evidence_count",
        "self_resolving",
        "status",
        "contradicting_message_id",
      ].sort(),
    );
    const settled = await sys.api.post(`/v1/operations/${id}/settle`, {
      token: agent.token,
      body: { outcome: "arrived", note: "Customer confirmed" },
    });
    expect([settled.status, settled.body.status]).toEqual([200, "confirmed"]);
    const word = await sys.api.get("/v1/operations/settled-on-word", { token: agent.token });
    expect(word.body.find((r: { operation_id: string }) => r.operation_id === id)).toMatchObject({
      arbitrated_by_name: "Jules Journey",
      arbitration_note: "Customer confirmed",
    });
    await eventually(async () => (changesOf(id).includes("settle") ? true : undefined), 20_000, "the settle event");
    expect(changesOf(id)).toEqual(["create", "claim", "outcome", "sweep", "settle"]);
  });

  it("a transfer swept to no_evidence and arbitrated as failed by an admin", async () => {
    smsOn = false;
    const id = await create({ montant: 5200 });
    await dial(id);
    await until(id, "no_evidence");
    const res = await sys.api.post(`/v1/admin/operations/${id}/arbitrate`, {
      token: admin.token,
      body: { decision: "failed", note: "Operator statement shows nothing" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: "failed", retry_allowed: true, retry_requires_confirmation: false });
    const failed = await eventually(
      async () => seen.find((e) => e.key === id && e.type.endsWith(".OperationFailed")),
      20_000,
      "operation.failed",
    );
    expect(fromBinary(OperationFailedSchema, failed.value).reason).toBe("arbitrated_failed");
  });

  it.each<[string, FailureMode | undefined, Record<string, unknown>, string, string | RegExp, boolean]>([
    [
      "ussd_failed (failure_reason falls back to the outcome)",
      { outcome: "ussd_failed" },
      {},
      "failed",
      "ussd_failed",
      false,
    ],
    ["no_service", { outcome: "no_service" }, {}, "no_evidence", "no_service", false],
    ["ussd_timeout before the PIN", { outcome: "ussd_timeout" }, {}, "no_evidence", "ussd_timeout", false],
    ["ussd_unconfirmed", { outcome: "ussd_unconfirmed" }, {}, "awaiting_evidence", "", true],
    [
      "name_mismatch (the network shows another name)",
      undefined,
      { partner_verified: false, client: { msisdn: "690111222", nom: "Paul Biya" } },
      "failed",
      /Marie-Claire Ngo/,
      false,
    ],
  ])(
    "%s: the handset reports it and the operation follows the contract",
    async (_what, failure, body, status, reason, moved) => {
      smsOn = false;
      const before = operator.balanceOf(simB.msisdn);
      const id = await create({ montant: 5300, ...body });
      const { report } = await dial(id, failure);
      expect(report.body.status).toBe(status);
      const op = await get(id);
      expect(op.status === status || (status === "awaiting_evidence" && op.status === "no_evidence")).toBe(true);
      if (reason)
        expect(op.failure_reason).toEqual(typeof reason === "string" ? reason : expect.stringMatching(reason));
      expect(operator.balanceOf(simB.msisdn) < before).toBe(moved);
    },
  );

  it("sim_absent: failed, and an alert reaches Kafka", async () => {
    smsOn = false;
    const id = await create({ montant: 5400 });
    const { report } = await dial(id, { outcome: "sim_absent" });
    expect(report.body.status).toBe("failed");
    const alert = await eventually(
      async () =>
        seen.find((e) => e.type.endsWith(".AlertRaised") && fromBinary(AlertRaisedSchema, e.value).operationId === id),
      20_000,
      "the sim_absent alert",
    );
    expect(fromBinary(AlertRaisedSchema, alert.value)).toMatchObject({
      kind: "sim_absent",
      simId: simB.simId,
      deviceId: handsetDevice.deviceId,
    });
  });

  it("cancel: a queued operation is never dialled; one cancelled mid-dial stays rejected when the handset reports", async () => {
    smsOn = false;
    const queued = await create({ montant: 5500 });
    const cancelled = await sys.api.post(`/v1/operations/${queued}/cancel`, { token: agent.token });
    expect([cancelled.status, cancelled.body.reject_reason]).toEqual([200, "Cancelled by Jules Journey."]);
    expect((await handset.pollOnce()).status).toBe(204);
    const running = await create({ montant: 5600 });
    const polled = await sys.api.nextWork(handsetDevice.token);
    expect([polled.status, polled.body.operation_id]).toEqual([200, running]);
    expect((await sys.api.get("/v1/device/next", { token: handsetDevice.token })).status).toBe(409);
    expect((await sys.api.post(`/v1/operations/${running}/cancel`, { token: agent.token })).body.status).toBe(
      "rejected",
    );
    const result = await handset.dial(polled.body);
    const report = await handset.report(polled.body, result);
    expect([report.status, report.body.status]).toEqual([200, "rejected"]);
    expect((await get(running)).ussd_response).toBe(result.ussd_response);
  });

  it("a balance check on operator_b: one dial string carrying the PIN, confirmed by the balance reply", async () => {
    smsOn = true;
    const id = await create({ type_op: "balance", montant: 1, client: { msisdn: simB.msisdn, nom: "Balance" } });
    const { operation, result } = await dial(id);
    expect(operation.ussd_steps).toEqual([`#148*5*${PIN_B}#`]);
    expect(operation.partner_verified).toBe(false);
    expect(result.outcome).toBe("ussd_ok");
    const confirmed = await until(id, "confirmed");
    expect(confirmed.evidence).toMatchObject({ kind: "BAL", amount: operator.balanceOf(simB.msisdn) });
  });

  it("a deposit on operator_a, with the name checked before the PIN", async () => {
    smsOn = true;
    const id = await create({
      operator: "operator_a",
      client: { msisdn: "670111222", nom: "jean dupont" },
      partner_verified: false,
      montant: 7000,
    });
    const { operation, result } = await dial(id);
    expect([operation.sim_id, operation.subscription_slot, operation.ussd_steps[0]]).toEqual([simA.simId, 1, "*126#"]);
    expect(result.outcome).toBe("ussd_ok");
    await until(id, "confirmed");
  });

  it("a matching operation: recorded on the board, never dialled by the handset, dialled by hand and proven by the SMS", async () => {
    smsOn = true;
    const created = await sys.api.post("/v1/operations/matching", {
      token: agent.token,
      body: { beneficiary_msisdn: "690111222", montant: 8100, contact_id: "c-77" },
    });
    expect([created.status, created.body.status, created.body.origin]).toEqual([
      201,
      "awaiting_manual_dial",
      "matching",
    ]);
    const id = created.body.operation_id;
    expect((await handset.pollOnce()).status).toBe(204);
    const edited = await sys.api.patch(`/v1/operations/matching/${id}`, {
      token: agent.token,
      body: { montant: 8200 },
    });
    expect(edited.body.montant).toBe(8200);
    const listed = await sys.api.get("/v1/operations/matching", { token: agent.token });
    expect(listed.body.map((o: { operation_id: string }) => o.operation_id)).toContain(id);
    // The agent dials by hand on the SIM's phone; the network then sends its SMS.
    const session = operator.open(simB.msisdn, "#148*2#");
    session.reply("8200");
    session.reply("690111222");
    const screen = session.reply(PIN_B);
    expect(screen.receipt?.amount).toBe(8200);
    const byHand: DispatchPayload = {
      ...edited.body,
      operation_id: id,
      sim_id: simB.simId,
      operator: "operator_b",
      op_type: "deposit",
      montant: 8200,
    } as DispatchPayload;
    await sms.onDialled(byHand, {
      outcome: "ussd_ok",
      ussd_response: screen.text,
      failure_detail: null,
      receipt: screen.receipt,
      executed_at: new Date(),
    });
    const confirmed = await until(id, "confirmed");
    expect(confirmed).toMatchObject({ contact_id: "c-77", evidence: { amount: 8200 } });
    const late = await sys.api.post(`/v1/operations/matching/${id}/cancel`, { token: agent.token });
    expect([late.status, late.body.code]).toEqual([409, "operation_not_cancellable"]);
  });

  it("a handset frozen by the circuit breaker gets no work until the breaker is lifted", async () => {
    smsOn = false;
    const id = await create({ montant: 5700 });
    expect(
      (await sys.api.put("/v1/admin/circuit-breaker", { token: admin.token, body: { active: true } })).status,
    ).toBe(200);
    try {
      const refused = await sys.api.post("/v1/operations", {
        apiKey: true,
        body: {
          request_id: randomUUID(),
          agent_id: agent.agentId,
          operator: "operator_b",
          client: { msisdn: "690111222", nom: "X" },
          montant: 100,
        },
      });
      expect([refused.status, refused.body.detail]).toEqual([423, "circuit_breaker"]);
      await eventually(
        async () =>
          (await sys.db.query(`select 1 from dispatch.devices where device_id = $1`, [handsetDevice.deviceId])).length
            ? true
            : undefined,
        20_000,
        "the freeze to reach dispatch",
      );
      expect((await handset.pollOnce()).status).toBe(204);
      expect((await get(id)).status).toBe("queued");
    } finally {
      expect((await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token })).status).toBe(200);
    }
    await dial(id);
    expect((await get(id)).status).not.toBe("queued");
  });

  it("never writes a PIN to a log line", () => {
    const logs = sys.logs.join("\n");
    expect(logs).not.toContain(PIN_B);
    expect(logs).not.toContain(PIN_A);
  });
});
