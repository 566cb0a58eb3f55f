import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, provisionHandset, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";
import { SimulatedHandset, SimulatedOperator } from "../../../../test/simulator/index.ts";
import { OperatorSms } from "../../../../test/simulator/operator-sms.ts";
import { depositConfirmation } from "../../../../services/evidence/src/domain/sms-templates.ts";

// The whole life of an intake transaction, end to end: the automation caller records it,
// an agent confirms the payment and launches it, the simulated handset polls, dials
// against the simulated operator and reports, the operator's SMS proves the transfer,
// and dispatch's confirmation reaches intake over Kafka: the transaction is done. A launch
// left unproven is settled again when an agent attaches the operator's SMS to its operation.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let device: Device;
let sim: Sim;
let operator: SimulatedOperator;
let handset: SimulatedHandset;

const START_BALANCE = 500_000;

beforeAll(async () => {
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  admin = await sys.api.bootstrapAdmin();
  agent = await sys.api.createAgent(admin.token, { login: "intake-journey", full_name: "Ines Intake" });
  const provisioned = await provisionHandset(sys.api, admin.token, {
    operators: ["operator_b"],
    balance: START_BALANCE,
    label: "Intake journey handset",
  });
  device = provisioned.device;
  sim = provisioned.sims[0]!;
  await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sim.simId] });
  operator = new SimulatedOperator();
  operator.registerSim(sim.msisdn, "operator_b", { pin: sim.pin, balance: START_BALANCE });
  operator.registerCustomer("690222333", "Paul Biya Essomba");
  const sms = new OperatorSms({ baseUrl: sys.url, token: device.token, seed: 11 });
  handset = new SimulatedHandset({
    baseUrl: sys.url,
    token: device.token,
    operator,
    onDialled: (op, result) => sms.onDialled(op, result),
  });
  await handset.refreshSims(false);
}, 120_000);
afterAll(async () => {
  await sys?.stop();
});

describe("an intake transaction from intake to settlement", () => {
  it("intake → confirm payment → launch → handset poll and dial → operator SMS proof → done", async () => {
    const created = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: {
        request_id: `journey-${randomUUID()}`,
        contact_id: "contact-journey",
        customer_name: "Claire Martin",
        receiver_name: "Paul Biya Essomba",
        receiver_phone: "+237 690 222 333",
        operator: "operator_b",
        received_amount_xaf: 12_500,
        rate: 655.957,
        send_amount_eur: 19.06,
        partner_verify: false,
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;

    expect((await sys.api.post(`/v1/transactions/${id}/launch`, { token: agent.token })).status).toBe(422);
    const confirmed = await sys.api.post(`/v1/transactions/${id}/payment-confirmation`, { token: agent.token });
    expect(confirmed.status).toBe(200);
    const launched = await sys.api.post(`/v1/transactions/${id}/launch`, { token: agent.token });
    expect(launched.status).toBe(200);
    const operationId = launched.body.operation_id;

    const polled = await handset.pollOnce();
    expect(polled.status).toBe(200);
    expect(polled.operation).toMatchObject({ operation_id: operationId, montant: 12_500 });
    expect(polled.result!.outcome).toBe("ussd_ok");
    expect(polled.report!.status).toBe(200);

    const done = await eventually(
      async () => {
        const t = (await sys.api.get(`/v1/transactions/${id}`, { token: agent.token })).body;
        return t.state === "done" ? t : undefined;
      },
      30_000,
      "the transaction to be settled",
    );
    expect(done).toMatchObject({
      operation_id: operationId,
      outcome: "confirmed",
      settled_by: "system",
      settled_by_name: "System",
      launched_by: agent.agentId,
      launched_by_name: "Ines Intake",
    });
    expect(Date.parse(done.settled_at)).toBeGreaterThanOrEqual(Date.parse(done.launched_at));
    const op = await sys.api.get(`/v1/operations/${operationId}`, { token: agent.token });
    expect(op.body).toMatchObject({ status: "confirmed", request_id: `tx-${id}`, msisdn_dest: "690222333" });
    expect(op.body.evidence).not.toBeNull();
    expect(operator.balanceOf("690222333")).toBe(12_500);
    // The SIM paid the amount (and the operator's fee).
    expect(operator.balanceOf(sim.msisdn)).toBeLessThanOrEqual(START_BALANCE - 12_500);
  });

  it("launch → handset timeout (no_evidence) → orphan SMS on the SIM attached by the agent → done, confirmed", async () => {
    const created = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: {
        request_id: `journey-attach-${randomUUID()}`,
        contact_id: "contact-journey",
        customer_name: "Claire Martin",
        receiver_name: "Paul Biya Essomba",
        receiver_phone: "+237 690 222 333",
        operator: "operator_b",
        received_amount_xaf: 7_300,
        rate: 655.957,
        send_amount_eur: 11.13,
        partner_verify: false,
      },
    });
    expect(created.status).toBe(201);
    const id = created.body.id;
    expect((await sys.api.post(`/v1/transactions/${id}/payment-confirmation`, { token: agent.token })).status).toBe(
      200,
    );
    const launched = await sys.api.post(`/v1/transactions/${id}/launch`, { token: agent.token });
    expect(launched.status).toBe(200);
    const operationId = launched.body.operation_id;

    // The handset dials but the operator never answers: the operation is left unproven.
    const next = await sys.api.nextWork(device.token);
    expect(next.body.operation_id).toBe(operationId);
    const reported = await sys.api.post("/v1/device/outcome", {
      token: device.token,
      body: {
        operation_id: operationId,
        outcome: "ussd_timeout",
        ussd_response: "Transaction en cours",
        executed_at: new Date().toISOString(),
      },
    });
    expect(reported.status).toBe(200);
    const unproven = await eventually(
      async () => {
        const t = (await sys.api.get(`/v1/transactions/${id}`, { token: agent.token })).body;
        return t.state === "done" && t.outcome === "no_evidence" ? t : undefined;
      },
      30_000,
      "the transaction to be settled as no_evidence",
    );
    expect(unproven.settled_by).toBe("system");

    // The operator's SMS, which the handset says it received before the operation was recorded
    // (its clock), so correlation keeps it as an orphan on the SIM; a person attaches it.
    const sms = await sys.api.post("/v1/device/messages", {
      token: device.token,
      body: {
        sim_id: sim.simId,
        subscription_slot: 0,
        messages: [
          {
            sender: "OrangeMoney",
            raw: depositConfirmation("operator_b", {
              amount: 7_300,
              balanceAfter: START_BALANCE - 7_300,
              ref: "CI261122.0731.B07301",
              msisdn: "690222333",
              name: "PAUL BIYA ESSOMBA",
              at: new Date(),
              language: "fr",
            }),
            received_at: new Date().toISOString(),
            device_received_at: new Date(Date.now() - 10 * 60_000).toISOString(),
          },
        ],
      },
    });
    expect(sms.status).toBe(200);
    expect(sms.body.outcome).toBe("orphan");
    const attached = await sys.api.post(`/v1/operations/${operationId}/evidence`, {
      token: agent.token,
      body: { evidence_id: sms.body.results[0].message_id },
    });
    expect(attached.status).toBe(200);
    expect(attached.body).toMatchObject({ operation_id: operationId, status: "confirmed" });

    const done = await eventually(
      async () => {
        const t = (await sys.api.get(`/v1/transactions/${id}`, { token: agent.token })).body;
        return t.outcome === "confirmed" ? t : undefined;
      },
      30_000,
      "the attach to settle the transaction as confirmed",
    );
    expect(done).toMatchObject({
      state: "done",
      operation_id: operationId,
      outcome: "confirmed",
      settled_by: agent.agentId,
      settled_by_name: "Ines Intake",
    });
    expect(Date.parse(done.settled_at)).toBeGreaterThanOrEqual(Date.parse(unproven.settled_at));
  });
});
