import { describe, expect, it } from "vitest";
import { eventually, TEST_API_KEY, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  ADMIN_ONLY,
  createSim,
  grantAccess,
  provisionHandset,
  recordBalance,
  registerDevice,
  sendHeartbeat,
  setCircuitBreaker,
  statusesFor,
  type Credentials,
} from "../../../../test/support/fleet-fixtures.ts";
import { UNKNOWN_ID, LOCAL_WEBHOOKS } from "../../../../test/support/constants.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };
const PHRASE = "RESET SERVICE PRODUCTION DATA";

// The webhook targets this machine: http and loopback allowed explicitly, as an operator would.
routeSystem({ prefix: "adm", env: LOCAL_WEBHOOKS }, (s) => ({ sys, admin, creds } = s));

const count = async (table: string, where = "true") =>
  Number((await sys.db.query(`select count(*)::int as n from ${table} where ${where}`))[0].n);

describe("freeze and unfreeze a SIM", () => {
  it("freezes and unfreezes, idempotently, with an audit row per change", async () => {
    const sim = await createSim(sys.api, admin.token);
    const frozen = await sys.api.post(`/v1/admin/sims/${sim.simId}/freeze`, { token: admin.token });
    expect(frozen.status).toBe(200);
    expect(frozen.body).toMatchObject({ sim_id: sim.simId, status: "frozen" });
    expect((await sys.api.post(`/v1/admin/sims/${sim.simId}/freeze`, { token: admin.token })).body.status).toBe(
      "frozen",
    );
    const active = await sys.api.post(`/v1/admin/sims/${sim.simId}/unfreeze`, { token: admin.token });
    expect(active.status).toBe(200);
    expect(active.body.status).toBe("active");
    const audit = await sys.db.query(
      `select action, details from fleet.audit_log where target_id = $1 and action in ('sim.freeze', 'sim.unfreeze') order by id`,
      [sim.simId],
    );
    expect(audit.map((a) => [a.action, a.details.from, a.details.to])).toEqual([
      ["sim.freeze", "active", "frozen"],
      ["sim.unfreeze", "frozen", "active"],
    ]);
  });

  it("answers 404 for an unknown SIM and 409 for a retired one", async () => {
    expect((await sys.api.post(`/v1/admin/sims/${UNKNOWN_ID}/freeze`, { token: admin.token })).status).toBe(404);
    expect((await sys.api.post(`/v1/admin/sims/${UNKNOWN_ID}/unfreeze`, { token: admin.token })).status).toBe(404);
    const sim = await createSim(sys.api, admin.token);
    await sys.api.patch(`/v1/sims/${sim.simId}`, { token: admin.token, body: { status: "retired" } });
    const res = await sys.api.post(`/v1/admin/sims/${sim.simId}/freeze`, { token: admin.token });
    expect(res.status).toBe(409);
    expect([res.body.code, res.body.context.reason]).toEqual(["conflict", "sim_retired"]);
    expect((await sys.api.post(`/v1/admin/sims/${sim.simId}/unfreeze`, { token: admin.token })).status).toBe(409);
  });
});

describe("SIM snapshot", () => {
  it("lists every SIM with the contract's fields", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { balance: 12_345 });
    await sys.api.patch(`/v1/sims/${sims[0].simId}`, { token: admin.token, body: { low_balance_threshold: 2000 } });
    const res = await sys.api.get("/v1/admin/sims/snapshot", { token: admin.token });
    expect(res.status).toBe(200);
    const row = res.body.find((r: { id: string }) => r.id === sims[0].simId);
    expect(Object.keys(row).sort()).toEqual(
      [
        "balance_mirror",
        "balance_updated_at",
        "created_at",
        "device_id",
        "id",
        "low_balance_threshold",
        "msisdn",
        "operator",
        "status",
        "subscription_slot",
      ].sort(),
    );
    expect(row).toMatchObject({
      device_id: device.deviceId,
      subscription_slot: 0,
      operator: "operator_a",
      msisdn: sims[0].msisdn,
      balance_mirror: 12345,
      status: "active",
      low_balance_threshold: 2000,
    });
    expect(res.body.length).toBe(await count("fleet.sims"));
  });
});

describe("circuit breaker", () => {
  it("trips: answers active, freezes every active device, and the handset sees it; resetting keeps devices frozen until the lift", async () => {
    const d = await registerDevice(sys.api, admin.token);
    const tripped = await setCircuitBreaker(sys.api, admin.token, true);
    expect(tripped.body.status).toBe("active");
    expect(tripped.body.frozen_device_ids).toContain(d.deviceId);
    expect((await sys.api.get("/v1/device/me", { token: d.token })).body.status).toBe("frozen");
    expect(await count("fleet.devices", "status = 'active'")).toBe(0);
    const [row] = await sys.db.query(`select active from fleet.circuit_breaker`);
    expect(row.active).toBe(true);

    const reset = await setCircuitBreaker(sys.api, admin.token, false);
    expect(reset.body).toMatchObject({ status: "inactive", frozen_device_ids: [] });
    // The reset answer names the devices that stay frozen until the lift.
    expect(reset.body.frozen_until_lift_device_ids).toContain(d.deviceId);
    expect((await sys.api.get("/v1/device/me", { token: d.token })).body.status).toBe("frozen");

    const lift = await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token });
    expect(lift.status).toBe(200);
    expect(lift.body.status).toBe("inactive");
    expect(lift.body.restored_device_ids).toContain(d.deviceId);
    expect((await sys.api.get("/v1/device/me", { token: d.token })).body.status).toBe("active");
    expect(await count("fleet.devices", "status = 'frozen'")).toBe(0);
    const [audit] = await sys.db.query(
      `select actor_agent_id, details from fleet.audit_log where action = 'breaker.lift' order by id desc limit 1`,
    );
    expect(audit.actor_agent_id).toBe(admin.agentId);
    expect(audit.details.restored_device_ids).toContain(d.deviceId);
  });

  it("while active, operation creation answers 423 circuit_breaker; after the lift it does not", async () => {
    const create = (requestId: string) =>
      sys.api.post("/v1/operations", {
        apiKey: true,
        body: {
          request_id: requestId,
          agent_id: admin.agentId,
          operator: "operator_a",
          client: { msisdn: "670555444", nom: "Breaker Test" },
          montant: 1000,
        },
      });
    await setCircuitBreaker(sys.api, admin.token, true);
    try {
      const refused = await create("breaker-1");
      expect(refused.status).toBe(423);
      expect(refused.body.detail).toBe("circuit_breaker");
    } finally {
      await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token });
    }
    expect((await create("breaker-2")).status).not.toBe(423);
  });

  it("lifts an inactive breaker too, restoring nothing, still audited", async () => {
    const before = await count("fleet.audit_log", "action = 'breaker.lift'");
    const lift = await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token });
    expect(lift.body).toEqual({ status: "inactive", restored_device_ids: [] });
    expect(await count("fleet.audit_log", "action = 'breaker.lift'")).toBe(before + 1);
  });

  it("refuses a body without a boolean active", async () => {
    expect(
      (await sys.api.put("/v1/admin/circuit-breaker", { token: admin.token, body: { active: "yes" } })).status,
    ).toBe(422);
    expect((await sys.api.put("/v1/admin/circuit-breaker", { token: admin.token, body: {} })).status).toBe(422);
  });
});

describe("fleet limits", () => {
  const limit = (o: Record<string, unknown> = {}) => ({
    operator: "operator_a",
    op_type: "deposit",
    max_amount: 300000,
    max_daily_agent: 2000000,
    max_daily_sim: 5000000,
    ...o,
  });

  it("records a version: the current row is deactivated and a new one inserted; reads back with enforced false", async () => {
    const first = await sys.api.patch("/v1/admin/limits", { token: admin.token, body: limit() });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({
      operator: "operator_a",
      op_type: "deposit",
      max_amount: 300000,
      max_daily_agent: 2000000,
      max_daily_sim: 5000000,
    });
    expect(first.body.effective_from).toMatch(/^\d{4}-/);
    const second = await sys.api.patch("/v1/admin/limits", { token: admin.token, body: limit({ max_amount: 250000 }) });
    expect(second.body.max_amount).toBe(250000);
    const rows = await sys.db.query(
      `select max_amount, active from fleet.fleet_limits where operator = 'operator_a' and op_type = 'deposit' order by id`,
    );
    expect(rows.map((r) => [Number(r.max_amount), r.active])).toEqual([
      [300000, false],
      [250000, true],
    ]);
    const read = await sys.api.get("/v1/admin/limits", { token: admin.token });
    expect(read.status).toBe(200);
    expect(read.body.enforced).toBe(false);
    expect(
      read.body.limits.filter(
        (l: { operator: string; op_type: string }) => l.operator === "operator_a" && l.op_type === "deposit",
      ),
    ).toEqual([second.body]);
  });

  it("takes a null operator as the global limit and deposit as the default type", async () => {
    const res = await sys.api.patch("/v1/admin/limits", {
      token: admin.token,
      body: { operator: null, max_amount: 1, max_daily_agent: 2, max_daily_sim: 3 },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ operator: null, op_type: "deposit", max_amount: 1 });
    const read = await sys.api.get("/v1/admin/limits", { token: admin.token });
    expect(read.body.limits).toContainEqual(res.body);
  });

  it.each([
    ["balance", { op_type: "balance" }],
    ["mini_statement", { op_type: "mini_statement" }],
    ["diagnostic", { op_type: "diagnostic" }],
    ["an unknown operator code", { operator: "operator_z" }],
    ["a missing max_daily_sim", { max_daily_sim: undefined }],
    ["a zero max_amount", { max_amount: 0 }],
  ])("refuses %s with 422", async (_name, change) => {
    const before = await count("fleet.fleet_limits");
    const res = await sys.api.patch("/v1/admin/limits", { token: admin.token, body: limit(change) });
    expect(res.status).toBe(422);
    expect(await count("fleet.fleet_limits")).toBe(before);
  });
});

describe("fleet health (GET /v1/admin/health)", () => {
  it("reports the basic health plus devices online, unmeasured and stale SIMs, and the sweep backlog", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_a", "operator_b"] });
    await sendHeartbeat(sys.api, device.token, { sims: sims.map((s) => ({ sim_id: s.simId, present: true })) });
    await recordBalance(sys.api, sims[0].simId, 5000, { observedAt: new Date(Date.now() - 25 * 3600_000) });
    const res = await sys.api.get("/v1/admin/health", { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body.status).toMatch(/^(ok|degraded)$/);
    expect(Object.keys(res.body.services).sort()).toEqual([
      "analytics",
      "dispatch",
      "evidence",
      "fleet",
      "intake",
      "messaging",
    ]);
    expect(res.body.devices).toEqual({
      total: await count("fleet.devices"),
      online: await count("fleet.devices", "last_seen_at > now() - interval '5 minutes'"),
      offline:
        (await count("fleet.devices")) - (await count("fleet.devices", "last_seen_at > now() - interval '5 minutes'")),
      frozen: 0,
    });
    expect(res.body.devices.online).toBeGreaterThanOrEqual(1);
    expect(res.body.sims).toEqual({
      total: await count("fleet.sims"),
      unmeasured: await count("fleet.sims", "balance_updated_at is null"),
      stale: await count("fleet.sims", "balance_updated_at < now() - interval '24 hours'"),
      frozen: await count("fleet.sims", "status = 'frozen'"),
      unassigned: await count("fleet.sims", "device_id is null"),
    });
    expect(res.body.sims.stale).toBeGreaterThanOrEqual(1);
    expect(res.body.breaker_active).toBe(false);
    const backlog = res.body.operations;
    expect(Object.keys(backlog).sort()).toEqual(["past_evidence_window_not_swept", "unproven_waiting"]);
    if (backlog.past_evidence_window_not_swept === null) expect(res.body.notes.join(" ")).toContain("dispatch");
    else expect(backlog.past_evidence_window_not_swept).toEqual(expect.any(Number));
  });
});

describe("roles", () => {
  it("every admin route refuses every credential but an admin session", async () => {
    const names = Object.keys(ADMIN_ONLY) as (keyof typeof ADMIN_ONLY)[];
    const sim = await createSim(sys.api, admin.token);
    const routes: [string, string, unknown?][] = [
      ["POST", `/v1/admin/sims/${sim.simId}/freeze`],
      ["POST", `/v1/admin/sims/${sim.simId}/unfreeze`],
      ["GET", "/v1/admin/sims/snapshot"],
      ["PUT", "/v1/admin/circuit-breaker", { active: false }],
      ["POST", "/v1/admin/circuit-breaker/lift"],
      ["PATCH", "/v1/admin/limits", { operator: null, max_amount: 1, max_daily_agent: 1, max_daily_sim: 1 }],
      ["GET", "/v1/admin/limits"],
      ["POST", "/v1/admin/reset", { confirm: "nope" }],
      ["GET", "/v1/admin/health"],
    ];
    for (const [method, path, body] of routes) {
      const statuses = await statusesFor(sys.api, creds, method as "GET", path, names, body);
      expect({ route: `${method} ${path}`, statuses }).toEqual({ route: `${method} ${path}`, statuses: ADMIN_ONLY });
    }
    expect((await sys.api.get(`/v1/sims/${sim.simId}`, { token: admin.token })).body.status).toBe("active");
  });
});

describe("OpenAPI", () => {
  it("lists every fleet route with the operationId of design.md §11", async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body as {
      paths: Record<string, Record<string, { operationId: string }>>;
    };
    const ids = new Map<string, string>();
    for (const [path, methods] of Object.entries(doc.paths))
      for (const [method, op] of Object.entries(methods)) ids.set(op.operationId, `${method.toUpperCase()} ${path}`);
    expect(
      Object.fromEntries(
        [
          "freezeSim",
          "unfreezeSim",
          "getSimSnapshot",
          "setCircuitBreaker",
          "liftCircuitBreaker",
          "recordFleetLimit",
          "getFleetLimits",
          "grantAccess",
          "getAgentAccess",
          "resetProductionData",
          "getFleetHealth",
          "getOwnLimits",
          "getOwnSims",
          "createDevice",
          "listDevices",
          "getDevice",
          "updateDevice",
          "deleteDevice",
          "getDeviceHealth",
          "listSims",
          "getSim",
          "createSim",
          "updateSim",
          "deleteSim",
          "assignSim",
          "unassignSim",
          "recordSimBalance",
          "getSimHistory",
          "sendHeartbeat",
          "listDeviceSims",
          "getDeviceIdentity",
        ].map((id) => [id, ids.get(id)]),
      ),
    ).toEqual({
      freezeSim: "POST /v1/admin/sims/{sim_id}/freeze",
      unfreezeSim: "POST /v1/admin/sims/{sim_id}/unfreeze",
      getSimSnapshot: "GET /v1/admin/sims/snapshot",
      setCircuitBreaker: "PUT /v1/admin/circuit-breaker",
      liftCircuitBreaker: "POST /v1/admin/circuit-breaker/lift",
      recordFleetLimit: "PATCH /v1/admin/limits",
      getFleetLimits: "GET /v1/admin/limits",
      grantAccess: "PATCH /v1/admin/agents/{agent_id}/access",
      getAgentAccess: "GET /v1/admin/agents/{agent_id}/access",
      resetProductionData: "POST /v1/admin/reset",
      getFleetHealth: "GET /v1/admin/health",
      getOwnLimits: "GET /v1/agents/me/limits",
      getOwnSims: "GET /v1/agents/me/sims",
      createDevice: "POST /v1/devices",
      listDevices: "GET /v1/devices",
      getDevice: "GET /v1/devices/{device_id}",
      updateDevice: "PATCH /v1/devices/{device_id}",
      deleteDevice: "DELETE /v1/devices/{device_id}",
      getDeviceHealth: "GET /v1/devices/{device_id}/health",
      listSims: "GET /v1/sims",
      getSim: "GET /v1/sims/{sim_id}",
      createSim: "POST /v1/sims",
      updateSim: "PATCH /v1/sims/{sim_id}",
      deleteSim: "DELETE /v1/sims/{sim_id}",
      assignSim: "PATCH /v1/sims/{sim_id}/assignment",
      unassignSim: "DELETE /v1/sims/{sim_id}/assignment",
      recordSimBalance: "PATCH /v1/sims/{sim_id}/balance",
      getSimHistory: "GET /v1/sims/{sim_id}/history",
      sendHeartbeat: "POST /v1/device/heartbeat",
      listDeviceSims: "GET /v1/device/sims",
      getDeviceIdentity: "GET /v1/device/me",
    });
  });
});

describe("reset production data (POST /v1/admin/reset)", () => {
  const TABLES = [
    "agents",
    "sessions",
    "devices",
    "sims",
    "access_grants",
    "fleet_limits",
    "notifications",
    "webhooks",
    "webhook_deliveries",
    "audit_log",
  ];
  const snapshot = async () =>
    Object.fromEntries(await Promise.all(TABLES.map(async (t) => [t, await count(`fleet.${t}`)])));

  it.each([
    ["a wrong phrase", "RESET"],
    ["lower case", PHRASE.toLowerCase()],
    ["a trailing space", PHRASE + " "],
    ["nothing", undefined],
  ])("refuses %s with 422 before any row is touched", async (_name, confirm) => {
    const before = await snapshot();
    const res = await sys.api.post("/v1/admin/reset", {
      token: admin.token,
      body: confirm === undefined ? {} : { confirm },
    });
    expect(res.status).toBe(422);
    expect(await snapshot()).toEqual(before);
    expect((await sys.api.get("/v1/agents/me", { token: admin.token })).status).toBe(200);
  });

  it("deletes and preserves exactly the contract's lists, keeps every admin, writes one audit row with per-table counts", async () => {
    // Production-like data: agents of every role, a second admin, handsets, SIMs, grants,
    // limits, a notification and a webhook delivery.
    const second = await sys.api.createAgent(admin.token, { login: "second-admin", role: "admin" });
    const agent = await sys.api.createAgent(admin.token, { login: "to-delete" });
    const { sims } = await provisionHandset(sys.api, admin.token, { balance: 40_000 });
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sims[0].simId] });
    await sys.api.patch("/v1/admin/limits", {
      token: admin.token,
      body: { operator: "operator_b", op_type: "withdrawal", max_amount: 9, max_daily_agent: 9, max_daily_sim: 9 },
    });
    const hook = await sys.api.post("/v1/admin/webhooks", {
      token: admin.token,
      body: { url: "http://127.0.0.1:9/never", events: ["alert.raised"] },
    });
    expect(hook.status).toBe(201);
    await sys.api.patch(`/v1/sims/${sims[0].simId}`, { token: admin.token, body: { low_balance_threshold: 100_000 } });
    await eventually(
      async () => ((await count("fleet.webhook_deliveries")) > 0 ? true : undefined),
      30_000,
      "a notification and its delivery",
    );

    const before = await snapshot();
    const admins = await count("fleet.agents", "role = 'admin'");
    const nonAdmins = await count("fleet.agents", "role <> 'admin'");
    expect(nonAdmins).toBeGreaterThan(0);
    expect(before.notifications).toBeGreaterThan(0);

    const res = await sys.api.post("/v1/admin/reset", { token: admin.token, body: { confirm: PHRASE } });
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(["cleaned", "deleted", "notes", "preserved", "queue_purged"]);
    expect(res.body.deleted).toMatchObject({
      notifications: before.notifications,
      webhook_deliveries: before.webhook_deliveries,
      devices: before.devices,
      sims: before.sims,
      sessions: before.sessions,
      agents: nonAdmins,
    });
    expect(res.body.preserved).toEqual({
      access_profiles: before.access_grants,
      limits: before.fleet_limits,
      audit_log: before.audit_log,
      admin_agents: admins,
      webhooks: before.webhooks,
    });
    expect(typeof res.body.queue_purged).toBe("boolean");
    expect(res.body.notes.join(" ")).toMatch(/re-provision/i);
    if (!res.body.cleaned) expect(res.body.notes.join(" ")).toMatch(/dispatch|evidence/);
    else expect(res.body.deleted).toHaveProperty("operations");

    expect(await snapshot()).toEqual({
      ...before,
      agents: admins,
      sessions: 0,
      devices: 0,
      sims: 0,
      notifications: 0,
      webhook_deliveries: 0,
      audit_log: before.audit_log + 1,
    });
    const audit = await sys.db.query(
      `select actor_agent_id, details from fleet.audit_log where action = 'reset.production_data'`,
    );
    expect(audit).toHaveLength(1);
    expect(audit[0].actor_agent_id).toBe(admin.agentId);
    expect(audit[0].details.deleted).toEqual(res.body.deleted);
    expect(audit[0].details.preserved).toMatchObject({ access_profiles: before.access_grants, admin_agents: admins });

    // Every session is gone, the caller's included; every admin can sign in again, the agent cannot.
    expect((await sys.api.get("/v1/agents/me", { token: admin.token })).status).toBe(401);
    expect(
      (await sys.api.post("/v1/agents/login", { body: { login: "second-admin", password: second.password } })).status,
    ).toBe(200);
    expect(
      (await sys.api.post("/v1/agents/login", { body: { login: "to-delete", password: agent.password } })).status,
    ).toBe(401);
    const again = await sys.api.login("root", "root-password-1");
    const grants = await sys.api.get(`/v1/admin/agents/${second.agentId}/access`, { token: again });
    expect(grants.status).toBe(200);
    expect((await sys.api.get("/v1/sims", { token: again })).body).toEqual([]);
    expect((await sys.api.get("/v1/admin/limits", { token: again })).body.limits.length).toBeGreaterThan(0);
    expect((await sys.api.get("/v1/device/me", { token: creds.device.token })).status).toBe(401);
    // The API key is a configured secret: it still works.
    expect(
      (await sys.api.patch(`/v1/sims/${UNKNOWN_ID}/balance`, { apiKey: TEST_API_KEY, body: { balance: 1 } })).status,
    ).toBe(404);
  });
});
