// The board's world on a fresh system: an admin, two agents each with a handset and an
// operator_b SIM of their own (balance measured, access granted), and the simulated
// operator and handset behind Alice's SIM. Used by the end-to-end test and the screenshots.
import { randomUUID } from "node:crypto";
import { Api } from "../../../test/support/api.ts";
import { eventually } from "../../../test/support/eventually.ts";
import { grantAccess, provisionHandset, type Device, type Sim } from "../../../test/support/fleet-fixtures.ts";
import { SimulatedHandset, SimulatedOperator } from "../../../test/simulator/index.ts";
import { OperatorSms } from "../../../test/simulator/operator-sms.ts";
import { depositConfirmation } from "../../../services/evidence/src/domain/sms-templates.ts";

export interface Agent {
  login: string;
  password: string;
  agentId: string;
  token: string;
  device: Device;
  sim: Sim;
}

export interface BoardWorld {
  api: Api;
  adminToken: string;
  alice: Agent;
  bob: Agent;
  operator: SimulatedOperator;
  /** Alice's handset, dialling against the simulated operator, its SMS forwarded. */
  handset: SimulatedHandset;
}

const START_BALANCE = 500_000;
export const ADMIN_LOGIN = "root";
export const ADMIN_PASSWORD = "root-password-1";

async function agentWithHandset(api: Api, adminToken: string, login: string, fullName: string): Promise<Agent> {
  const agent = await api.createAgent(adminToken, { login, full_name: fullName });
  const { device, sims } = await provisionHandset(api, adminToken, {
    operators: ["operator_b"],
    balance: START_BALANCE,
    label: `${fullName}'s handset`,
  });
  await grantAccess(api, adminToken, agent.agentId, { simIds: [sims[0]!.simId] });
  return { login, password: agent.password, agentId: agent.agentId, token: agent.token, device, sim: sims[0]! };
}

export async function seedWorld(url: string): Promise<BoardWorld> {
  const api = new Api(url);
  const admin = await api.bootstrapAdmin(ADMIN_LOGIN, ADMIN_PASSWORD);
  const alice = await agentWithHandset(api, admin.token, "alice", "Alice Mbarga");
  const bob = await agentWithHandset(api, admin.token, "bob", "Bob Tchoupo");
  const operator = new SimulatedOperator();
  operator.registerSim(alice.sim.msisdn, "operator_b", { pin: alice.sim.pin, balance: START_BALANCE });
  for (const [msisdn, name] of RECIPIENTS) operator.registerCustomer(msisdn, name);
  const sms = new OperatorSms({ baseUrl: url, token: alice.device.token, seed: 26 });
  const handset = new SimulatedHandset({ baseUrl: url, token: alice.device.token, operator, onDialled: sms.onDialled });
  await handset.refreshSims(false);
  return { api, adminToken: admin.token, alice, bob, operator, handset };
}

export const RECIPIENTS: [string, string][] = [
  ["690222333", "Paul Essomba"],
  ["690444555", "Awa Ndiaye"],
  ["690666777", "Jean Fotso"],
  ["690888999", "Chantal Biya"],
];

/** A paid remittance written by the automation caller, waiting in the intake board. */
export async function intakeTransaction(w: BoardWorld, receiver: [string, string], amount: number): Promise<string> {
  const r = await w.api.post("/v1/transactions", {
    apiKey: true,
    body: {
      request_id: `board-${randomUUID()}`,
      contact_id: "contact-board",
      customer_name: "Claire Martin",
      receiver_name: receiver[1],
      receiver_phone: receiver[0],
      operator: "operator_b",
      received_amount_xaf: amount,
      rate: 655.957,
      send_amount_eur: Math.round((amount / 655.957) * 100) / 100,
    },
  });
  if (r.status !== 201) throw new Error(`intake transaction: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.id;
}

/** An operation of the agent's, created through the API (queued, nobody dials it yet). */
export async function createOperation(w: BoardWorld, agent: Agent, to: [string, string], amount: number) {
  const r = await w.api.post("/v1/operations", {
    token: agent.token,
    body: { request_id: randomUUID(), operator: "operator_b", client: { msisdn: to[0], nom: to[1] }, montant: amount },
  });
  if (r.status !== 202) throw new Error(`create operation: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.operation_id as string;
}

/** Alice's handset claims the operation and dials it (the simulator's outcome, or the one given). */
export async function dial(w: BoardWorld, operationId: string, fail?: "ussd_timeout"): Promise<void> {
  if (fail) w.handset.failNext(operationId, { outcome: fail });
  await eventually(
    async () => {
      const r = await w.handset.pollOnce();
      return r.operation?.operation_id === operationId ? r : undefined;
    },
    20_000,
    `the handset to dial ${operationId}`,
  );
}

/** An operation of Alice's that dialled and got no proof (no_evidence). */
export async function unprovenOperation(w: BoardWorld, to: [string, string], amount: number): Promise<string> {
  const id = await createOperation(w, w.alice, to, amount);
  await dial(w, id, "ussd_timeout");
  await eventually(
    async () => {
      const op = (await w.api.get(`/v1/operations/${id}`, { token: w.alice.token })).body;
      return op.status === "no_evidence" ? op : undefined;
    },
    20_000,
    "the operation to be unproven",
  );
  return id;
}

/** An operator SMS on the agent's SIM that matches no operation (its amount matches none); or the operator's wording from another sender. */
export async function orphanSms(
  w: BoardWorld,
  agent: Agent,
  to: [string, string],
  amount: number,
  sender = "OrangeMoney",
): Promise<string> {
  const r = await w.api.post("/v1/device/messages", {
    token: agent.device.token,
    body: {
      sim_id: agent.sim.simId,
      subscription_slot: 0,
      messages: [
        {
          sender,
          raw: depositConfirmation("operator_b", {
            amount,
            balanceAfter: START_BALANCE - amount,
            ref: `CI261126.0100.B${String(amount).padStart(5, "0")}`,
            msisdn: to[0],
            name: to[1].toUpperCase(),
            at: new Date(),
            language: "fr",
          }),
          received_at: new Date().toISOString(),
          device_received_at: new Date().toISOString(),
        },
      ],
    },
  });
  if (r.status !== 200 || r.body.outcome !== (sender === "OrangeMoney" ? "orphan" : "unknown_sender"))
    throw new Error(`orphan SMS: ${r.status} ${JSON.stringify(r.body)}`);
  return r.body.results[0].message_id;
}
