// Wording rules taught at run time, through the gateway on the real services, PostgreSQL and
// Kafka: a draft tried shows what it would read; activation makes an orphan of the new
// wording confirm its operation once when within its windows, leaves one past them an orphan
// with its fields, never touches a message a person attached; retire stops it; agents and
// supervisors are refused; unsafe templates are 422 with their reasons; each change is audited.

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { grantAccess, provisionHandset, type Device, type Sim } from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let supervisor: { token: string; agentId: string };
/** A second admin: a DEP or BAL rule is activated by an admin other than its author. */
let approver: { token: string; agentId: string };
let walletA: { device: Device; sim: Sim };
let queued: { device: Device; sim: Sim };
let late: { device: Device; sim: Sim };

const START_BALANCE = 5_000_000;
const TEMPLATE = "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.";
let seq = 0;
const newWording = (amount: number, msisdn: string) =>
  `Operation KX7 terminee: ${amount} FCFA credites au client ${msisdn}. Code CI261126.${1000 + ++seq}.B${10_000 + seq}. Reste ${START_BALANCE - amount} FCFA.`;

beforeAll(async () => {
  sys = await startTestSystem({
    DEVICE_COOLDOWN_S: "0",
    // A late window short enough for an operation to fall out of it during the test.
    EVIDENCE_WINDOW_S: "1",
    LATE_EVIDENCE_S: "2",
    SWEEP_INTERVAL_S: "0.5",
    EVIDENCE_REDRIVE_INTERVAL_MS: "500",
    EVIDENCE_REDRIVE_GRACE_MS: "1000",
  });
  admin = await sys.api.bootstrapAdmin();
  agent = await sys.api.createAgent(admin.token, { login: "wr-agent" });
  supervisor = await sys.api.createAgent(admin.token, { login: "wr-super", role: "supervisor" });
  approver = await sys.api.createAgent(admin.token, { login: "wr-approver", role: "admin" });
  const w = await provisionHandset(sys.api, admin.token, { operators: ["operator_a"], balance: START_BALANCE });
  walletA = { device: w.device, sim: w.sims[0] };
  const a = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: START_BALANCE });
  queued = { device: a.device, sim: a.sims[0] };
  const b = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: START_BALANCE });
  late = { device: b.device, sim: b.sims[0] };
  await grantAccess(sys.api, admin.token, agent.agentId, {
    simIds: [queued.sim.simId, late.sim.simId],
    opTypes: ["deposit"],
  });
});
afterAll(async () => {
  await sys?.stop();
});

/** A handset's forward of one SMS, sent again as it is while the answer is 503 (retry with the same body). */
async function submit(to: { device: Device; sim: Sim }, raw: string, sender = "OrangeMoney") {
  const body = { sim_id: to.sim.simId, messages: [{ sender, raw, received_at: new Date().toISOString() }] };
  let res = await sys.api.post("/v1/device/messages", { token: to.device.token, body });
  for (let tries = 1; res.status === 503 && tries < 3; tries++)
    res = await sys.api.post("/v1/device/messages", { token: to.device.token, body });
  expect(res.status).toBe(200);
  return res.body.results[0] as { message_id: string; outcome: string; kind: string | null; duplicate: boolean };
}

async function createDeposit(simId: string, amount: number, msisdn: string): Promise<string> {
  const res = await sys.api.post("/v1/operations", {
    apiKey: true,
    body: {
      request_id: `wr-${++seq}-${Date.now()}`,
      agent_id: agent.agentId,
      operator: "operator_b",
      client: { msisdn, nom: "CLARISSE MBALLA" },
      montant: amount,
      sim_id: simId,
    },
  });
  if (res.status !== 202) throw new Error(`create operation: ${res.status} ${JSON.stringify(res.body)}`);
  return res.body.operation_id;
}

const getOperation = async (id: string) => (await sys.api.get(`/v1/operations/${id}`, { token: admin.token })).body;
const message = async (id: string) =>
  (
    await sys.db.query(
      `select kind, amount, balance_after, operator_ref, counterparty_msisdn, parse_rule, outcome, operation_id, link
         from evidence.messages where id = $1`,
      [id],
    )
  )[0];
const addRule = (body: Record<string, unknown>, token = admin.token) =>
  sys.api.post("/v1/admin/wording-rules", { token, body });

describe("wording rules taught at run time", () => {
  it("refuses agents and supervisors (403) on every route", async () => {
    const draft = await addRule({
      operator: "operator_b",
      kind: null,
      language: "fr",
      template: "Bonjour {any} merci",
    });
    expect(draft.status).toBe(201);
    const id = draft.body.version_id;
    for (const token of [agent.token, supervisor.token]) {
      const answers = [
        await sys.api.get("/v1/admin/wording-rules", { token }),
        await addRule({ operator: "operator_b", language: "fr", template: TEMPLATE, kind: "DEP" }, token),
        await sys.api.post(`/v1/admin/wording-rules/${id}/try`, { token }),
        await sys.api.post(`/v1/admin/wording-rules/${id}/activate`, { token }),
        await sys.api.post(`/v1/admin/wording-rules/${id}/retire`, { token }),
      ];
      expect(answers.map((r) => [r.status, r.body.context?.reason])).toEqual(
        Array.from({ length: 5 }, () => [403, "admin_required"]),
      );
    }
    const unsigned = await sys.api.get("/v1/admin/wording-rules");
    expect(unsigned.status).toBe(401);
  });

  it("refuses unsafe templates with 422 and every reason", async () => {
    const noWords = await addRule({ operator: "operator_b", kind: "DEP", language: "fr", template: "{amount} {ref}" });
    expect(noWords.status).toBe(422);
    expect(noWords.body.code).toBe("invalid_request");
    expect(noWords.body.context.reason).toBe("no_literal_text");
    expect(noWords.body.context.problems).toEqual(["no_literal_text", "deposit_needs_amount_ref_and_phone"]);
    const cases: [Record<string, unknown>, string][] = [
      [{ kind: "DEP", template: "Depot de {amount} ref {ref}" }, "deposit_needs_amount_ref_and_phone"],
      [{ kind: "BAL", template: "Votre solde est de {amount}" }, "balance_needs_balance"],
      [{ kind: "UV_IN", template: "Vous avez recu de {phone}" }, "movement_needs_amount"],
      [{ kind: "NOPE", template: "Vous avez recu {amount}" }, "unknown_kind"],
      [{ kind: null, template: "Recu {amount} puis {amount}" }, "repeated_slot"],
      [{ kind: null, template: "Recu {montant} merci" }, "unknown_slot"],
      [{ kind: null, template: `Recu {amount} ${"x".repeat(600)}` }, "template_too_long"],
    ];
    for (const [body, reason] of cases) {
      const res = await addRule({ operator: "operator_b", language: "fr", ...body });
      expect([res.status, res.body.context?.reason]).toEqual([422, reason]);
    }
    const unknownRule = await addRule({
      rule_id: "00000000-0000-4000-8000-000000000000",
      operator: "operator_b",
      language: "fr",
      kind: null,
      template: "Bonjour {any} merci",
    });
    expect([unknownRule.status, unknownRule.body.context.reason]).toEqual([404, "wording_rule_not_found"]);
    const unknownVersion = await sys.api.post(`/v1/admin/wording-rules/00000000-0000-4000-8000-000000000000/activate`, {
      token: admin.token,
    });
    expect([unknownVersion.status, unknownVersion.body.context.reason]).toEqual([404, "wording_rule_not_found"]);
  });

  it("tries a draft, activates it (an orphan within its windows confirms once, one past them stays an orphan with fields, an attached one is untouched), and retires it", async () => {
    // Operation A: queued, active. Operation B: dialled and failed, soon past its late window.
    // Operation C: settled by a person attaching a message of the new wording.
    const [amountA, amountB, amountC] = [15_137, 16_241, 17_353];
    const [msisdnA, msisdnB, msisdnC] = ["690001234", "690005678", "690009012"];
    const opA = await createDeposit(queued.sim.simId, amountA, msisdnA);
    const opB = await createDeposit(late.sim.simId, amountB, msisdnB);
    const next = await sys.api.nextWork(late.device.token);
    expect(next.body.operation_id).toBe(opB);
    const outcome = await sys.api.post("/v1/device/outcome", {
      token: late.device.token,
      body: {
        operation_id: opB,
        outcome: "no_service",
        ussd_response: "Service indisponible",
        executed_at: new Date().toISOString(),
      },
    });
    expect(outcome.status).toBe(200);
    const opC = await createDeposit(queued.sim.simId, amountC, msisdnC);

    // The new wording: no rule reads it, so each text is an orphan and confirms nothing.
    const a = await submit(queued, newWording(amountA, msisdnA));
    const b = await submit(late, newWording(amountB, msisdnB));
    const c = await submit(queued, newWording(amountC, msisdnC));
    for (const r of [a, b, c]) expect([r.outcome, r.kind]).toEqual(["orphan", null]);
    expect((await getOperation(opA)).status).toBe("queued");
    // A text no rule reads proves nothing, so attach refuses it now (attach is proof); one a
    // person attached before that rule (linked as the attach route linked it) stays linked.
    const attached = await sys.api.post(`/v1/operations/${opC}/evidence`, {
      token: admin.token,
      body: { evidence_id: c.message_id },
    });
    expect([attached.status, attached.body.context.reason]).toEqual([422, "evidence_kind_cannot_prove"]);
    await sys.db.query(
      `update evidence.messages set outcome = 'attached', operation_id = $2, link = 'proof', linked_at = now() where id = $1`,
      [c.message_id, opC],
    );
    const cBefore = await message(c.message_id);

    const draft = await addRule({
      operator: "operator_b",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: TEMPLATE,
    });
    expect(draft.status).toBe(201);
    expect(draft.body).toMatchObject({
      version: 1,
      state: "draft",
      operator: "operator_b",
      kind: "DEP",
      created_by: admin.agentId,
      activated_at: null,
      reread_state: "none",
      parse_rule: `taught.operator_b.${draft.body.rule_id}.v1`,
    });
    const id = draft.body.version_id;

    // A draft reads nothing new.
    const still = await submit(queued, newWording(amountA + 1, msisdnA));
    expect([still.outcome, still.kind]).toEqual(["orphan", null]);

    const trial = await sys.api.post(`/v1/admin/wording-rules/${id}/try`, { token: admin.token });
    expect(trial.status).toBe(200);
    const readIds = trial.body.sample.map((s: { message_id: string }) => s.message_id);
    expect(readIds).toEqual(expect.arrayContaining([a.message_id, b.message_id, still.message_id]));
    // The attached one is listed (it would be read differently) but never read again.
    expect(trial.body.sample.find((s: { message_id: string }) => s.message_id === c.message_id)).toMatchObject({
      rereadable: false,
      kind: "DEP",
    });
    expect(trial.body).toMatchObject({
      reads: 4,
      orphans: 3,
      stored: 0,
      not_correlated: 0,
      read_otherwise: 0,
      money_received: 0,
      by_kind: { DEP: 4 },
    });
    expect(trial.body.sample.find((s: { message_id: string }) => s.message_id === a.message_id)).toMatchObject({
      outcome: "orphan",
      before_kind: null,
      before_rule: "unrecognised",
      kind: "DEP",
      amount: amountA,
      counterparty_msisdn: msisdnA,
      balance_after: START_BALANCE - amountA,
    });
    // Trying changed nothing.
    expect((await message(a.message_id)).kind).toBeNull();

    // B's operation falls out of its late window (2 s after it failed).
    await eventually(async () => ((await getOperation(opB)).status === "no_evidence" ? true : undefined));
    await new Promise((r) => setTimeout(r, 2_500));

    const activated = await sys.api.post(`/v1/admin/wording-rules/${id}/activate`, { token: approver.token });
    expect(activated.status).toBe(200);
    expect(activated.body).toMatchObject({ state: "active", activated_by: approver.agentId });

    const done = await eventually(async () => {
      const list = await sys.api.get("/v1/admin/wording-rules?state=active", { token: admin.token });
      const v = list.body.rules.find((r: { version_id: string }) => r.version_id === id);
      return v?.reread_state === "done" ? v : undefined;
    }, 30_000);
    expect(done).toMatchObject({ reread_messages: 3, reread_confirmed: 1 });

    // A: confirmed once, by the orphan.
    const opAfter = await getOperation(opA);
    expect(opAfter.status).toBe("confirmed");
    expect(opAfter.evidence).toMatchObject({
      amount: amountA,
      kind: "DEP",
      raw_text: expect.stringContaining(`${amountA} FCFA credites au client ${msisdnA}`),
    });
    expect(await message(a.message_id)).toMatchObject({ outcome: "confirmed", operation_id: opA, link: "proof" });
    const proofs = await sys.db.query(`select count(*)::int as n from evidence.messages where operation_id = $1`, [
      opA,
    ]);
    expect(proofs[0].n).toBe(1);
    // B: past its windows, an orphan with the fields the rule reads.
    expect(await message(b.message_id)).toMatchObject({
      outcome: "orphan",
      kind: "DEP",
      amount: String(amountB),
      counterparty_msisdn: msisdnB,
      operation_id: null,
    });
    expect((await getOperation(opB)).status).toBe("no_evidence");
    // C: attached by a person before; untouched.
    expect(await message(c.message_id)).toEqual(cBefore);
    expect((await getOperation(opC)).status).toBe("queued");
    // The text of A+1 (no operation of its amount) is read too and stays an orphan.
    expect(await message(still.message_id)).toMatchObject({ outcome: "orphan", kind: "DEP" });

    // New texts are read by it at once, and a repeat of A's text confirms nothing again.
    const fresh = await submit(queued, newWording(amountA + 2, msisdnA));
    expect([fresh.outcome, fresh.kind]).toEqual(["orphan", "DEP"]);

    // Retired: it reads no new text; what it confirmed keeps its reading and link, and what else
    // it read is read again by the remaining rules (the built-in ones know no such wording).
    const retired = await sys.api.post(`/v1/admin/wording-rules/${id}/retire`, { token: admin.token });
    expect(retired.status).toBe(200);
    expect(retired.body).toMatchObject({ state: "retired", retired_by: admin.agentId });
    const after = await submit(queued, newWording(amountA + 3, msisdnA));
    expect([after.outcome, after.kind]).toEqual(["orphan", null]);
    const bAgain = await eventually(async () => {
      const m = await message(b.message_id);
      return m.kind === null ? m : undefined;
    }, 30_000);
    expect(bAgain).toMatchObject({ outcome: "orphan", amount: String(amountB), operation_id: null });
    expect(bAgain.parse_rule).toBe("unrecognised");
    expect(await message(a.message_id)).toMatchObject({ outcome: "confirmed", operation_id: opA, kind: "DEP" });
    expect((await message(a.message_id)).parse_rule).toMatch(/^taught\./);
    const again = await sys.api.post(`/v1/admin/wording-rules/${id}/activate`, { token: admin.token });
    expect([again.status, again.body.context.reason]).toEqual([409, "wording_rule_retired"]);

    // A new version of the rule starts as a draft numbered 2.
    const v2 = await addRule({
      rule_id: draft.body.rule_id,
      operator: "operator_b",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: TEMPLATE.replace("Reste", "Solde"),
    });
    expect(v2.body).toMatchObject({ rule_id: draft.body.rule_id, version: 2, state: "draft" });

    // Fleet's audit log holds each change, by the admin who made it.
    const audit = await eventually(async () => {
      const rows = await sys.db.query(
        `select action, actor_agent_id from fleet.audit_log where target_id = $1 and action like 'wording_rule.%' order by id`,
        [id],
      );
      return rows.length === 3 ? rows : undefined;
    });
    expect(audit).toEqual([
      { action: "wording_rule.added", actor_agent_id: admin.agentId },
      { action: "wording_rule.activated", actor_agent_id: approver.agentId },
      { action: "wording_rule.retired", actor_agent_id: admin.agentId },
    ]);
  }, 90_000);

  it("activates a DEP rule only by a second admin, recorded in the audit log; a rule that confirms nothing needs one admin", async () => {
    const dep = await addRule({
      operator: "operator_b",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: "Virement ZQ9 fait: {amount} vers {phone}. Ref {ref}. Solde {balance}.",
    });
    expect(dep.status).toBe(201);
    const id = dep.body.version_id;
    const own = await sys.api.post(`/v1/admin/wording-rules/${id}/activate`, { token: admin.token });
    expect([own.status, own.body.code, own.body.context.reason]).toEqual([
      403,
      "not_allowed",
      "wording_rule_needs_second_admin",
    ]);
    expect(
      (await sys.api.get("/v1/admin/wording-rules?state=draft", { token: admin.token })).body.rules,
    ).toContainEqual(expect.objectContaining({ version_id: id, state: "draft" }));
    const approved = await sys.api.post(`/v1/admin/wording-rules/${id}/activate`, { token: approver.token });
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({ state: "active", created_by: admin.agentId, activated_by: approver.agentId });
    const row = await eventually(async () => {
      const rows = await sys.db.query(
        `select actor_agent_id, details from fleet.audit_log where target_id = $1 and action = 'wording_rule.activated'`,
        [id],
      );
      return rows[0];
    });
    expect(row.actor_agent_id).toBe(approver.agentId);
    expect(row.details.approval).toEqual({ drafted_by: admin.agentId, approved_by: approver.agentId });
    expect((await sys.api.post(`/v1/admin/wording-rules/${id}/retire`, { token: admin.token })).status).toBe(200);

    // A notice confirms nothing: its author activates it.
    const notice = await addRule({
      operator: "operator_b",
      kind: "MKT",
      language: "fr",
      direction: null,
      template: "Offre ZQ9 du jour: {any}",
    });
    const alone = await sys.api.post(`/v1/admin/wording-rules/${notice.body.version_id}/activate`, {
      token: admin.token,
    });
    expect([alone.status, alone.body.state]).toEqual([200, "active"]);
    expect(
      (await sys.api.post(`/v1/admin/wording-rules/${notice.body.version_id}/retire`, { token: admin.token })).status,
    ).toBe(200);
  });

  it("never lets a rule read money received as proof: its trial shows the built-in readings it overrides, and a DEP over them is refused with the texts", async () => {
    const RECEIVED_TEMPLATE = "Vous avez recu {amount} de {name} ({phone}) le {any}. ID: {ref}. Solde: {balance}.";
    const received = (amount: number) =>
      `Vous avez recu ${amount} FCFA de AWA BELLO (237677000111) le 2026-11-20 10:00:00. ID: CI261120.1000.A${10_000 + ++seq}. Solde: ${START_BALANCE + amount} FCFA.`;
    // A DEP drafted before any such text is stored: nothing to show yet.
    const early = await addRule({
      operator: "operator_a",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: RECEIVED_TEMPLATE,
    });
    expect(early.status).toBe(201);

    // A customer's transfer to the SIM: read today by a built-in rule as money received.
    const m = await submit(walletA, received(2_000), "MobileMoney");
    expect([m.outcome, m.kind]).toEqual(["movement", "UV_IN"]);

    // The trial of a rule over that wording shows the text the built-in rule reads today.
    const notice = await addRule({
      operator: "operator_a",
      kind: "MKT",
      language: "fr",
      direction: null,
      template: RECEIVED_TEMPLATE,
    });
    expect(notice.status).toBe(201);
    const trial = await sys.api.post(`/v1/admin/wording-rules/${notice.body.version_id}/try`, { token: admin.token });
    expect(trial.status).toBe(200);
    expect(trial.body).toMatchObject({
      reads: 1,
      read_otherwise: 1,
      money_received: 0,
      orphans: 0,
      by_kind: { MKT: 1 },
    });
    expect(trial.body.sample).toEqual([
      expect.objectContaining({
        message_id: m.message_id,
        outcome: "movement",
        before_kind: "UV_IN",
        before_rule: expect.stringMatching(/uv_in/),
        kind: "MKT",
        rereadable: false,
        money_received_as_proof: false,
      }),
    ]);
    // The early DEP's trial shows it first, as money received it would read as proof.
    const depTrial = await sys.api.post(`/v1/admin/wording-rules/${early.body.version_id}/try`, { token: admin.token });
    expect(depTrial.body).toMatchObject({ reads: 1, read_otherwise: 1, money_received: 1 });
    expect(depTrial.body.sample[0]).toMatchObject({
      message_id: m.message_id,
      kind: "DEP",
      money_received_as_proof: true,
    });

    // A DEP over that wording is refused, with the texts, when added and when activated.
    const refused = await addRule({
      operator: "operator_a",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: RECEIVED_TEMPLATE,
    });
    expect([refused.status, refused.body.code, refused.body.context.reason]).toEqual([
      422,
      "refused",
      "wording_rule_reads_money_received",
    ]);
    expect(refused.body.context.texts).toEqual([
      expect.objectContaining({
        message_id: m.message_id,
        before_kind: "UV_IN",
        kind: "DEP",
        text: expect.stringContaining("Vous avez recu 2000 FCFA"),
      }),
    ]);
    const activation = await sys.api.post(`/v1/admin/wording-rules/${early.body.version_id}/activate`, {
      token: approver.token,
    });
    expect([activation.status, activation.body.context.reason]).toEqual([422, "wording_rule_reads_money_received"]);
    expect(activation.body.context.texts.map((t: { message_id: string }) => t.message_id)).toEqual([m.message_id]);
    // Nothing was activated: the next transfer received is read as it is today.
    const next = await submit(walletA, received(3_000), "MobileMoney");
    expect([next.outcome, next.kind]).toEqual(["movement", "UV_IN"]);
    expect(
      (await sys.api.get("/v1/admin/wording-rules?state=active&operator=operator_a", { token: admin.token })).body
        .rules,
    ).toEqual([]);
  });
});
