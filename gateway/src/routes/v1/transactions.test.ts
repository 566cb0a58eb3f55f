import { randomUUID } from "node:crypto";
import { create, fromBinary } from "@bufbuild/protobuf";
import { createLogger, KafkaBus, type Subscription } from "@transferops/kit";
import { TransactionChangedSchema } from "@transferops/kit/gen/transferops/intake/v1/events_pb";
import { OperationChangedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  grantAccess,
  provisionHandset,
  publishTestEvent,
  setCircuitBreaker,
  statusesFor,
  type Credentials,
  type Sim,
} from "../../../../test/support/fleet-fixtures.ts";
import { LIST_OMITS } from "./transactions.ts";

// The transaction routes through the gateway, intake, dispatch, fleet, PostgreSQL and
// Kafka: every route, rule and scope, the launch races, settlement by dispatch's events.
// The three protections switched off in turn and the crash completion are in
// transactions-protections.test.ts; the handset journey in transactions-journey.test.ts.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };
let agent: { token: string; agentId: string };
let colleague: { token: string; agentId: string };
let sim: Sim;
let kafka: KafkaBus;
let subscription: Subscription;
const changes: { key: string; trigger: string; state: string; operationId: string }[] = [];

const TRANSACTION_KEYS = [
  "id",
  "request_id",
  "parent_request_id",
  "master_transaction_id",
  "contact_id",
  "customer_name",
  "customer_phone",
  "receiver_name",
  "receiver_phone",
  "operator",
  "received_amount_xaf",
  "rate",
  "send_amount_eur",
  "partner_verify",
  "transaction_date",
  "state",
  "launched_by",
  "launched_by_name",
  "launched_at",
  "operation_id",
  "outcome",
  "settled_at",
  "settled_by",
  "settled_by_name",
  "payment_confirmed_at",
  "payment_confirmed_by",
  "cancelled_reason",
  "created_at",
  "updated_at",
  "receiver_verified",
  "receiver_changes",
];

routeSystem({ prefix: "tx", env: { DEVICE_COOLDOWN_S: "0" } }, (s) => ({ sys, admin, creds } = s));
beforeAll(async () => {
  agent = await sys.api.createAgent(admin.token, { login: "tx-owner", full_name: "Olga Owner" });
  colleague = await sys.api.createAgent(admin.token, { login: "tx-colleague", full_name: "Colin Colleague" });
  const handset = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 300_000 });
  sim = handset.sims[0]!;
  for (const a of [agent, colleague]) await grantAccess(sys.api, admin.token, a.agentId, { simIds: [sim.simId] });
  kafka = new KafkaBus({
    brokers: sys.env.KAFKA_BROKERS!.split(","),
    clientId: "tx-test",
    prefix: sys.topicPrefix,
    log: createLogger("tx-test", { level: "silent" }),
  });
  subscription = await kafka.subscribe(`tx-test-${randomUUID()}`, ["transactions"], async (m) => {
    const e = fromBinary(TransactionChangedSchema, m.value);
    changes.push({ key: m.key, trigger: e.trigger, state: e.state, operationId: e.operationId });
  });
}, 120_000);
afterAll(async () => {
  await subscription?.close();
  await kafka?.close();
});

const intake = (o: Record<string, unknown> = {}) => ({
  request_id: `req-${randomUUID()}`,
  contact_id: "contact-1",
  receiver_name: "Marie-Claire Ngo",
  receiver_phone: "690111222",
  operator: "operator_b",
  received_amount_xaf: 5000,
  ...o,
});

async function createTx(o: Record<string, unknown> = {}): Promise<any> {
  const res = await sys.api.post("/v1/transactions", { apiKey: true, body: intake(o) });
  expect(res.status).toBe(201);
  return res.body;
}

const get = async (id: string, token = admin.token) => sys.api.get(`/v1/transactions/${id}`, { token });
const confirm = (id: string, token = agent.token) =>
  sys.api.post(`/v1/transactions/${id}/payment-confirmation`, { token });
const launch = (id: string, token = agent.token) => sys.api.post(`/v1/transactions/${id}/launch`, { token });

async function launchedTx(token = agent.token, o: Record<string, unknown> = {}): Promise<any> {
  const t = await createTx(o);
  expect((await confirm(t.id, token)).status).toBe(200);
  const res = await launch(t.id, token);
  expect(res.status).toBe(200);
  return (await get(t.id)).body;
}

const operationsOf = async (id: string) =>
  sys.db.query(`select operation_id, request_id from dispatch.operations where request_id like $1`, [`tx-${id}%`]);

describe("credentials", () => {
  it("creates with the API key only", async () => {
    const statuses = await statusesFor(
      sys.api,
      creds,
      "POST",
      "/v1/transactions",
      ["none", "wrongApiKey", "agent", "admin", "device"],
      intake(),
    );
    expect(statuses).toEqual({ none: 401, wrongApiKey: 401, agent: 403, admin: 403, device: 403 });
  });

  it("serves the board routes to active sessions only; an inactive agent gets 403", async () => {
    const t = await createTx();
    for (const path of ["/v1/transactions", `/v1/transactions/${t.id}`]) {
      const statuses = await statusesFor(sys.api, creds, "GET", path, [
        "none",
        "apiKey",
        "device",
        "inactive",
        "agent",
      ]);
      expect(statuses).toEqual({ none: 401, apiKey: 403, device: 403, inactive: 403, agent: 200 });
    }
    for (const [method, suffix, body] of [
      ["POST", "/launch", undefined],
      ["POST", "/cancel", { reason: "x" }],
      ["POST", "/payment-confirmation", undefined],
      ["DELETE", "/payment-confirmation", undefined],
      ["POST", "/close-by-receipt", undefined],
      ["PATCH", "/receiver", { receiver_name: "X" }],
    ] as const) {
      const statuses = await statusesFor(
        sys.api,
        creds,
        method,
        `/v1/transactions/${t.id}${suffix}`,
        ["none", "apiKey", "inactive"],
        body,
      );
      expect(statuses, `${method} ${suffix}`).toEqual({ none: 401, apiKey: 403, inactive: 403 });
    }
  });
});

describe("create", () => {
  it("records the intake fields as a pending transaction, receiver phone in local form", async () => {
    const body = intake({
      parent_request_id: "parent-1",
      master_transaction_id: "MT-1",
      customer_name: "Claire Martin",
      customer_phone: "+33612345678",
      receiver_phone: "+237 690 111 222",
      rate: 655.957,
      send_amount_eur: 7.62,
      partner_verify: true,
      transaction_date: "2026-11-22T09:14:00.000Z",
    });
    const res = await sys.api.post("/v1/transactions", { apiKey: true, body });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual([...TRANSACTION_KEYS].sort());
    expect(res.body).toMatchObject({
      request_id: body.request_id,
      parent_request_id: "parent-1",
      master_transaction_id: "MT-1",
      customer_name: "Claire Martin",
      receiver_phone: "690111222",
      operator: "operator_b",
      received_amount_xaf: 5000,
      rate: 655.957,
      send_amount_eur: 7.62,
      partner_verify: true,
      transaction_date: "2026-11-22T09:14:00.000Z",
      state: "pending",
      launched_by: null,
      operation_id: null,
      payment_confirmed_at: null,
      cancelled_reason: null,
    });
  });

  it("defaults partner_verify to false and transaction_date to now", async () => {
    const before = Date.now();
    const t = await createTx();
    expect(t.partner_verify).toBe(false);
    expect(Date.parse(t.transaction_date)).toBeGreaterThanOrEqual(before - 1000);
  });

  it.each([
    "state",
    "launched_by",
    "launched_at",
    "operation_id",
    "cancelled_reason",
    "payment_confirmed_at",
    "outcome",
  ])("refuses a body naming the board's field %s", async (field) => {
    const res = await sys.api.post("/v1/transactions", { apiKey: true, body: intake({ [field]: "launched" }) });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("refuses a replayed request_id with 409 and never requeues the first", async () => {
    const t = await createTx();
    await sys.api.post(`/v1/transactions/${t.id}/cancel`, { token: agent.token, body: { reason: "duplicate" } });
    const res = await sys.api.post("/v1/transactions", { apiKey: true, body: intake({ request_id: t.request_id }) });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: "conflict",
      context: { reason: "request_id_exists", transaction_id: t.id },
    });
    expect((await get(t.id)).body.state).toBe("cancelled");
    const rows = await sys.db.query(`select count(*)::int as n from intake.transactions where request_id = $1`, [
      t.request_id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it.each([
    ["12345", "operator_b", "invalid_msisdn"],
    ["660000001", "operator_b", "operator_undetermined"],
    ["690111222", "operator_a", "operator_mismatch"],
    ["+237 670 111 222", "operator_b", "operator_mismatch"],
  ])("refuses receiver %s for %s (%s)", async (phone, operator, reason) => {
    const res = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: intake({ receiver_phone: phone, operator }),
    });
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "refused", context: { reason } });
  });

  it.each<[string, Record<string, unknown>]>([
    ["request_id over 200", { request_id: "r".repeat(201) }],
    ["empty request_id", { request_id: "" }],
    ["contact_id over 200", { contact_id: "c".repeat(201) }],
    ["receiver_name over 200", { receiver_name: "n".repeat(201) }],
    ["receiver_phone over 20", { receiver_phone: "6".repeat(21) }],
    ["customer_phone over 20", { customer_phone: "6".repeat(21) }],
    ["zero amount", { received_amount_xaf: 0 }],
    ["fractional amount", { received_amount_xaf: 10.5 }],
    ["huge amount", { received_amount_xaf: 1e30 }],
    ["amount as text", { received_amount_xaf: "5000" }],
    ["zero rate", { rate: 0 }],
    ["negative send amount", { send_amount_eur: -1 }],
    ["unknown operator", { operator: "operator_c" }],
    ["malformed date", { transaction_date: "yesterday" }],
    ["missing receiver", { receiver_name: undefined }],
    ["nested object", { receiver_name: { a: { b: { c: 1 } } } }],
  ])("refuses %s with 422 invalid_request", async (_what, o) => {
    const res = await sys.api.post("/v1/transactions", { apiKey: true, body: intake(o) });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("refuses a NUL character without a 500", async () => {
    const res = await sys.api.post("/v1/transactions", {
      apiKey: true,
      body: intake({ receiver_name: "Marie\u0000Ngo" }),
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });
});

describe("list and get", () => {
  it("gives an agent every pending transaction and its own launched ones, never a colleague's", async () => {
    const pending = await createTx();
    const mine = await launchedTx(agent.token);
    const theirs = await launchedTx(colleague.token);
    const res = await sys.api.get("/v1/transactions?limit=250", { token: agent.token });
    expect(res.status).toBe(200);
    const ids = res.body.map((t: any) => t.id);
    expect(ids).toEqual(expect.arrayContaining([pending.id, mine.id]));
    expect(ids).not.toContain(theirs.id);
    expect(res.body.every((t: any) => t.state === "pending" || t.launched_by === agent.agentId)).toBe(true);
    const hidden = await get(theirs.id, agent.token);
    expect(hidden.status).toBe(404);
    expect(hidden.body).toMatchObject({ code: "not_found", context: { reason: "transaction_not_found" } });
    expect((await get(mine.id, agent.token)).status).toBe(200);
  });

  it("gives an admin everything with launched_by_name, newest first, in the list form", async () => {
    const theirs = await launchedTx(colleague.token);
    const res = await sys.api.get("/v1/transactions?state=launched", { token: admin.token });
    expect(res.status).toBe(200);
    const row = res.body.find((t: any) => t.id === theirs.id);
    expect(row).toMatchObject({ launched_by: colleague.agentId, launched_by_name: "Colin Colleague" });
    for (const k of LIST_OMITS) expect(row).not.toHaveProperty(k);
    expect(Object.keys(row).length).toBe(TRANSACTION_KEYS.length - LIST_OMITS.length);
    expect(res.body.every((t: any) => t.state === "launched")).toBe(true);
    const created = res.body.map((t: any) => Date.parse(t.created_at));
    expect(created).toEqual([...created].sort((a, b) => b - a));
  });

  it("returns 100 by default and at most 250", async () => {
    await Promise.all(Array.from({ length: 100 }, () => createTx()));
    const res = await sys.api.get("/v1/transactions", { token: admin.token });
    expect(res.body.length).toBe(100);
    expect((await sys.api.get("/v1/transactions?limit=251", { token: admin.token })).status).toBe(422);
    expect((await sys.api.get("/v1/transactions?limit=0", { token: admin.token })).status).toBe(422);
    expect((await sys.api.get("/v1/transactions?limit=5", { token: admin.token })).body.length).toBe(5);
  });

  it("refuses an unknown state with 422", async () => {
    const res = await sys.api.get("/v1/transactions?state=lost", { token: agent.token });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("answers 404 for an unknown id and 422 for a malformed one", async () => {
    expect((await get(randomUUID())).status).toBe(404);
    expect((await get("not-a-uuid")).status).toBe(422);
  });
});

describe("board actions", () => {
  it("corrects receiver_name, receiver_phone and contact_id only, while pending", async () => {
    const t = await createTx();
    const res = await sys.api.patch(`/v1/transactions/${t.id}/receiver`, {
      token: agent.token,
      body: { receiver_name: "Jean Mbarga", receiver_phone: "+237690765432", contact_id: "contact-2" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      receiver_name: "Jean Mbarga",
      receiver_phone: "690765432",
      contact_id: "contact-2",
      received_amount_xaf: 5000,
      state: "pending",
    });
    const amount = await sys.api.patch(`/v1/transactions/${t.id}/receiver`, {
      token: agent.token,
      body: { received_amount_xaf: 1 },
    });
    expect(amount.status).toBe(422);
    const none = await sys.api.patch(`/v1/transactions/${t.id}/receiver`, { token: agent.token, body: {} });
    expect(none.status).toBe(422);
    expect(none.body).toMatchObject({ code: "refused", context: { reason: "no_receiver_field" } });
    const wrongOperator = await sys.api.patch(`/v1/transactions/${t.id}/receiver`, {
      token: agent.token,
      body: { receiver_phone: "670111222" },
    });
    expect(wrongOperator.status).toBe(422);
    expect(wrongOperator.body.context.reason).toBe("operator_mismatch");
    expect((await get(t.id)).body.received_amount_xaf).toBe(5000);
  });

  it("records every rewrite of a paid transaction's receiver: who, before and after, in its history and the audit log", async () => {
    const t = await createTx({ partner_verify: true });
    expect((await confirm(t.id)).status).toBe(200);
    const res = await sys.api.patch(`/v1/transactions/${t.id}/receiver`, {
      token: colleague.token,
      body: { receiver_name: "Paul Autre", receiver_phone: "690999888" },
    });
    expect(res.status).toBe(200);
    const change = {
      agent_id: colleague.agentId,
      agent_name: "Colin Colleague",
      before: { receiver_name: "Marie-Claire Ngo", receiver_phone: "690111222", contact_id: "contact-1" },
      after: { receiver_name: "Paul Autre", receiver_phone: "690999888", contact_id: "contact-1" },
      receiver_verified: false,
    };
    expect(res.body.receiver_verified).toBe(false);
    expect(res.body.receiver_changes).toEqual([{ ...change, changed_at: expect.any(String) }]);
    // The detail shows it to whoever reads the transaction.
    const read = (await get(t.id, agent.token)).body;
    expect([read.receiver_verified, read.receiver_changes]).toEqual([false, res.body.receiver_changes]);
    // Fleet's audit log has it, under the agent who did it.
    const entry = await eventually(
      async () => {
        const audit = await sys.api.get(`/v1/audit?action=transaction.receiver_corrected&target=${t.id}`, {
          token: admin.token,
        });
        return (audit.body as any[]).length ? audit.body[0] : undefined;
      },
      30_000,
      "the rewrite in the audit log",
    );
    expect(entry).toMatchObject({
      actor_agent_id: colleague.agentId,
      action: "transaction.receiver_corrected",
      target_id: t.id,
      details: { before: change.before, after: change.after, receiver_verified: false, agent_name: "Colin Colleague" },
    });
  });

  it("launches a rewritten receiver with partner_verified false unless it is the partner's receiver again", async () => {
    const launchedWith = async (rewrites: Record<string, string>[], o: Record<string, unknown> = {}) => {
      const t = await createTx({ partner_verify: true, ...o });
      expect((await confirm(t.id)).status).toBe(200);
      for (const body of rewrites) {
        expect((await sys.api.patch(`/v1/transactions/${t.id}/receiver`, { token: agent.token, body })).status).toBe(
          200,
        );
      }
      expect((await launch(t.id)).status).toBe(200);
      const [op] = await sys.db.query(
        `select partner_verified, dest_name, msisdn_dest from dispatch.operations where request_id = $1`,
        [`tx-${t.id}`],
      );
      return [op.partner_verified, (await get(t.id)).body.receiver_verified];
    };
    // Never rewritten: the partner's word holds.
    expect(await launchedWith([])).toEqual([true, true]);
    // Another name, or another number: nobody verified it, the handset checks the name before the PIN.
    expect(await launchedWith([{ receiver_name: "Paul Autre" }])).toEqual([false, false]);
    expect(await launchedWith([{ receiver_phone: "690999777" }])).toEqual([false, false]);
    // Another contact only: the operator shows the same receiver.
    expect(await launchedWith([{ contact_id: "contact-9" }])).toEqual([true, true]);
    // Rewritten, then written back to the partner's receiver.
    expect(
      await launchedWith([
        { receiver_name: "Paul Autre" },
        { receiver_name: "Marie-Claire Ngo", receiver_phone: "690111222" },
      ]),
    ).toEqual([true, true]);
    // A partner that verified nothing stays unverified.
    expect(await launchedWith([], { partner_verify: false })).toEqual([false, true]);
  });

  it("refuses to correct a transaction that is not pending", async () => {
    const t = await launchedTx();
    const res = await sys.api.patch(`/v1/transactions/${t.id}/receiver`, {
      token: agent.token,
      body: { receiver_name: "Late" },
    });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: "conflict",
      context: { reason: "transaction_not_pending", state: "launched" },
    });
  });

  it("confirms a payment once: a second confirmation returns the first; undo clears it", async () => {
    const t = await createTx();
    const first = await confirm(t.id, agent.token);
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ state: "pending", payment_confirmed_by: agent.agentId });
    expect(first.body.payment_confirmed_at).not.toBeNull();
    const second = await confirm(t.id, colleague.token);
    expect(second.status).toBe(200);
    expect(second.body.payment_confirmed_at).toBe(first.body.payment_confirmed_at);
    expect(second.body.payment_confirmed_by).toBe(agent.agentId);
    const undone = await sys.api.delete(`/v1/transactions/${t.id}/payment-confirmation`, { token: agent.token });
    expect(undone.status).toBe(200);
    expect(undone.body).toMatchObject({ state: "pending", payment_confirmed_at: null, payment_confirmed_by: null });
  });

  it("confirms and undoes only while pending", async () => {
    const t = await launchedTx();
    for (const res of [
      await confirm(t.id),
      await sys.api.delete(`/v1/transactions/${t.id}/payment-confirmation`, { token: agent.token }),
    ]) {
      expect(res.status).toBe(409);
      expect(res.body.context.reason).toBe("transaction_not_pending");
    }
  });

  it("cancels with a required reason, for good", async () => {
    const t = await createTx();
    for (const body of [{}, { reason: "" }, { reason: "   " }, { reason: "r".repeat(501) }]) {
      const res = await sys.api.post(`/v1/transactions/${t.id}/cancel`, { token: agent.token, body });
      expect(res.status).toBe(422);
    }
    const res = await sys.api.post(`/v1/transactions/${t.id}/cancel`, {
      token: agent.token,
      body: { reason: "Customer refunded" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ state: "cancelled", cancelled_reason: "Customer refunded" });
    // An agent no longer sees a cancelled transaction (pending work and its own launches
    // only): 404. An admin does, and hears 409 on every action.
    expect((await get(t.id, agent.token)).status).toBe(404);
    for (const again of [
      await sys.api.post(`/v1/transactions/${t.id}/cancel`, { token: admin.token, body: { reason: "again" } }),
      await confirm(t.id, admin.token),
      await launch(t.id, admin.token),
      await sys.api.post(`/v1/transactions/${t.id}/close-by-receipt`, { token: admin.token }),
    ]) {
      expect(again.status).toBe(409);
      expect(again.body.context.reason).toBe("transaction_not_pending");
    }
    expect((await get(t.id)).body.state).toBe("cancelled");
  });

  it("closes by receipt: closed, terminal, no operation", async () => {
    const t = await createTx();
    const res = await sys.api.post(`/v1/transactions/${t.id}/close-by-receipt`, { token: agent.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      state: "closed",
      outcome: "closed_by_receipt",
      operation_id: null,
      settled_by: agent.agentId,
      settled_by_name: "Olga Owner",
    });
    expect((await sys.api.post(`/v1/transactions/${t.id}/close-by-receipt`, { token: admin.token })).status).toBe(409);
    expect((await launch(t.id, admin.token)).status).toBe(409);
    expect(await operationsOf(t.id)).toEqual([]);
  });

  it("answers 404 for a colleague's launched transaction on every action", async () => {
    const t = await launchedTx(colleague.token);
    for (const res of [
      await confirm(t.id, agent.token),
      await launch(t.id, agent.token),
      await sys.api.post(`/v1/transactions/${t.id}/cancel`, { token: agent.token, body: { reason: "x" } }),
      await sys.api.post(`/v1/transactions/${t.id}/close-by-receipt`, { token: agent.token }),
      await sys.api.patch(`/v1/transactions/${t.id}/receiver`, { token: agent.token, body: { contact_id: "x" } }),
    ]) {
      expect(res.status).toBe(404);
    }
  });
});

describe("launch", () => {
  it("refuses an unconfirmed payment with 422 payment_not_confirmed", async () => {
    const t = await createTx();
    const res = await launch(t.id);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "refused", context: { reason: "payment_not_confirmed" } });
    expect((await get(t.id)).body.state).toBe("pending");
  });

  it("creates the operation the contract maps from the transaction, request_id tx-<id>", async () => {
    const t = await createTx({ receiver_name: "Awa Ndiaye", contact_id: "contact-77", received_amount_xaf: 7300 });
    await confirm(t.id);
    const res = await launch(t.id);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["operation_id", "state", "transaction_id"]);
    expect(res.body).toMatchObject({ transaction_id: t.id, state: "launched" });
    const op = await sys.api.get(`/v1/operations/${res.body.operation_id}`, { token: agent.token });
    expect(op.body).toMatchObject({
      request_id: `tx-${t.id}`,
      origin: "aggregated",
      agent_id: agent.agentId,
      operator: "operator_b",
      op_type: "deposit",
      msisdn_dest: "690111222",
      dest_name: "Awa Ndiaye",
      montant: 7300,
      contact_id: "contact-77",
      sim_id: sim.simId,
      status: "queued",
    });
    const after = (await get(t.id)).body;
    expect(after).toMatchObject({
      state: "launched",
      operation_id: res.body.operation_id,
      launched_by: agent.agentId,
      launched_by_name: "Olga Owner",
    });
    const again = await launch(t.id);
    expect(again.status).toBe(409);
    expect(again.body.context.reason).toBe("already_launched");
    expect(await operationsOf(t.id)).toHaveLength(1);
  });

  it("refuses a tx- request_id to every caller but intake (403 request_id_reserved): the launch records its own operation", async () => {
    const t = await createTx({ received_amount_xaf: 6100 });
    const squat = { operator: "operator_b", client: { msisdn: "690999888", nom: "Someone Else" }, montant: 250_000 };
    for (const requestId of [`tx-${t.id}`, `tx-${t.id}-again`, `TX-${t.id}`]) {
      const byAgent = await sys.api.post("/v1/operations", {
        token: colleague.token,
        body: { ...squat, request_id: requestId },
      });
      const byKey = await sys.api.post("/v1/operations", {
        apiKey: true,
        body: { ...squat, request_id: requestId, agent_id: colleague.agentId },
      });
      for (const res of [byAgent, byKey]) {
        expect([res.status, res.body.code, res.body.context.reason]).toEqual([
          403,
          "not_allowed",
          "request_id_reserved",
        ]);
        expect(res.body.operation_id).toBeUndefined();
      }
    }
    expect(await sys.db.query(`select 1 from dispatch.operations where request_id ilike $1`, [`tx-${t.id}%`])).toEqual(
      [],
    );
    await confirm(t.id);
    const res = await launch(t.id);
    expect(res.status).toBe(200);
    const op = await sys.api.get(`/v1/operations/${res.body.operation_id}`, { token: agent.token });
    expect(op.body).toMatchObject({ request_id: `tx-${t.id}`, montant: 6100, msisdn_dest: "690111222" });
    // Even the launched id cannot be replayed from outside to read or reuse it.
    const replay = await sys.api.post("/v1/operations", {
      apiKey: true,
      body: { ...squat, request_id: `tx-${t.id}`, agent_id: agent.agentId },
    });
    expect([replay.status, replay.body.context.reason]).toEqual([403, "request_id_reserved"]);
  });

  it("releases the claim when dispatch refuses with 422 (balance short of the amount)", async () => {
    // Within the grant's 500 000 FCFA, above the SIM's measured 300 000.
    const t = await createTx({ received_amount_xaf: 400_000 });
    await confirm(t.id);
    const res = await launch(t.id);
    expect(res.status).toBe(422);
    expect(res.body).toMatchObject({ code: "refused", context: { reason: "insufficient_balance" } });
    expect((await get(t.id)).body).toMatchObject({
      state: "pending",
      launched_by: null,
      launched_at: null,
      operation_id: null,
    });
    expect(await operationsOf(t.id)).toEqual([]);
  });

  it("releases the claim when dispatch refuses the launching agent's access (403, no grant)", async () => {
    const stranger = await sys.api.createAgent(admin.token, { login: "tx-no-grant" });
    const t = await createTx();
    await confirm(t.id, stranger.token);
    const res = await launch(t.id, stranger.token);
    expect(res.status).toBe(403);
    expect(res.body).toMatchObject({ code: "not_allowed", context: { reason: "no_grant" } });
    expect((await get(t.id)).body).toMatchObject({ state: "pending", launched_by: null, operation_id: null });
    expect(await operationsOf(t.id)).toEqual([]);
    expect((await launch(t.id, agent.token)).status).toBe(200);
  });

  it("releases the claim when dispatch refuses with 423 (circuit breaker)", async () => {
    const t = await createTx();
    await confirm(t.id);
    await setCircuitBreaker(sys.api, admin.token, true);
    try {
      const res = await launch(t.id);
      expect(res.status).toBe(423);
      expect(res.body.code).toBe("locked");
      expect((await get(t.id)).body).toMatchObject({ state: "pending", launched_by: null });
    } finally {
      // Lifting restores the handsets the breaker froze.
      expect((await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token })).status).toBe(200);
    }
    expect((await launch(t.id)).status).toBe(200);
  });

  it("answers 423 device_frozen when the selected SIM's handset is frozen, and releases the claim", async () => {
    const t = await createTx();
    await confirm(t.id);
    // Tripping the breaker froze every handset; switching it off leaves them frozen until lifted.
    await setCircuitBreaker(sys.api, admin.token, true);
    await setCircuitBreaker(sys.api, admin.token, false);
    try {
      const res = await launch(t.id);
      expect([res.status, res.body.code, res.body.context.reason]).toEqual([423, "locked", "device_frozen"]);
      expect(res.body.context.device_ids).toContain(sim.deviceId);
      expect((await get(t.id)).body).toMatchObject({ state: "pending", launched_by: null });
    } finally {
      expect((await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token })).status).toBe(200);
    }
    expect((await launch(t.id)).status).toBe(200);
  });

  it("gives one operation and 19 refusals to 20 agents launching one transaction at once", async () => {
    const agents = [];
    for (let i = 0; i < 20; i++) {
      const a = await sys.api.createAgent(admin.token, { login: `tx-racer-${i}` });
      await grantAccess(sys.api, admin.token, a.agentId, { simIds: [sim.simId] });
      agents.push(a);
    }
    const t = await createTx();
    await confirm(t.id);
    const results = await Promise.all(agents.map((a) => launch(t.id, a.token)));
    expect(results.filter((r) => r.status === 200)).toHaveLength(1);
    // A racer that read the transaction pending and lost the claim hears 409; one that
    // read it already launched by another no longer sees it (404, as get one answers).
    const refusals = results.filter((r) => r.status !== 200).map((r) => `${r.status} ${r.body.context.reason}`);
    expect(refusals).toHaveLength(19);
    for (const r of refusals) expect(["409 already_launched", "404 transaction_not_found"]).toContain(r);
    expect(await operationsOf(t.id)).toHaveLength(1);
    const winner = results.find((r) => r.status === 200)!;
    expect((await get(t.id)).body.operation_id).toBe(winner.body.operation_id);
  });

  it("lets exactly one of a launch and a cancel racing on one transaction win", async () => {
    for (let i = 0; i < 5; i++) {
      const t = await createTx();
      await confirm(t.id);
      const [l, c] = await Promise.all([
        launch(t.id, agent.token),
        sys.api.post(`/v1/transactions/${t.id}/cancel`, { token: agent.token, body: { reason: "race" } }),
      ]);
      const after = (await get(t.id)).body;
      const ops = await operationsOf(t.id);
      if (l.status === 200) {
        expect(`${c.status} ${c.body.context.reason}`).toBe("409 transaction_not_pending");
        expect(after.state).toBe("launched");
        expect(ops).toHaveLength(1);
      } else {
        expect(c.status).toBe(200);
        // The launch read the transaction pending and lost (409), or read it cancelled,
        // which an agent no longer sees (404).
        expect(["409 transaction_not_pending", "404 transaction_not_found"]).toContain(
          `${l.status} ${l.body.context.reason}`,
        );
        expect(after).toMatchObject({ state: "cancelled", operation_id: null });
        expect(ops).toEqual([]);
      }
    }
  });
});

describe("settlement and events", () => {
  it("settles a launched transaction when its operation ends (cancelled on the operation: rejected)", async () => {
    const t = await launchedTx();
    const cancelled = await sys.api.post(`/v1/operations/${t.operation_id}/cancel`, { token: agent.token });
    expect(cancelled.status).toBe(200);
    const done = await eventually(async () => {
      const b = (await get(t.id)).body;
      return b.state === "done" ? b : undefined;
    });
    expect(done).toMatchObject({
      outcome: "rejected",
      settled_by: agent.agentId,
      settled_by_name: "Olga Owner",
      operation_id: t.operation_id,
    });
    expect(done.settled_at).not.toBeNull();
  });

  it("follows a no_evidence operation later arbitrated confirmed; a redelivered event changes nothing", async () => {
    const t = await launchedTx();
    const changed = (status: string, actorAgentId: string, trigger: string) => ({
      topic: "operations",
      key: t.operation_id,
      schema: OperationChangedSchema,
      message: create(OperationChangedSchema, {
        operation: { operationId: t.operation_id, requestId: `tx-${t.id}`, status, agentId: agent.agentId },
        previousStatus: "awaiting_evidence",
        trigger,
        actorAgentId,
      }),
    });
    const settledAs = (outcome: string) =>
      eventually(async () => {
        const b = (await get(t.id)).body;
        return b.state === "done" && b.outcome === outcome ? b : undefined;
      });
    const swept = await publishTestEvent(sys, changed("no_evidence", "", "sweep"));
    expect(await settledAs("no_evidence")).toMatchObject({ settled_by: "system", settled_by_name: "System" });
    await publishTestEvent(sys, changed("confirmed", colleague.agentId, "arbitrate"));
    const arbitrated = await settledAs("confirmed");
    expect(arbitrated).toMatchObject({ settled_by: colleague.agentId, settled_by_name: "Colin Colleague" });
    // The sweep's event again (a broker redelivery): the inbox drops it.
    await publishTestEvent(sys, { ...changed("no_evidence", "", "sweep"), eventId: swept });
    // A change of an operation that is no transaction's: skipped without a transaction, no inbox row.
    const foreign = await publishTestEvent(sys, {
      ...changed("confirmed", colleague.agentId, "arbitrate"),
      message: create(OperationChangedSchema, {
        operation: { operationId: t.operation_id, requestId: "board-request", status: "confirmed" },
        previousStatus: "awaiting_evidence",
        trigger: "arbitrate",
      }),
    });
    // An event behind them on the same key: once it is in the inbox, both before it were handled.
    const behind = await publishTestEvent(sys, changed("confirmed", colleague.agentId, "arbitrate"));
    await eventually(async () => {
      const rows = await sys.db.query(
        `select count(*)::int as n from intake.inbox where consumer = 'intake.operations' and event_id = $1`,
        [behind],
      );
      return rows[0].n === 1 ? true : undefined;
    });
    expect((await get(t.id)).body).toMatchObject({ outcome: "confirmed", settled_by: colleague.agentId });
    expect(await sys.db.query(`select 1 from intake.inbox where event_id = $1`, [foreign])).toEqual([]);
    const settles = await sys.db.query(
      `select count(*)::int as n from intake.outbox where key = $1 and type like '%TransactionChanged'`,
      [t.id],
    );
    // create, confirm_payment, launch, operation_linked, settle (no_evidence), settle (confirmed)
    expect(settles[0].n).toBe(6);
  });

  it("publishes every transition of a transaction on the transactions topic", async () => {
    const t = await createTx();
    await sys.api.patch(`/v1/transactions/${t.id}/receiver`, { token: agent.token, body: { receiver_name: "B" } });
    await confirm(t.id);
    await sys.api.delete(`/v1/transactions/${t.id}/payment-confirmation`, { token: agent.token });
    await confirm(t.id);
    const launched = await launch(t.id);
    await sys.api.post(`/v1/operations/${launched.body.operation_id}/cancel`, { token: agent.token });
    const triggers = await eventually(() => {
      const mine = changes.filter((c) => c.key === t.id);
      return mine.length >= 8 ? mine : undefined;
    });
    expect(triggers.map((c) => `${c.trigger}:${c.state}`)).toEqual([
      "create:pending",
      "correct_receiver:pending",
      "confirm_payment:pending",
      "undo_payment:pending",
      "confirm_payment:pending",
      "launch:launched",
      "operation_linked:launched",
      "settle:done",
    ]);
    expect(triggers.at(-1)!.operationId).toBe(launched.body.operation_id);
  });
});
