import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, TEST_BOOTSTRAP_TOKEN, type TestSystem } from "../../../../test/support/system.ts";
import { bearer, dataOf } from "../../../../test/support/api.ts";
import {
  grantAccess,
  healthyReport,
  provisionHandset,
  setCircuitBreaker,
  type Device,
  type Sim,
} from "../../../../test/support/fleet-fixtures.ts";

// Through the gateway: the contract's default codes with the reason in
// context.reason, the exact meanings of 409 and 423 on create, and each validation point
// the contract names.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let agent: { token: string; agentId: string };
let device: Device;
let sim: Sim;
/** A handset of its own for the outcome reports, so no other test's queued work is claimed first. */
let dialer: { device: Device; sim: Sim };

beforeAll(async () => {
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  // Bootstrap ignores `role`, whatever its value (the contract: "role ignored, account is always admin").
  const boot = await sys.api.post("/v1/agents/bootstrap", {
    headers: { "x-bootstrap-token": TEST_BOOTSTRAP_TOKEN },
    body: { login: "root", full_name: "Root Admin", password: "root-password-1", role: "no-such-role" },
  });
  expect([boot.status, boot.body.role]).toEqual([201, "admin"]);
  admin = { token: await sys.api.login("root", "root-password-1"), agentId: boot.body.agent_id };
  agent = await sys.api.createAgent(admin.token, { login: "fidel", full_name: "Fidel Agent" });
  const handset = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 300_000 });
  [device, sim] = [handset.device, handset.sims[0]];
  const other = await provisionHandset(sys.api, admin.token, { operators: ["operator_a"], balance: 300_000 });
  dialer = { device: other.device, sim: other.sims[0] };
  await grantAccess(sys.api, admin.token, agent.agentId, {
    simIds: [sim.simId, dialer.sim.simId],
    opTypes: ["deposit"],
  });
});
afterAll(async () => {
  await sys?.stop();
});

const body = (o: Record<string, unknown> = {}) => ({
  request_id: randomUUID(),
  operator: "operator_b",
  client: { msisdn: "690000001", nom: "Jean Dupont" },
  montant: 5000,
  ...o,
});
const create = (o: Record<string, unknown> = {}) =>
  sys.api.post("/v1/operations", { token: agent.token, body: body(o) });
const refusal = (res: { status: number; body: { code: string; context: { reason?: string } } }) => [
  res.status,
  res.body.code,
  res.body.context.reason,
];

describe("the gateway's own errors follow the rule: default code, reason in context.reason", () => {
  it("401 without a credential, 403 for another kind of credential or an inactive agent", async () => {
    expect(refusal(await sys.api.get("/v1/agents/me"))).toEqual([401, "not_signed_in", "credentials_missing"]);
    expect(refusal(await sys.api.get("/v1/agents/me", { token: device.token }))).toEqual([
      403,
      "not_allowed",
      "credential_not_accepted",
    ]);
    const gone = await sys.api.createAgent(admin.token, { login: "gone" });
    // Every way of deactivating revokes the sessions: an inactive agent's live session is
    // written directly, to hold the gateway's own refusal of an inactive caller.
    await sys.db.query(`update fleet.agents set is_active = false where id = $1`, [gone.agentId]);
    expect(refusal(await sys.api.get("/v1/operations", { token: gone.token }))).toEqual([
      403,
      "not_allowed",
      "agent_inactive",
    ]);
  });

  it("400 for malformed JSON, 413 for a body over 1 MB, 404 for an unknown route", async () => {
    expect(refusal(await sys.api.post("/v1/operations", { token: agent.token, raw: "{" }))).toEqual([
      400,
      "bad_request",
      "malformed_json",
    ]);
    const huge = JSON.stringify({ ...body(), merchant_code: "x".repeat(1_100_000) });
    expect(refusal(await sys.api.post("/v1/operations", { token: agent.token, raw: huge }))).toEqual([
      413,
      "bad_request",
      "body_too_large",
    ]);
    expect(refusal(await sys.api.get("/v1/nowhere", { token: agent.token }))).toEqual([
      404,
      "not_found",
      "route_not_found",
    ]);
  });
});

describe("create operation: 409 means the request_id exists, nothing else", () => {
  it("answers a replayed request_id with 409 and the existing operation", async () => {
    // Through the typed client: the 202 body and the 409 operation are the document's types.
    const typed = () =>
      sys.api.client.POST("/v1/operations", {
        headers: bearer(agent.token),
        body: {
          request_id: "fidelity-replay-1",
          operator: "operator_b",
          client: { msisdn: "690000001", nom: "Jean Dupont" },
          montant: 5000,
        },
      });
    const first = dataOf("create", await typed());
    const again = await typed();
    expect([first.status, again.response.status]).toEqual(["queued", 409]);
    expect(again.error).toMatchObject({ operation_id: first.operation_id, request_id: "fidelity-replay-1" });
  });

  it("refuses a replay of an operation still in flight with 422 retry_not_allowed", async () => {
    const parent = dataOf(
      "create",
      await sys.api.client.POST("/v1/operations", {
        headers: bearer(agent.token),
        body: {
          request_id: randomUUID(),
          operator: "operator_b",
          client: { msisdn: "690000001", nom: "Jean Dupont" },
          montant: 5000,
        },
      }),
    );
    expect(refusal(await create({ parent_operation_id: parent.operation_id }))).toEqual([
      422,
      "refused",
      "retry_not_allowed",
    ]);
  });
});

describe("client.nom is required and non-empty", () => {
  it.each([
    ["missing", { msisdn: "690000001" }],
    ["empty", { msisdn: "690000001", nom: "" }],
    ["blank", { msisdn: "690000001", nom: "   " }],
  ])("answers 422 invalid_request when it is %s", async (_case, client) => {
    const res = await create({ client });
    expect([res.status, res.body.code]).toEqual([422, "invalid_request"]);
    expect(res.body.detail).toEqual([{ field: "body.client.nom", message: expect.any(String) }]);
  });
});

describe("423 is the breaker alone; a frozen handset is 422", () => {
  it("answers 423 circuit_breaker while active (create only), then 422 device_frozen for a SIM whose handset stays frozen", async () => {
    const matching = (o: Record<string, unknown> = {}) =>
      sys.api.post("/v1/operations/matching", {
        token: agent.token,
        body: { beneficiary_msisdn: "690000002", montant: 1500, ...o },
      });
    try {
      const tripped = dataOf(
        "trip",
        await sys.api.client.PUT("/v1/admin/circuit-breaker", { headers: bearer(admin.token), body: { active: true } }),
      );
      expect([tripped.status, tripped.frozen_until_lift_device_ids]).toEqual([
        "active",
        expect.arrayContaining([device.deviceId]),
      ]);
      const locked = await create();
      expect([locked.status, locked.body]).toEqual([
        423,
        { detail: "circuit_breaker", code: "locked", context: { reason: "circuit_breaker" } },
      ]);
      // Matching create lists no 423: the breaker stops machine dialling only (docs/decisions/dispatch.md);
      // with every handset frozen it finds no SIM, a 422.
      expect(refusal(await matching())).toEqual([422, "refused", "no_active_sim"]);

      // Resetting the breaker leaves the handsets frozen until the lift, and says so.
      const reset = await setCircuitBreaker(sys.api, admin.token, false);
      expect(reset.body.status).toBe("inactive");
      expect(reset.body.frozen_until_lift_device_ids).toContain(device.deviceId);
      expect(refusal(await create({ sim_id: sim.simId }))).toEqual([422, "refused", "device_frozen"]);
      expect(refusal(await matching({ sim_id: sim.simId }))).toEqual([422, "refused", "device_frozen"]);
    } finally {
      expect((await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token })).status).toBe(200);
    }
    expect((await setCircuitBreaker(sys.api, admin.token, false)).body.frozen_until_lift_device_ids).toEqual([]);
  });
});

describe("the health report's limits", () => {
  const heartbeat = (report: Record<string, unknown>, battery = 80) =>
    sys.api.post("/v1/device/heartbeat", {
      token: device.token,
      body: { app_version: "1.2.0", battery, network: "4G", sims: [], report },
    });
  const sims = (n: number) => Array.from({ length: n }, (_, i) => ({ slot: i, operator: "operator_b", present: true }));
  const errors = (n: number) => Array.from({ length: n }, () => ({ at: new Date().toISOString(), message: "boom" }));

  it("accepts up to 4 SIMs, up to 5 recent errors and a battery level from 0 to 100", async () => {
    const report = { ...healthyReport(), sims: sims(4), recent_errors: errors(5), battery: { level: 100 } };
    expect((await heartbeat(report, 0)).status).toBe(204);
  });

  // Past the limits the heartbeat is kept and the excess trimmed (a dropped
  // heartbeat made the handset look silent); handset-fleet.test.ts checks what is stored.
  it("keeps a heartbeat with 5 SIMs or 6 recent errors (the excess is trimmed)", async () => {
    expect((await heartbeat({ ...healthyReport(), sims: sims(5) })).status).toBe(204);
    expect((await heartbeat({ ...healthyReport(), recent_errors: errors(6) })).status).toBe(204);
  });

  it.each([
    ["a battery level of 101", { battery: { level: 101 } }, 80, "body.report.battery.level"],
    ["a battery level below 0", { battery: { level: -1 } }, 80, "body.report.battery.level"],
    ["a heartbeat battery of 101", {}, 101, "body.battery"],
  ])("refuses %s with 422 invalid_request", async (_case, report, battery, field) => {
    const res = await heartbeat(report, battery);
    expect([res.status, res.body.code]).toEqual([422, "invalid_request"]);
    expect(res.body.detail).toEqual([{ field, message: expect.any(String) }]);
  });
});

describe("days outside 1 to 365 is a 422 on every windowed list", () => {
  it.each([
    "/v1/operations/unproven",
    "/v1/operations/settled-on-word",
    "/v1/evidences/movements",
    "/v1/evidences?unmatched=true",
  ])("%s", async (path) => {
    const sep = path.includes("?") ? "&" : "?";
    for (const days of ["0", "366", "-1"]) {
      const res = await sys.api.get(`${path}${sep}days=${days}`, { token: agent.token });
      expect([res.status, res.body.code], `days=${days}`).toEqual([422, "invalid_request"]);
    }
    expect((await sys.api.get(`${path}${sep}days=365`, { token: agent.token })).status).toBe(200);
  });
});

describe("outcome report: failure_reason, replay and 409 as docs/decisions/dispatch.md states", () => {
  const report = (operationId: string, outcome: string, extra: Record<string, unknown> = {}) =>
    sys.api.post("/v1/device/outcome", {
      token: dialer.device.token,
      body: { operation_id: operationId, outcome, executed_at: new Date().toISOString(), ...extra },
    });
  const claim = async () => {
    const created = await create({ operator: "operator_a", client: { msisdn: "670000001", nom: "Jean" } });
    expect(created.status).toBe(202);
    const next = await sys.api.nextWork(dialer.device.token);
    expect(next.body.operation_id).toBe(created.body.operation_id);
    return created.body.operation_id as string;
  };

  it("falls back to the outcome value for failure_reason; the same outcome again is 200, another 409", async () => {
    const id = await claim();
    const first = await report(id, "ussd_failed");
    expect([first.status, first.body.status]).toEqual([200, "failed"]);
    const op = await sys.api.get(`/v1/operations/${id}`, { token: agent.token });
    expect(op.body.failure_reason).toBe("ussd_failed");
    const again = await report(id, "ussd_failed");
    expect([again.status, again.body.status]).toEqual([200, "failed"]);
    expect(refusal(await report(id, "ussd_ok"))).toEqual([409, "conflict", "outcome_conflict"]);
  });

  it("keeps failure_detail as failure_reason when sent", async () => {
    const id = await claim();
    expect((await report(id, "ussd_failed", { failure_detail: "Solde insuffisant" })).status).toBe(200);
    expect((await sys.api.get(`/v1/operations/${id}`, { token: agent.token })).body.failure_reason).toBe(
      "Solde insuffisant",
    );
  });
});
