import { describe, expect, it } from "vitest";
import type { TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  createSim,
  registerDevice,
  statusesFor,
  ADMIN_ONLY,
  type Credentials,
} from "../../../../test/support/fleet-fixtures.ts";

type Entry = {
  entry_id: string;
  at: string;
  actor_agent_id?: string | null;
  action: string;
  target_id?: string | null;
  details: Record<string, unknown>;
};

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };

routeSystem({ prefix: "aud" }, (s) => ({ sys, admin, creds } = s));

const list = async (query = "", token = admin.token) => {
  const res = await sys.api.get<Entry[]>(`/v1/audit${query}`, { token });
  expect(res.status, JSON.stringify(res.body)).toBe(200);
  return res.body;
};

describe("GET /v1/audit", () => {
  it("shows an admin action with its actor, action, target and details, newest first", async () => {
    const created = await sys.api.createAgent(admin.token, { login: "aud-new", role: "supervisor" });
    const sim = await createSim(sys.api, admin.token);
    const frozen = await sys.api.post(`/v1/admin/sims/${sim.simId}/freeze`, { token: admin.token });
    expect(frozen.status).toBe(200);

    const entries = await list();
    expect(entries[0]).toMatchObject({
      actor_agent_id: admin.agentId,
      action: "sim.freeze",
      target_id: sim.simId,
      details: { from: "active", to: "frozen" },
    });
    const ids = entries.map((e) => BigInt(e.entry_id));
    expect(ids).toEqual([...ids].sort((a, b) => (a > b ? -1 : a < b ? 1 : 0)));
    expect(entries).toContainEqual(
      expect.objectContaining({
        actor_agent_id: admin.agentId,
        action: "agent.create",
        target_id: created.agentId,
        details: { role: "supervisor" },
      }),
    );
  });

  it("filters by exact action, prefix, target and actor", async () => {
    const sim = await createSim(sys.api, admin.token);
    await sys.api.post(`/v1/admin/sims/${sim.simId}/freeze`, { token: admin.token });
    await sys.api.post(`/v1/admin/sims/${sim.simId}/unfreeze`, { token: admin.token });

    const exact = await list("?action=sim.freeze");
    expect(exact.length).toBeGreaterThanOrEqual(2);
    expect(new Set(exact.map((e) => e.action))).toEqual(new Set(["sim.freeze"]));

    const prefix = await list("?action=sim.*");
    expect(new Set(prefix.map((e) => e.action))).toEqual(new Set(["sim.create", "sim.freeze", "sim.unfreeze"]));

    const target = await list(`?target=${sim.simId}`);
    expect(target.map((e) => e.action)).toEqual(["sim.unfreeze", "sim.freeze", "sim.create"]);

    const other = await sys.api.createAgent(admin.token, { login: "aud-admin2", role: "admin" });
    await createSim(sys.api, other.token);
    const byActor = await list(`?actor=${other.agentId}`);
    expect(byActor.map((e) => e.action)).toEqual(["sim.create"]);
    expect(await list(`?actor=${other.agentId}&action=agent.*`)).toEqual([]);
  });

  it("pages with limit and before, and honours the day window", async () => {
    const all = await list("?limit=250");
    expect(all.length).toBeGreaterThan(5);
    const first = await list("?limit=2");
    expect(first).toEqual(all.slice(0, 2));
    const second = await list(`?limit=2&before=${first[1].entry_id}`);
    expect(second).toEqual(all.slice(2, 4));

    expect((await list("?days=1")).length).toBe(all.length);
    expect(await list("?from=2020-01-01&to=2020-01-31")).toEqual([]);
    expect((await list("?all=true&limit=250")).length).toBe(all.length);
  });

  it("is admin only: 401 without a session, 403 for supervisors, agents and other credentials", async () => {
    expect(
      await statusesFor(sys.api, creds, "GET", "/v1/audit", [
        "none",
        "supervisor",
        "agent",
        "inactive",
        "apiKey",
        "device",
      ]),
    ).toEqual({
      none: ADMIN_ONLY.none,
      supervisor: 403,
      agent: 403,
      inactive: 403,
      apiKey: 403,
      device: 403,
    });
    const refused = await sys.api.get("/v1/audit", { token: creds.supervisor.token });
    expect(refused.body).toMatchObject({ code: "not_allowed", context: { reason: "admin_required" } });
  });

  it.each([
    ["?days=0"],
    ["?days=366"],
    ["?from=2026-13-01"],
    ["?from=2026-11-20&to=2026-11-10"],
    ["?limit=251"],
    ["?actor=not-a-uuid"],
    ["?before=abc"],
  ])("refuses a bad query %s with 422", async (query) => {
    const res = await sys.api.get(`/v1/audit${query}`, { token: admin.token });
    expect(res.status, JSON.stringify(res.body)).toBe(422);
    expect(res.body).toMatchObject({ code: "invalid_request" });
  });

  it("never shows a secret: a SIM's PIN, a device token, a password", async () => {
    const pin = "73914605";
    await createSim(sys.api, admin.token, { pin });
    const device = await registerDevice(sys.api, admin.token, "aud secret handset");
    const reissued = await sys.api.post<{ device_token: string }>(`/v1/devices/${device.deviceId}/token`, {
      token: admin.token,
    });
    expect(reissued.status).toBe(201);
    const person = await sys.api.createAgent(admin.token, { login: "aud-secret", password: "first-Secret-pass-1" });
    const temp = await sys.api.post<{ temporary_password: string }>(
      `/v1/agents/admin/${person.agentId}/temporary-password`,
      { token: admin.token },
    );
    expect(temp.status).toBe(200);
    const again = await sys.api.login("aud-secret", temp.body.temporary_password);
    const changed = await sys.api.patch("/v1/agents/me/password", {
      token: again,
      body: { current_password: temp.body.temporary_password, new_password: "second-Secret-pass-2" },
    });
    expect(changed.status).toBe(204);

    const text = JSON.stringify(await list("?all=true&limit=250"));
    expect(text).toContain("device.token_issued");
    for (const secret of [
      pin,
      device.token,
      reissued.body.device_token,
      "first-Secret-pass-1",
      temp.body.temporary_password,
      "second-Secret-pass-2",
      again,
      admin.token,
    ]) {
      expect(text).not.toContain(secret);
    }
  });
});
