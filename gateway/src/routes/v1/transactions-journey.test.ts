import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, provisionHandset, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";
import { SimulatedHandset, SimulatedOperator } from "../../../../test/simulator/index.ts";
import { OperatorSms } from "../../../../test/simulator/operator-sms.ts";

// The whole life of an intake transaction, end to end: the automation caller records it,
// an agent confirms the payment and launches it, the simulated handset polls, dials
// against the simulated operator and reports, the operator's SMS proves the transfer,
// and dispatch's confirmation reaches intake over Kafka: the transaction is done.

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
});
