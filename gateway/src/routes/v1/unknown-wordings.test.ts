// Teaching a wording of the fleet, through the gateway on the real services, PostgreSQL and
// Kafka: texts no rule reads are grouped by their shape with the operations waiting on their
// SIM; a rule proposed from one of them shows its slots and the stored texts it would read; a
// corrected template is tried as written; the draft added and activated by a second admin
// proves the waiting operation and empties the group. Agents and supervisors are refused.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, provisionHandset, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let approver: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let supervisor: { token: string; agentId: string };
let wallet: { device: Device; sim: Sim };

const START_BALANCE = 5_000_000;
let seq = 0;
/** A wording no built-in rule reads (written for this test). */
const newWording = (amount: number, msisdn: string) =>
  `Operation QZ4 terminee: ${amount} FCFA credites au ${msisdn}. Code CI261128.${1000 + ++seq}.B${10_000 + seq}. Solde ${START_BALANCE - amount} FCFA.`;

beforeAll(async () => {
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  admin = await sys.api.bootstrapAdmin();
  approver = await sys.api.createAgent(admin.token, { login: "uw-approver", role: "admin" });
  agent = await sys.api.createAgent(admin.token, { login: "uw-agent" });
  supervisor = await sys.api.createAgent(admin.token, { login: "uw-super", role: "supervisor" });
  const h = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: START_BALANCE });
  wallet = { device: h.device, sim: h.sims[0] };
  await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [wallet.sim.simId], opTypes: ["deposit"] });
});
afterAll(async () => {
  await sys?.stop();
});

async function submit(raw: string) {
  const res = await sys.api.post("/v1/device/messages", {
    token: wallet.device.token,
    body: {
      sim_id: wallet.sim.simId,
      messages: [{ sender: "OrangeMoney", raw, received_at: new Date().toISOString() }],
    },
  });
  expect(res.status).toBe(200);
  return res.body.results[0] as { message_id: string; outcome: string; kind: string | null };
}

const groups = async (query = "") =>
  (await sys.api.get(`/v1/admin/unknown-wordings${query}`, { token: admin.token })).body.groups as {
    sample_message_id: string;
    shape: string;
    [k: string]: unknown;
  }[];
const propose = (body: Record<string, unknown>, token = admin.token) =>
  sys.api.post("/v1/admin/wording-rules/proposals", { token, body });

describe("teaching a wording of the fleet", () => {
  it("refuses agents and supervisors (403), a caller without a session (401), and malformed requests (422, 404)", async () => {
    const some = await submit("Operation QZ4 en cours, merci de patienter 12 minutes avant 18:00");
    for (const token of [agent.token, supervisor.token]) {
      const answers = [
        await sys.api.get("/v1/admin/unknown-wordings", { token }),
        await propose({ message_id: some.message_id }, token),
      ];
      expect(answers.map((r) => [r.status, r.body.code, r.body.context?.reason])).toEqual([
        [403, "not_allowed", "admin_required"],
        [403, "not_allowed", "admin_required"],
      ]);
    }
    expect((await sys.api.get("/v1/admin/unknown-wordings")).status).toBe(401);
    const badOperator = await sys.api.get("/v1/admin/unknown-wordings?operator=operator_c", { token: admin.token });
    expect(badOperator.status).toBe(422);
    const badId = await propose({ message_id: "not-a-uuid" });
    expect(badId.status).toBe(422);
    const badKind = await propose({ message_id: some.message_id, kind: "NOPE" });
    expect(badKind.status).toBe(422);
    const unknown = await propose({ message_id: "00000000-0000-4000-8000-000000000000" });
    expect([unknown.status, unknown.body.code, unknown.body.context?.reason]).toEqual([
      404,
      "not_found",
      "evidence_not_found",
    ]);
  });

  it("groups the unknown texts, proposes a rule from one, and once a second admin activates it the waiting operation is proven", async () => {
    const [amount, msisdn] = [15_137, "690001234"];
    const create = await sys.api.post("/v1/operations", {
      apiKey: true,
      body: {
        request_id: `uw-${Date.now()}`,
        agent_id: agent.agentId,
        operator: "operator_b",
        client: { msisdn, nom: "CLARISSE MBALLA" },
        montant: amount,
        sim_id: wallet.sim.simId,
      },
    });
    expect(create.status).toBe(202);
    const operationId = create.body.operation_id as string;

    // Two texts of the new wording (the first for another amount): no rule reads them.
    const first = await submit(newWording(9_990, "690004321"));
    const secondText = newWording(amount, msisdn);
    const second = await submit(secondText);
    for (const r of [first, second]) expect([r.outcome, r.kind]).toEqual(["orphan", null]);

    const listed = await sys.api.get("/v1/admin/unknown-wordings?operator=operator_b", { token: admin.token });
    expect(listed.status).toBe(200);
    const group = listed.body.groups.find(
      (g: { sample_message_id: string }) => g.sample_message_id === second.message_id,
    );
    expect(group).toMatchObject({
      operator: "operator_b",
      why: "unread",
      count: 2,
      sim_ids: [wallet.sim.simId],
      operations_waiting: 1,
      money_waiting_xaf: amount,
      sample_text: secondText,
    });
    expect(group.shape).toContain("terminee: {amount} credites au {phone}. code {ref}. solde {amount}.");
    expect(Date.parse(group.first_seen)).toBeLessThanOrEqual(Date.parse(group.last_seen));
    // Another operator's list does not show it.
    expect((await groups("?operator=operator_a")).some((g) => g.sample_message_id === second.message_id)).toBe(false);

    // The proposal: slots over the values, and the two stored texts it would read as DEP.
    const proposed = await propose({ message_id: second.message_id, kind: "DEP", direction: "out" });
    expect(proposed.status).toBe(200);
    const p = proposed.body;
    expect(p.template).toBe("Operation QZ4 terminee: {amount} credites au {phone}. Code {ref}. Solde {balance}.");
    expect(p.problems).toEqual([]);
    expect(p.slots.map((s: { slot: string; value: string }) => [s.slot, s.value])).toEqual([
      ["amount", `${amount} FCFA`],
      ["phone", msisdn],
      ["ref", expect.stringMatching(/^CI261128\.\d+\.B\d+$/)],
      ["balance", `${START_BALANCE - amount} FCFA`],
    ]);
    for (const s of p.slots) expect(p.example.slice(s.start, s.end)).toBe(s.value);
    expect(p.reads).toBe(2);
    expect(p.read_otherwise).toBe(0);
    const read = p.sample.find((r: { message_id: string }) => r.message_id === second.message_id);
    expect(read).toMatchObject({
      before_kind: null,
      kind: "DEP",
      amount,
      counterparty_msisdn: msisdn,
      balance_after: START_BALANCE - amount,
      rereadable: true,
      money_received_as_proof: false,
    });

    // A corrected template is tried as written; one a DEP cannot be saved with says why.
    const corrected = await propose({
      message_id: second.message_id,
      kind: "DEP",
      direction: "out",
      template: "Operation QZ4 terminee: {amount} credites au {phone}. Code {ref}. {any}",
    });
    expect(corrected.status).toBe(200);
    expect(corrected.body.slots.map((s: { slot: string }) => s.slot)).toEqual(["amount", "phone", "ref"]);
    expect(corrected.body.reads).toBe(2);
    const unsafe = await propose({
      message_id: second.message_id,
      kind: "DEP",
      direction: "out",
      template: "Operation QZ4 terminee: {amount} credites au {phone}.",
    });
    expect([unsafe.status, unsafe.body.problems, unsafe.body.reads]).toEqual([
      200,
      ["deposit_needs_amount_ref_and_phone"],
      0,
    ]);

    // Added as a draft by one admin, activated by another: the waiting operation is proven.
    const draft = await sys.api.post("/v1/admin/wording-rules", {
      token: admin.token,
      body: { operator: "operator_b", kind: "DEP", language: p.language, direction: "out", template: p.template },
    });
    expect(draft.status).toBe(201);
    const self = await sys.api.post(`/v1/admin/wording-rules/${draft.body.version_id}/activate`, {
      token: admin.token,
    });
    expect([self.status, self.body.context?.reason]).toEqual([403, "wording_rule_needs_second_admin"]);
    const activated = await sys.api.post(`/v1/admin/wording-rules/${draft.body.version_id}/activate`, {
      token: approver.token,
    });
    expect(activated.status).toBe(200);
    const done = await eventually(async () => {
      const list = await sys.api.get("/v1/admin/wording-rules?state=active", { token: admin.token });
      const v = list.body.rules.find((r: { version_id: string }) => r.version_id === draft.body.version_id);
      return v?.reread_state === "done" ? v : undefined;
    }, 30_000);
    expect(done).toMatchObject({ reread_messages: 2, reread_confirmed: 1 });
    const op = (await sys.api.get(`/v1/operations/${operationId}`, { token: admin.token })).body;
    expect(op.status).toBe("confirmed");
    expect(op.evidence).toMatchObject({ amount, kind: "DEP", raw_text: secondText });
    // Read now, the texts of that wording are no longer listed.
    expect((await groups()).some((g) => g.sample_message_id === second.message_id)).toBe(false);
  });
});
