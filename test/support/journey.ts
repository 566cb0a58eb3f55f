// One transfer from end to end through the gateway: the first admin is bootstrapped, a handset
// with one operator_b SIM (balance, access grant) is provisioned, automation creates a deposit,
// the simulated handset polls, dials and reports, the simulated operator's SMS proves it, and
// the operation ends confirmed. Used by the container image smoke and the metrics test; no
// vitest import, so it runs outside the test runner too.
import { randomUUID } from "node:crypto";
import { Api } from "./api.ts";
import { eventually } from "./eventually.ts";
import { createSim, grantAccess, recordBalance, registerDevice } from "./fleet-fixtures.ts";
import { OperatorSms } from "../simulator/operator-sms.ts";
import { SimulatedHandset, SimulatedOperator } from "../simulator/index.ts";
import { TEST_PIN } from "./constants.ts";

export interface Journey {
  operationId: string;
  deviceId: string;
  adminToken: string;
  /** The agent whose grant covers the journey's SIM (operations for that handset). */
  agentId: string;
  /** The outcome the handset reported and the status the gateway answered. */
  dial: { outcome: string; reportStatus: number; status: string };
  /** The gateway's answers to the forwarded SMS. */
  smsStatuses: number[];
  /** The confirmed operation as GET /v1/operations/{id} returns it. */
  confirmed: { status: string; evidence: { amount: number; balance_after: number } };
  simBalanceAtOperator: number;
}

export async function runTransferJourney(url: string, say: (s: string) => void = () => undefined): Promise<Journey> {
  const api = new Api(url);
  const admin = await api.bootstrapAdmin();
  const agent = await api.createAgent(admin.token, { login: "journey-agent", full_name: "Journey Agent" });
  const device = await registerDevice(api, admin.token, "Journey handset");
  const sim = await createSim(api, admin.token, {
    operator: "operator_b",
    pin: TEST_PIN,
    deviceId: device.deviceId,
    slot: 0,
  });
  await recordBalance(api, sim.simId, 500_000);
  await grantAccess(api, admin.token, agent.agentId, { simIds: [sim.simId], opTypes: ["deposit"] });
  say("bootstrapped: admin, agent, handset, SIM with balance, access grant");

  const operator = new SimulatedOperator();
  operator.registerSim(sim.msisdn, "operator_b", { pin: TEST_PIN, balance: 500_000 });
  operator.registerCustomer("690111222", "Marie-Claire Ngo");
  const sms = new OperatorSms({ baseUrl: url, token: device.token, seed: 7 });
  const handset = new SimulatedHandset({ baseUrl: url, token: device.token, operator, onDialled: sms.onDialled });
  await handset.refreshSims(false);

  const created = await api.post("/v1/operations", {
    apiKey: true,
    body: {
      request_id: randomUUID(),
      agent_id: agent.agentId,
      operator: "operator_b",
      client: { msisdn: "690111222", nom: "Marie-Claire Ngo" },
      montant: 5000,
    },
  });
  if (created.status !== 202) throw new Error(`create operation: ${created.status} ${JSON.stringify(created.body)}`);
  const operationId = created.body.operation_id as string;
  say(`operation ${operationId} created`);

  const polled = await eventually(
    async () => {
      const r = await handset.pollOnce();
      return r.operation?.operation_id === operationId ? r : undefined;
    },
    20_000,
    "the handset to claim the operation",
  );
  const dial = {
    outcome: polled.result?.outcome ?? "",
    reportStatus: polled.report?.status ?? 0,
    status: polled.report?.body?.status ?? "",
  };
  say(`handset polled, dialled (${dial.outcome}) and reported (${dial.reportStatus}): ${dial.status}`);
  const smsStatuses = sms.deliveries.map((d) => d.status);
  say(`operator SMS forwarded: ${smsStatuses.join(", ")}`);

  const confirmed = await eventually(
    async () => {
      const op = (await api.get(`/v1/operations/${operationId}`, { token: admin.token })).body;
      return op.status === "confirmed" ? op : undefined;
    },
    20_000,
    "the operation confirmed",
  );
  say(`operation confirmed by the SMS proof (balance after ${confirmed.evidence?.balance_after})`);
  return {
    operationId,
    deviceId: device.deviceId,
    adminToken: admin.token,
    agentId: agent.agentId,
    dial,
    smsStatuses,
    confirmed,
    simBalanceAtOperator: operator.balanceOf(sim.msisdn),
  };
}
