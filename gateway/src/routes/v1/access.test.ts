import { describe, expect, it } from "vitest";
import type { TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  ADMIN_ONLY,
  createSim,
  grantAccess,
  provisionHandset,
  recordBalance,
  statusesFor,
  type Credentials,
} from "../../../../test/support/fleet-fixtures.ts";
import { UNKNOWN_ID } from "../../../../test/support/constants.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials;

routeSystem({ prefix: "acc" }, (s) => ({ sys, admin, creds } = s));

describe("grant access (PATCH /v1/admin/agents/{agent_id}/access)", () => {
  it("grants SIMs with the default types deposit and balance and the default ceiling 500000", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "g-default" });
    const sim = await createSim(sys.api, admin.token);
    const res = await sys.api.patch(`/v1/admin/agents/${agent.agentId}/access`, {
      token: admin.token,
      body: { allowed_sim_ids: [sim.simId] },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      agent_id: agent.agentId,
      login: "g-default",
      role: "agent",
      is_active: true,
      allowed_sim_ids: [sim.simId],
      allowed_op_types: ["deposit", "balance"],
      max_amount: 500000,
    });
  });

  it("replaces the grant as a whole with given types and ceiling, and reads it back", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "g-explicit" });
    const a = await createSim(sys.api, admin.token);
    const b = await createSim(sys.api, admin.token, { operator: "operator_b" });
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [a.simId] });
    await grantAccess(sys.api, admin.token, agent.agentId, {
      simIds: [b.simId, a.simId],
      opTypes: ["withdrawal", "float_deposit"],
      maxAmount: 75000,
    });
    const read = await sys.api.get(`/v1/admin/agents/${agent.agentId}/access`, { token: admin.token });
    expect(read.status).toBe(200);
    expect(read.body).toMatchObject({
      allowed_sim_ids: [b.simId, a.simId],
      allowed_op_types: ["withdrawal", "float_deposit"],
      max_amount: 75000,
    });
    const audit = await sys.db.query(
      `select actor_agent_id, details from fleet.audit_log where action = 'access.grant' and target_id = $1 order by id`,
      [agent.agentId],
    );
    expect(audit).toHaveLength(2);
    expect(audit[1].actor_agent_id).toBe(admin.agentId);
    expect(audit[1].details.previous.allowed_sim_ids).toEqual([a.simId]);
  });

  it("refuses unknown SIM ids and operation types with 422 naming what was rejected, changing nothing", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "g-unknown" });
    const sim = await createSim(sys.api, admin.token);
    const res = await sys.api.patch(`/v1/admin/agents/${agent.agentId}/access`, {
      token: admin.token,
      body: { allowed_sim_ids: [sim.simId, UNKNOWN_ID, "not-a-sim"], allowed_op_types: ["deposit", "teleport"] },
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    expect(res.body.context).toEqual({ rejected_sim_ids: [UNKNOWN_ID, "not-a-sim"], rejected_op_types: ["teleport"] });
    const text = JSON.stringify(res.body.detail);
    for (const rejected of [UNKNOWN_ID, "not-a-sim", "teleport"]) expect(text).toContain(rejected);
    expect(text).not.toContain(sim.simId);
    const read = await sys.api.get(`/v1/admin/agents/${agent.agentId}/access`, { token: admin.token });
    expect(read.body).toMatchObject({ allowed_sim_ids: [], allowed_op_types: [], max_amount: null });
  });

  it.each([
    ["no SIM", { allowed_sim_ids: [] }],
    ["a missing SIM list", {}],
    ["a ceiling of 0", { allowed_sim_ids: ["x"], max_amount: 0 }],
    ["a fractional ceiling", { allowed_sim_ids: ["x"], max_amount: 10.5 }],
    ["an empty type list", { allowed_sim_ids: ["x"], allowed_op_types: [] }],
  ])("refuses %s with 422", async (_name, body) => {
    const res = await sys.api.patch(`/v1/admin/agents/${admin.agentId}/access`, { token: admin.token, body });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("neither sets nor reads dual_approval_above", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "g-dual" });
    const sim = await createSim(sys.api, admin.token);
    const res = await sys.api.patch(`/v1/admin/agents/${agent.agentId}/access`, {
      token: admin.token,
      body: { allowed_sim_ids: [sim.simId], dual_approval_above: 1000 },
    });
    expect(res.status).toBe(200);
    expect(res.body).not.toHaveProperty("dual_approval_above");
    const read = await sys.api.get(`/v1/admin/agents/${agent.agentId}/access`, { token: admin.token });
    expect(read.body).not.toHaveProperty("dual_approval_above");
  });

  it("answers 404 for an unknown agent and 422 for a malformed agent id", async () => {
    const sim = await createSim(sys.api, admin.token);
    const missing = await sys.api.patch(`/v1/admin/agents/${UNKNOWN_ID}/access`, {
      token: admin.token,
      body: { allowed_sim_ids: [sim.simId] },
    });
    expect(missing.status).toBe(404);
    expect([missing.body.code, missing.body.context.reason]).toEqual(["not_found", "agent_not_found"]);
    expect((await sys.api.get(`/v1/admin/agents/${UNKNOWN_ID}/access`, { token: admin.token })).status).toBe(404);
    expect((await sys.api.get(`/v1/admin/agents/nope/access`, { token: admin.token })).status).toBe(422);
  });

  it("is an admin route: every other credential is refused", async () => {
    const sim = await createSim(sys.api, admin.token);
    const names = Object.keys(ADMIN_ONLY) as (keyof typeof ADMIN_ONLY)[];
    const patch = await statusesFor(sys.api, creds, "PATCH", `/v1/admin/agents/${admin.agentId}/access`, names, {
      allowed_sim_ids: [sim.simId],
    });
    expect(patch).toEqual(ADMIN_ONLY);
    const get = await statusesFor(sys.api, creds, "GET", `/v1/admin/agents/${admin.agentId}/access`, names);
    expect(get).toEqual(ADMIN_ONLY);
  });
});

describe("a new agent's access", () => {
  it("reads as empty lists and a null max_amount", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "g-new" });
    const res = await sys.api.get(`/v1/admin/agents/${agent.agentId}/access`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      agent_id: agent.agentId,
      login: "g-new",
      role: "agent",
      is_active: true,
      allowed_sim_ids: [],
      allowed_op_types: [],
      max_amount: null,
    });
    const own = await sys.api.get("/v1/agents/me/limits", { token: agent.token });
    expect(own.body).toEqual(res.body);
    const sims = await sys.api.get("/v1/agents/me/sims", { token: agent.token });
    expect(sims.status).toBe(200);
    expect(sims.body).toEqual([]);
  });
});

describe("own limits and own SIMs", () => {
  it("gives the caller its own grant, never another agent's", async () => {
    const mine = await sys.api.createAgent(admin.token, { login: "o-mine" });
    const other = await sys.api.createAgent(admin.token, { login: "o-other" });
    const sim = await createSim(sys.api, admin.token);
    await grantAccess(sys.api, admin.token, other.agentId, { simIds: [sim.simId], maxAmount: 1234 });
    const res = await sys.api.get("/v1/agents/me/limits", { token: mine.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: mine.agentId, login: "o-mine", allowed_sim_ids: [], max_amount: null });
    const theirs = await sys.api.get("/v1/agents/me/limits", { token: other.token });
    expect(theirs.body).toMatchObject({ agent_id: other.agentId, allowed_sim_ids: [sim.simId], max_amount: 1234 });
  });

  it("tells an admin its role (admins bypass the grant)", async () => {
    const res = await sys.api.get("/v1/agents/me/limits", { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: admin.agentId, role: "admin" });
  });

  it("lists only the SIMs of the caller's grant, with balance and handset, and no PIN or token", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "o-sims" });
    const { device, sims } = await provisionHandset(sys.api, admin.token, {
      operators: ["operator_a", "operator_b"],
      label: "Own SIMs handset",
    });
    const loose = await createSim(sys.api, admin.token);
    const notGranted = await createSim(sys.api, admin.token);
    const observed = new Date(Date.now() - 60_000);
    await recordBalance(sys.api, sims[1].simId, 42_000, { observedAt: observed });
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sims[1].simId, loose.simId] });
    const res = await sys.api.get("/v1/agents/me/sims", { token: agent.token });
    expect(res.status).toBe(200);
    const byId = Object.fromEntries((res.body as { sim_id: string }[]).map((s) => [s.sim_id, s]));
    expect(Object.keys(byId).sort()).toEqual([sims[1].simId, loose.simId].sort());
    expect(byId[sims[1].simId]).toEqual({
      sim_id: sims[1].simId,
      operator: "operator_b",
      msisdn: sims[1].msisdn,
      status: "active",
      balance_mirror: 42000,
      balance_updated_at: observed.toISOString(),
      device_id: device.deviceId,
      device_label: "Own SIMs handset",
      subscription_slot: 1,
    });
    expect(byId[loose.simId]).toMatchObject({
      balance_mirror: null,
      balance_updated_at: null,
      device_id: null,
      device_label: null,
      subscription_slot: null,
    });
    const text = JSON.stringify(res.body);
    expect(text).not.toContain(notGranted.simId);
    expect(text).not.toContain(device.token);
    expect(text).not.toMatch(/"pin"/);
  });

  it("drops a deleted SIM from grants and from own SIMs", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "o-deleted" });
    const keep = await createSim(sys.api, admin.token);
    const gone = await createSim(sys.api, admin.token);
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [keep.simId, gone.simId] });
    expect((await sys.api.delete(`/v1/sims/${gone.simId}`, { token: admin.token })).status).toBe(204);
    const limits = await sys.api.get("/v1/agents/me/limits", { token: agent.token });
    expect(limits.body.allowed_sim_ids).toEqual([keep.simId]);
    const own = await sys.api.get("/v1/agents/me/sims", { token: agent.token });
    expect(own.body.map((s: { sim_id: string }) => s.sim_id)).toEqual([keep.simId]);
  });

  it("is a board route for every role: inactive agents, the API key and devices are refused", async () => {
    const expected = {
      none: 401,
      admin: 200,
      supervisor: 200,
      agent: 200,
      inactive: 403,
      apiKey: 403,
      wrongApiKey: 401,
      device: 403,
      revokedDevice: 401,
    };
    const names = Object.keys(expected) as (keyof typeof expected)[];
    expect(await statusesFor(sys.api, creds, "GET", "/v1/agents/me/limits", names)).toEqual(expected);
    expect(await statusesFor(sys.api, creds, "GET", "/v1/agents/me/sims", names)).toEqual(expected);
  });
});
