import { randomUUID } from "node:crypto";
import { beforeAll, describe, expect, it } from "vitest";
import type { TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  ADMIN_ONLY,
  grantAccess,
  provisionHandset,
  recordBalance,
  setCircuitBreaker,
  statusesFor,
  type Credentials,
  type Sim,
  EVERY_CREDENTIAL,
} from "../../../../test/support/fleet-fixtures.ts";

// The dispatch routes through the gateway: statuses, bodies and scope for every route and
// credential. The journeys with the handset simulator are in handset-dispatch.test.ts.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };
let agent: { token: string; agentId: string };
let colleague: { token: string; agentId: string };
let simB: Sim;
let device: { deviceId: string; token: string };

const OPERATION_KEYS = [
  "operation_id",
  "request_id",
  "status",
  "origin",
  "op_type",
  "sim_id",
  "contact_id",
  "device_id",
  "device_label",
  "agent_id",
  "operator",
  "montant",
  "msisdn_dest",
  "dest_name",
  "ussd_string",
  "ussd_response",
  "reject_reason",
  "failure_reason",
  "evidence",
  "retry_allowed",
  "retry_requires_confirmation",
  "created_at",
  "started_at",
  "finished_at",
];

routeSystem({ prefix: "ops", env: { DEVICE_COOLDOWN_S: "0" } }, (s) => ({ sys, admin, creds } = s));
beforeAll(async () => {
  agent = await sys.api.createAgent(admin.token, { login: "ops-owner", full_name: "Olga Owner" });
  colleague = await sys.api.createAgent(admin.token, { login: "ops-colleague" });
  const handset = await provisionHandset(sys.api, admin.token, {
    operators: ["operator_b", "operator_a"],
    balance: 300_000,
  });
  simB = handset.sims[0];
  device = handset.device;
  await grantAccess(sys.api, admin.token, agent.agentId, {
    simIds: handset.sims.map((s) => s.simId),
    opTypes: ["deposit", "balance"],
  });
  // The fixtures' "agent" credential holds the same SIMs.
  const me = await sys.api.get("/v1/agents/me", { token: creds.agent.token });
  await grantAccess(sys.api, admin.token, me.body.agent_id, { simIds: [simB.simId] });
});

const body = (o: Record<string, unknown> = {}) => ({
  request_id: randomUUID(),
  operator: "operator_b",
  client: { msisdn: "690000001", nom: "Jean Dupont" },
  montant: 5000,
  ...o,
});
const createAs = async (token: string, o: Record<string, unknown> = {}) =>
  sys.api.post("/v1/operations", { token, body: body(o) });

describe("POST /v1/operations (createOperation)", () => {
  it("answers 202 with operation_id and status queued", async () => {
    const res = await createAs(agent.token);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ operation_id: expect.stringMatching(/^[0-9a-f-]{36}$/), status: "queued" });
    expect(res.headers.get("x-correlation-id")).toBeTruthy();
  });

  it("answers a repeated request_id with 409 and the existing operation object, every field of the contract", async () => {
    const b = body({ contact_id: "c-9" });
    const first = await sys.api.post("/v1/operations", { token: agent.token, body: b });
    const again = await sys.api.post("/v1/operations", { token: agent.token, body: b });
    expect(again.status).toBe(409);
    expect(Object.keys(again.body).sort()).toEqual([...OPERATION_KEYS].sort());
    expect(again.body).toMatchObject({
      operation_id: first.body.operation_id,
      request_id: b.request_id,
      status: "queued",
      origin: "assisted",
      op_type: "deposit",
      sim_id: simB.simId,
      contact_id: "c-9",
      device_id: device.deviceId,
      agent_id: agent.agentId,
      operator: "operator_b",
      montant: 5000,
      msisdn_dest: "690000001",
      dest_name: "Jean Dupont",
      ussd_string: null,
      evidence: null,
      retry_allowed: false,
      retry_requires_confirmation: null,
      started_at: null,
      finished_at: null,
    });
  });

  it.each([
    ["montant", { montant: 5001 }],
    ["client.msisdn", { client: { msisdn: "690000002", nom: "Jean Dupont" } }],
    // A known request_id is answered even where a gate would refuse (here the prefix rule).
    ["operator", { operator: "operator_a" }],
    ["type_op", { type_op: "balance" }],
    ["sim_id", { sim_id: "sim-that-was-not-chosen" }],
    // The name check, the recipient's name, the contact and the parent are the request's too.
    ["partner_verified", { partner_verified: false }],
    ["client.nom", { client: { msisdn: "690000001", nom: "Someone Else" } }],
    ["contact_id", { contact_id: "c-other" }],
    ["parent_operation_id", { parent_operation_id: randomUUID() }],
  ])(
    "answers a replay whose %s differs with 409 request_id_reused, never the first operation",
    async (field, change) => {
      const b = body();
      const first = await sys.api.post("/v1/operations", { token: agent.token, body: b });
      expect(first.status).toBe(202);
      const other = await sys.api.post("/v1/operations", { token: agent.token, body: { ...b, ...change } });
      expect([other.status, other.body.code, other.body.context.reason, other.body.context.differs]).toEqual([
        409,
        "conflict",
        "request_id_reused",
        [field],
      ]);
      expect(JSON.stringify(other.body)).not.toContain(first.body.operation_id);
      // The same request again is still the replay, with the first operation.
      const same = await sys.api.post("/v1/operations", { token: agent.token, body: b });
      expect([same.status, same.body.operation_id]).toEqual([409, first.body.operation_id]);
    },
  );

  it("answers an API-key replay naming another owning agent with 409 request_id_reused", async () => {
    const b = body({ agent_id: agent.agentId });
    expect((await sys.api.post("/v1/operations", { apiKey: true, body: b })).status).toBe(202);
    const other = await sys.api.post("/v1/operations", { apiKey: true, body: { ...b, agent_id: colleague.agentId } });
    expect([other.status, other.body.context.reason, other.body.context.differs]).toEqual([
      409,
      "request_id_reused",
      ["agent_id"],
    ]);
  });

  it("executes once when 10 repeats race through the gateway", async () => {
    const b = body();
    const answers = await Promise.all(
      Array.from({ length: 10 }, () => sys.api.post("/v1/operations", { token: agent.token, body: b })),
    );
    expect(answers.map((a) => a.status).sort()).toEqual([202, ...Array(9).fill(409)]);
    const ids = new Set(answers.map((a) => a.body.operation_id));
    expect(ids.size).toBe(1);
    const rows = await sys.db.query(`select count(*)::int as n from dispatch.operations where request_id = $1`, [
      b.request_id,
    ]);
    expect(rows[0].n).toBe(1);
  });

  it("shares a racing create's answer only with the same caller: another agent's identical request learns nothing", async () => {
    const b = body();
    const answers = await Promise.all(
      [agent, colleague, agent, colleague, agent, colleague, agent].map(async (who) => ({
        who,
        res: await sys.api.post("/v1/operations", { token: who.token, body: b }),
      })),
    );
    const own = answers.filter((a) => a.who === agent).map((a) => a.res);
    expect(own.map((r) => r.status).sort()).toEqual([202, 409, 409, 409]);
    expect(new Set(own.map((r) => r.body.operation_id)).size).toBe(1);
    for (const { res } of answers.filter((a) => a.who === colleague)) {
      // Refused at its own gate (no grant) or as a taken request_id: never the operation.
      expect([
        [403, "no_grant"],
        [409, "request_id_taken"],
      ]).toContainEqual([res.status, res.body.context?.reason]);
      expect(res.body.operation_id).toBeUndefined();
    }
  });

  it("takes agent_id from the API key's body and refuses it missing", async () => {
    const ok = await sys.api.post("/v1/operations", { apiKey: true, body: body({ agent_id: agent.agentId }) });
    expect(ok.status).toBe(202);
    const got = await sys.api.get(`/v1/operations/${ok.body.operation_id}`, { token: agent.token });
    expect([got.body.agent_id, got.body.origin]).toEqual([agent.agentId, "aggregated"]);
    const missing = await sys.api.post("/v1/operations", { apiKey: true, body: body() });
    expect([missing.status, missing.body.code]).toEqual([422, "invalid_request"]);
  });

  it.each([
    [
      "operator mismatch",
      { client: { msisdn: "670000001", nom: "X" } },
      "Operator mismatch: 670000001 is operator_a, but the operation declares operator_b",
    ],
    ["unknown prefix", { client: { msisdn: "662000000", nom: "X" } }, "Cannot determine the operator for 662000000"],
    [
      "insufficient balance",
      { montant: 400_000 },
      // Available is the measured 300000 less the deposits this file already queued on the SIM.
      expect.stringMatching(/^Insufficient balance on SIM .*: requested 400000, available (2\d{5}|300000) /),
    ],
  ])("answers 422 for %s with the contract's text", async (_what, o, detail) => {
    const res = await createAs(agent.token, o);
    expect([res.status, res.body.detail]).toEqual([422, detail]);
  });

  it("answers 403 naming the rule when the grant does not allow it", async () => {
    const res = await createAs(agent.token, {
      type_op: "withdrawal",
      merchant_code: "M1",
      client: { msisdn: "690000001", nom: "X" },
    });
    expect([res.status, res.body.code, res.body.context.reason, res.body.detail]).toEqual([
      403,
      "not_allowed",
      "not_in_grant_type",
      "Access profile does not allow withdrawal operations",
    ]);
    const none = await createAs(colleague.token);
    expect([none.status, none.body.code, none.body.context.reason]).toEqual([403, "not_allowed", "no_grant"]);
  });

  it("answers 422 invalid_request with the list of problems for a malformed body", async () => {
    const res = await sys.api.post("/v1/operations", {
      token: agent.token,
      body: { request_id: "x", operator: "operator_z", montant: -1 },
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    expect(res.body.detail.map((p: { field: string }) => p.field)).toEqual(
      expect.arrayContaining(["body.operator", "body.montant", "body.client"]),
    );
  });

  it("answers 423 with detail circuit_breaker while the breaker is active", async () => {
    await setCircuitBreaker(sys.api, admin.token, true);
    try {
      const res = await createAs(agent.token);
      expect(res.status).toBe(423);
      expect(res.body).toEqual({ detail: "circuit_breaker", code: "locked", context: { reason: "circuit_breaker" } });
    } finally {
      // Tripping froze every handset; the lift route restores them.
      expect((await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token })).status).toBe(200);
    }
  });

  it("refuses a stale balance reading (older than 24 hours)", async () => {
    const stale = await provisionHandset(sys.api, admin.token, { operators: ["operator_a"] });
    await recordBalance(sys.api, stale.sims[0].simId, 50_000, { observedAt: new Date(Date.now() - 25 * 3600_000) });
    const res = await sys.api.post("/v1/operations", {
      token: admin.token,
      body: body({ operator: "operator_a", client: { msisdn: "670000001", nom: "X" }, sim_id: stale.sims[0].simId }),
    });
    expect([res.status, res.body.code, res.body.context.reason]).toEqual([422, "refused", "stale_balance"]);
    expect(res.body.detail).toMatch(/^SIM .* balance was last measured at /);
  });
});

describe("the balance rules hold back every debit not yet proven or ended", () => {
  it("counts a dialled deposit awaiting its SMS against the SIM: a second one the rest cannot cover is refused", async () => {
    const handset = await provisionHandset(sys.api, admin.token, { operators: ["operator_a"], balance: 100_000 });
    const simId = handset.sims[0]!.simId;
    const dialler = await sys.api.createAgent(admin.token, { login: "ops-dialler" });
    await grantAccess(sys.api, admin.token, dialler.agentId, { simIds: [simId] });
    const deposit = (montant: number) =>
      createAs(dialler.token, { operator: "operator_a", client: { msisdn: "670000001", nom: "X" }, montant });
    const first = await deposit(70_000);
    expect(first.status).toBe(202);
    const claimed = await sys.api.nextWork(handset.device.token);
    expect([claimed.status, claimed.body.operation_id]).toEqual([200, first.body.operation_id]);
    const reported = await sys.api.post("/v1/device/outcome", {
      token: handset.device.token,
      body: { operation_id: first.body.operation_id, outcome: "ussd_ok", executed_at: new Date().toISOString() },
    });
    expect([reported.status, reported.body.status]).toEqual([200, "awaiting_evidence"]);
    const second = await deposit(40_000);
    expect([second.status, second.body.context.reason]).toEqual([422, "insufficient_balance"]);
    expect(second.body.context).toMatchObject({ available: 30_000, reserved: 70_000, measured_balance: 100_000 });
    expect((await deposit(30_000)).status).toBe(202);
  });
});

describe("an edit of a matching operation runs the gates of its creation", () => {
  it("refuses an amount over the grant's max_amount (403) or the SIM's free balance (422), and keeps the operation", async () => {
    const handset = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 80_000 });
    const simId = handset.sims[0]!.simId;
    const dialler = await sys.api.createAgent(admin.token, { login: "ops-hand-dialler" });
    await grantAccess(sys.api, admin.token, dialler.agentId, { simIds: [simId], maxAmount: 50_000 });
    const matching = async (montant: number) => {
      const res = await sys.api.post("/v1/operations/matching", {
        token: dialler.token,
        body: { beneficiary_msisdn: "690000001", montant },
      });
      expect(res.status).toBe(201);
      return res.body.operation_id as string;
    };
    const edit = (id: string, body: Record<string, unknown>) =>
      sys.api.patch(`/v1/operations/matching/${id}`, { token: dialler.token, body });
    const id = await matching(10_000);

    const over = await edit(id, { montant: 60_000 });
    expect([over.status, over.body.code, over.body.context.reason]).toEqual([403, "not_allowed", "over_max_amount"]);
    const kept = await sys.api.get(`/v1/operations/${id}`, { token: dialler.token });
    expect(kept.body.montant).toBe(10_000);

    expect((await edit(id, { montant: 40_000 })).body.montant).toBe(40_000);
    // The other operation is held too (80,000 - 40,000 leaves 40,000 for it).
    await matching(35_000);
    // Its own old amount is not counted against it: 80,000 - 35,000 = 45,000 free.
    const short = await edit(id, { montant: 46_000 });
    expect([short.status, short.body.code, short.body.context.reason]).toEqual([
      422,
      "refused",
      "insufficient_balance",
    ]);
    expect((await sys.api.get(`/v1/operations/${id}`, { token: dialler.token })).body.montant).toBe(40_000);
    expect((await edit(id, { montant: 45_000 })).body.montant).toBe(45_000);
    // A contact alone changes no debit and runs no balance gate.
    expect((await edit(id, { contact_id: "c-1" })).status).toBe(200);
  });
});

describe("list, get, cancel through the gateway", () => {
  it("lists own operations with filters; 422 for an unknown status or a malformed date; 403 for another agent's id", async () => {
    const list = await sys.api.get("/v1/operations?status=queued&limit=5", { token: agent.token });
    expect(list.status).toBe(200);
    expect(list.body.length).toBeGreaterThan(0);
    expect(list.body.length).toBeLessThanOrEqual(5);
    expect(
      list.body.every(
        (o: { agent_id: string; status: string }) => o.agent_id === agent.agentId && o.status === "queued",
      ),
    ).toBe(true);
    expect((await sys.api.get("/v1/operations?status=done", { token: agent.token })).status).toBe(422);
    expect((await sys.api.get("/v1/operations?date=2026-1-1", { token: agent.token })).status).toBe(422);
    expect(
      (await sys.api.get("/v1/operations?date_from=2026-02-02&date_to=2026-02-01", { token: agent.token })).status,
    ).toBe(422);
    expect((await sys.api.get("/v1/operations?limit=251", { token: agent.token })).status).toBe(422);
    expect((await sys.api.get(`/v1/operations?agent_id=${colleague.agentId}`, { token: agent.token })).status).toBe(
      403,
    );
    const byAdmin = await sys.api.get(`/v1/operations?agent_id=${agent.agentId}`, { token: admin.token });
    expect(byAdmin.body.every((o: { agent_id: string }) => o.agent_id === agent.agentId)).toBe(true);
  });

  it("searches on the digits of the number alone", async () => {
    const created = await createAs(agent.token, { client: { msisdn: "699765432", nom: "Zoé Nkolo" } });
    const found = await sys.api.get(`/v1/operations?search=${encodeURIComponent("76-54 32")}`, { token: agent.token });
    expect(found.body.map((o: { operation_id: string }) => o.operation_id)).toContain(created.body.operation_id);
    const byName = await sys.api.get(`/v1/operations?search=zoé nkolo`, { token: agent.token });
    expect(byName.body.map((o: { operation_id: string }) => o.operation_id)).toEqual([created.body.operation_id]);
  });

  it("answers 422 for a malformed operation id and 404 for an unknown one", async () => {
    const bad = await sys.api.get("/v1/operations/not-a-uuid", { token: agent.token });
    expect([bad.status, bad.body.code]).toEqual([422, "invalid_request"]);
    expect((await sys.api.get(`/v1/operations/${randomUUID()}`, { token: agent.token })).status).toBe(404);
  });

  it("cancels a queued operation (200, rejected, Cancelled by <full_name>.) and refuses a second cancel with 409 and its context", async () => {
    const created = await createAs(agent.token);
    const id = created.body.operation_id;
    const res = await sys.api.post(`/v1/operations/${id}/cancel`, { token: agent.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      status: "rejected",
      reject_reason: "Cancelled by Olga Owner.",
      retry_allowed: true,
      retry_requires_confirmation: false,
    });
    expect(res.body.finished_at).not.toBeNull();
    const again = await sys.api.post(`/v1/operations/${id}/cancel`, { token: agent.token });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({
      detail: `Operation ${id} is rejected and cannot be cancelled`,
      code: "operation_not_cancellable",
      context: { reason: "operation_not_cancellable", operation_id: id, operation_status: "rejected" },
    });
  });
});

describe("scope: every route and credential", () => {
  let ownOp: string;
  let matchingOp: string;
  beforeAll(async () => {
    ownOp = (await createAs(agent.token)).body.operation_id;
    matchingOp = (
      await sys.api.post("/v1/operations/matching", {
        token: agent.token,
        body: { beneficiary_msisdn: "690000002", montant: 1000 },
      })
    ).body.operation_id;
  });
  const ALL = EVERY_CREDENTIAL;
  const everyoneBut = (base: Record<string, number>) => ({
    none: 401,
    inactive: 403,
    apiKey: 403,
    wrongApiKey: 401,
    device: 403,
    revokedDevice: 401,
    ...base,
  });

  it("POST /v1/operations: API key and sessions; device 403; inactive 403", async () => {
    const statuses: Record<string, number> = {};
    for (const name of ALL) {
      statuses[name] = (
        await sys.api.request("POST", "/v1/operations", { ...creds[name], body: body({ agent_id: agent.agentId }) })
      ).status;
    }
    // The supervisor has no grant (403 no_grant); the admin bypasses the grant.
    expect(statuses).toEqual({ ...everyoneBut({ admin: 202, supervisor: 403, agent: 202 }), apiKey: 202 });
  });

  it.each([
    ["GET", "/v1/operations", { admin: 200, supervisor: 200, agent: 200 }],
    ["GET", "/v1/operations/unproven", { admin: 200, supervisor: 200, agent: 200 }],
    ["GET", "/v1/operations/settled-on-word", { admin: 200, supervisor: 200, agent: 200 }],
    ["GET", "/v1/operations/matching", { admin: 200, supervisor: 200, agent: 200 }],
  ])("%s %s: sessions only", async (method, path, expected) => {
    expect(await statusesFor(sys.api, creds, method as "GET", path, [...ALL])).toEqual(everyoneBut(expected));
  });

  it("GET /v1/operations/{id}: the owner and admins; other sessions 403", async () => {
    const statuses = await statusesFor(sys.api, creds, "GET", `/v1/operations/${ownOp}`, [...ALL]);
    expect(statuses).toEqual(everyoneBut({ admin: 200, supervisor: 403, agent: 403 }));
    expect((await sys.api.get(`/v1/operations/${ownOp}`, { token: agent.token })).status).toBe(200);
  });

  it("POST /v1/operations/{id}/cancel and settle: other sessions 403, credentials of other kinds 401/403", async () => {
    const names = ALL.filter((n) => n !== "admin");
    expect(await statusesFor(sys.api, creds, "POST", `/v1/operations/${ownOp}/cancel`, names)).toEqual(
      everyoneBut({ supervisor: 403, agent: 403 }),
    );
    expect(
      await statusesFor(sys.api, creds, "POST", `/v1/operations/${ownOp}/settle`, names, {
        outcome: "arrived",
        note: "x",
      }),
    ).toEqual(everyoneBut({ supervisor: 403, agent: 409 }));
  });

  it("POST /v1/operations/matching: sessions only, the API key 403", async () => {
    const statuses: Record<string, number> = {};
    for (const name of ALL) {
      statuses[name] = (
        await sys.api.request("POST", "/v1/operations/matching", {
          ...creds[name],
          body: { beneficiary_msisdn: "690000003", montant: 1000 },
        })
      ).status;
    }
    expect(statuses).toEqual(everyoneBut({ admin: 201, supervisor: 403, agent: 201 }));
  });

  it("PATCH and cancel a matching operation: the owner and admins", async () => {
    const names = ALL.filter((n) => n !== "admin");
    expect(
      await statusesFor(sys.api, creds, "PATCH", `/v1/operations/matching/${matchingOp}`, names, { montant: 1100 }),
    ).toEqual(everyoneBut({ supervisor: 403, agent: 403 }));
    expect(await statusesFor(sys.api, creds, "POST", `/v1/operations/matching/${matchingOp}/cancel`, names)).toEqual(
      everyoneBut({ supervisor: 403, agent: 403 }),
    );
    expect(
      (await sys.api.patch(`/v1/operations/matching/${matchingOp}`, { token: agent.token, body: { montant: 1100 } }))
        .body.montant,
    ).toBe(1100);
  });

  it("POST /v1/admin/operations/{id}/arbitrate: admin only (the API key is refused)", async () => {
    const names = ALL.filter((n) => n !== "admin");
    expect(
      await statusesFor(sys.api, creds, "POST", `/v1/admin/operations/${ownOp}/arbitrate`, names, {
        decision: "confirmed",
        note: "x",
      }),
    ).toEqual(ADMIN_ONLY);
    const wrongStatus = await sys.api.post(`/v1/admin/operations/${ownOp}/arbitrate`, {
      token: admin.token,
      body: { decision: "confirmed", note: "x" },
    });
    expect([wrongStatus.status, wrongStatus.body.code, wrongStatus.body.context.reason]).toEqual([
      422,
      "refused",
      "operation_not_arbitrable",
    ]);
    const noNote = await sys.api.post(`/v1/admin/operations/${ownOp}/arbitrate`, {
      token: admin.token,
      body: { decision: "confirmed", note: " " },
    });
    expect(noNote.status).toBe(422);
  });

  it.each([
    ["GET", "/v1/device/next", 204],
    ["GET", "/v1/device/operations", 200],
  ])("%s %s: device tokens only", async (method, path, deviceStatus) => {
    const statuses = await statusesFor(sys.api, creds, method as "GET", path, [...ALL]);
    expect(statuses).toEqual({
      none: 401,
      admin: 403,
      supervisor: 403,
      agent: 403,
      inactive: 403,
      apiKey: 403,
      wrongApiKey: 401,
      device: deviceStatus,
      revokedDevice: 401,
    });
  });

  it("POST /v1/device/outcome: device tokens only; another device's operation is 404", async () => {
    const report = { operation_id: ownOp, outcome: "ussd_ok", executed_at: new Date().toISOString() };
    const statuses = await statusesFor(sys.api, creds, "POST", "/v1/device/outcome", [...ALL], report);
    expect(statuses).toEqual({
      none: 401,
      admin: 403,
      supervisor: 403,
      agent: 403,
      inactive: 403,
      apiKey: 403,
      wrongApiKey: 401,
      device: 404,
      revokedDevice: 401,
    });
  });
});

describe("OpenAPI", () => {
  it("lists every dispatch route under the operationId of design.md §11", async () => {
    const doc = await sys.api.get("/v1/openapi.json");
    const ids = new Set<string>();
    for (const item of Object.values(doc.body.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const op of Object.values(item)) ids.add(op.operationId);
    }
    for (const id of [
      "createOperation",
      "listOperations",
      "getOperation",
      "cancelOperation",
      "createMatchingOperation",
      "listMatchingOperations",
      "updateMatchingOperation",
      "cancelMatchingOperation",
      "listUnproven",
      "settleOperation",
      "listSettledOnWord",
      "arbitrateOperation",
      "getNextOperation",
      "reportOutcome",
      "listDeviceOperations",
    ]) {
      expect(ids).toContain(id);
    }
  });
});
