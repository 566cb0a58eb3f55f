import { createHash } from "node:crypto";
import { fromBinary } from "@bufbuild/protobuf";
import { DeviceDeletedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { describe, expect, it } from "vitest";
import type { TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  ADMIN_ONLY,
  createSim,
  healthyReport,
  provisionHandset,
  recordBalance,
  registerDevice,
  sendHeartbeat,
  statusesFor,
  type Credentials,
} from "../../../../test/support/fleet-fixtures.ts";
import { UNKNOWN_DEVICE_ID } from "../../../../test/support/constants.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };

routeSystem({ prefix: "dev" }, (s) => ({ sys, admin, creds } = s));

const get = (id: string) => sys.api.get(`/v1/devices/${id}`, { token: admin.token });
const health = (id: string) => sys.api.get(`/v1/devices/${id}/health`, { token: admin.token });

describe("register a device (POST /v1/devices)", () => {
  it("returns a hex id and a token once; only the token's hash is stored", async () => {
    const res = await sys.api.post("/v1/devices", { token: admin.token, body: { label: "Shop 12 handset" } });
    expect(res.status).toBe(201);
    expect(Object.keys(res.body).sort()).toEqual(["created_at", "device_id", "device_token", "label"]);
    expect(res.body.device_id).toMatch(/^[0-9a-f]{32}$/);
    expect(res.body.label).toBe("Shop 12 handset");
    const token: string = res.body.device_token;
    expect(token).toMatch(/^tod_[A-Za-z0-9_-]{40,}$/);
    const [row] = await sys.db.query(`select token_hash from fleet.devices where id = $1`, [res.body.device_id]);
    expect(row.token_hash).toBe(createHash("sha256").update(token).digest("hex"));
    const read = await get(res.body.device_id);
    expect(JSON.stringify(read.body)).not.toContain(token);
    const list = await sys.api.get("/v1/devices", { token: admin.token });
    expect(JSON.stringify(list.body)).not.toContain(token);
    expect(list.body.map((d: { device_id: string }) => d.device_id)).toContain(res.body.device_id);
  });

  it.each([
    ["a missing label", {}],
    ["an empty label", { label: "" }],
    ["a label over 200 characters", { label: "x".repeat(201) }],
  ])("refuses %s with 422", async (_name, body) => {
    const res = await sys.api.post("/v1/devices", { token: admin.token, body });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });
});

describe("read devices", () => {
  it("shows SIMs by slot, no heartbeat yet, and the offline issue of a device never seen", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, {
      operators: ["operator_a", "operator_b"],
      label: "Fresh",
    });
    const res = await get(device.deviceId);
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      device_id: device.deviceId,
      label: "Fresh",
      status: "active",
      last_seen_at: null,
      app_version: null,
      battery: null,
      health_reported_at: null,
      issues: { count: 1, worst: "critical" },
    });
    expect(res.body.sims).toEqual([
      { id: sims[0].simId, operator: "operator_a", msisdn: sims[0].msisdn, status: "active", subscription_slot: 0 },
      { id: sims[1].simId, operator: "operator_b", msisdn: sims[1].msisdn, status: "active", subscription_slot: 1 },
    ]);
    expect(res.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT/);
  });

  it("shows the latest heartbeat and a clean health summary once a healthy report arrives", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { label: "Healthy" });
    await sendHeartbeat(sys.api, device.token, {
      sims: [{ sim_id: sims[0].simId, present: true }],
      report: healthyReport([sims[0].simId]),
      battery: 77,
      extra: { android_version: "13", android_sdk: 33, manufacturer: "Samsung", model: "A14", battery_exempt: true },
    });
    const res = await get(device.deviceId);
    expect(res.body).toMatchObject({
      app_version: "1.2.0",
      android_version: "13",
      android_sdk: 33,
      manufacturer: "Samsung",
      model: "A14",
      battery: 77,
      network: "4G",
      battery_exempt: true,
      issues: { count: 0, worst: null },
    });
    expect(Date.now() - new Date(res.body.last_seen_at).getTime()).toBeLessThan(60_000);
    expect(res.body.health_reported_at).toBe(res.body.last_seen_at);
  });

  it("answers 404 for an unknown device, whatever the form of its id", async () => {
    for (const id of [UNKNOWN_DEVICE_ID, "not-hex"]) {
      const res = await get(id);
      expect(res.status).toBe(404);
      expect([res.body.code, res.body.context.reason]).toEqual(["not_found", "device_not_found"]);
      expect((await health(id)).status).toBe(404);
    }
  });
});

describe("rename a device (PATCH /v1/devices/{id})", () => {
  it("renames, keeps the label when none is given, and audits", async () => {
    const device = await registerDevice(sys.api, admin.token, "Old name");
    const res = await sys.api.patch(`/v1/devices/${device.deviceId}`, {
      token: admin.token,
      body: { label: "New name" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ device_id: device.deviceId, label: "New name" });
    const same = await sys.api.patch(`/v1/devices/${device.deviceId}`, { token: admin.token, body: {} });
    expect(same.body.label).toBe("New name");
    const audit = await sys.db.query(
      `select details from fleet.audit_log where action = 'device.rename' and target_id = $1`,
      [device.deviceId],
    );
    expect(audit.map((a) => a.details)).toEqual([{ from: "Old name", to: "New name" }]);
    expect(
      (await sys.api.patch(`/v1/devices/${device.deviceId}`, { token: admin.token, body: { label: "y".repeat(201) } }))
        .status,
    ).toBe(422);
    expect(
      (await sys.api.patch(`/v1/devices/${UNKNOWN_DEVICE_ID}`, { token: admin.token, body: { label: "x" } })).status,
    ).toBe(404);
  });
});

describe("delete a device (DELETE /v1/devices/{id})", () => {
  it("returns its SIMs to the unassigned pool keeping everything else, audits their ids, publishes DeviceDeleted, kills its token", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, {
      operators: ["operator_a", "operator_b"],
      balance: 90_000,
    });
    await sys.api.patch(`/v1/sims/${sims[0].simId}`, {
      token: admin.token,
      body: { low_balance_threshold: 5000, status: "frozen" },
    });
    const before = await sys.api.get(`/v1/sims/${sims[0].simId}`, { token: admin.token });

    const res = await sys.api.delete(`/v1/devices/${device.deviceId}`, { token: admin.token });
    expect(res.status).toBe(204);

    const after = await sys.api.get(`/v1/sims/${sims[0].simId}`, { token: admin.token });
    expect(after.body).toEqual({ ...before.body, device_id: null, subscription_slot: null });
    expect(after.body).toMatchObject({ balance_mirror: 90000, low_balance_threshold: 5000, status: "frozen" });
    const unassigned = await sys.api.get("/v1/sims?unassigned=true", { token: admin.token });
    expect(unassigned.body.map((s: { sim_id: string }) => s.sim_id)).toEqual(
      expect.arrayContaining(sims.map((s) => s.simId)),
    );

    const [audit] = await sys.db.query(
      `select actor_agent_id, details from fleet.audit_log where action = 'device.delete' and target_id = $1`,
      [device.deviceId],
    );
    expect(audit.actor_agent_id).toBe(admin.agentId);
    expect(audit.details.unassigned_sim_ids).toEqual(sims.map((s) => s.simId).sort());

    const [event] = await sys.db.query(
      `select key, payload from fleet.outbox where type = 'transferops.fleet.v1.DeviceDeleted' and key = $1`,
      [device.deviceId],
    );
    const message = fromBinary(DeviceDeletedSchema, new Uint8Array(event.payload));
    expect(message.deviceId).toBe(device.deviceId);
    expect([...message.unassignedSimIds].sort()).toEqual(sims.map((s) => s.simId).sort());

    expect((await get(device.deviceId)).status).toBe(404);
    expect((await sys.api.get("/v1/device/me", { token: device.token })).status).toBe(401);
    expect((await sys.api.delete(`/v1/devices/${device.deviceId}`, { token: admin.token })).status).toBe(404);
  });
});

describe("device tokens", () => {
  it("revokes a token per device: that device gets 401, another device is unaffected", async () => {
    const a = await registerDevice(sys.api, admin.token);
    const b = await registerDevice(sys.api, admin.token);
    expect((await sys.api.delete(`/v1/devices/${a.deviceId}/token`, { token: admin.token })).status).toBe(204);
    expect((await sys.api.get("/v1/device/me", { token: a.token })).status).toBe(401);
    expect((await sys.api.get("/v1/device/me", { token: b.token })).status).toBe(200);
    const [audit] = await sys.db.query(
      `select actor_agent_id from fleet.audit_log where action = 'device.token_revoked' and target_id = $1`,
      [a.deviceId],
    );
    expect(audit.actor_agent_id).toBe(admin.agentId);
  });

  it("issues a new token once; the previous one stops working", async () => {
    const d = await registerDevice(sys.api, admin.token);
    const res = await sys.api.post(`/v1/devices/${d.deviceId}/token`, { token: admin.token });
    expect(res.status).toBe(201);
    expect(res.body.device_id).toBe(d.deviceId);
    expect(res.body.device_token).toMatch(/^tod_/);
    expect(res.body.device_token).not.toBe(d.token);
    expect((await sys.api.get("/v1/device/me", { token: d.token })).status).toBe(401);
    expect((await sys.api.get("/v1/device/me", { token: res.body.device_token })).body.device_id).toBe(d.deviceId);
    expect((await sys.api.post(`/v1/devices/${UNKNOWN_DEVICE_ID}/token`, { token: admin.token })).status).toBe(404);
  });
});

describe("device health (GET /v1/devices/{id}/health)", () => {
  const codes = (body: { issues: { code: string }[] }) => body.issues.map((i) => i.code).sort();

  it("answers the latest heartbeat with the contract's fields and the report as sent", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { label: "Reported" });
    const report = healthyReport([sims[0].simId]);
    await sendHeartbeat(sys.api, device.token, {
      sims: [{ sim_id: sims[0].simId, present: true }],
      report,
      extra: { android_version: "14", android_sdk: 34, manufacturer: "Tecno", model: "Spark", battery_exempt: true },
    });
    const res = await health(device.deviceId);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "android_sdk",
        "android_version",
        "app_version",
        "battery",
        "battery_exempt",
        "device_id",
        "issues",
        "label",
        "last_seen_at",
        "manufacturer",
        "model",
        "network",
        "report",
        "reported_at",
      ].sort(),
    );
    expect(res.body).toMatchObject({
      device_id: device.deviceId,
      label: "Reported",
      android_version: "14",
      android_sdk: 34,
      manufacturer: "Tecno",
      model: "Spark",
      battery: 80,
      network: "4G",
      battery_exempt: true,
      issues: [],
    });
    expect(res.body.report).toEqual(report);
  });

  it("derives no_report from a heartbeat without a report (older apps)", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token);
    await sendHeartbeat(sys.api, device.token, { sims: [{ sim_id: sims[0].simId, present: true }] });
    const res = await health(device.deviceId);
    expect(res.body.issues).toEqual([{ code: "no_report", severity: "warning", message: expect.any(String) }]);
    expect(res.body.report).toBeNull();
    expect(res.body.reported_at).toBeNull();
    expect((await get(device.deviceId)).body.issues).toEqual({ count: 1, worst: "warning" });
  });

  it("derives what a report makes obvious: accessibility off, permissions, SIM absent, battery, network", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_a", "operator_b"] });
    const report = healthyReport();
    report.accessibility = { enabled: false, running: false };
    report.permissions = { ...(report.permissions as object), read_sms: false };
    report.battery = { level: 8, charging: false };
    report.network = { type: "none", connected: false, internet_reachable: false };
    await sendHeartbeat(sys.api, device.token, { sims: [{ sim_id: sims[0].simId, present: false }], report });
    const res = await health(device.deviceId);
    expect(codes(res.body)).toEqual([
      "accessibility_off",
      "battery_low",
      "network_down",
      "permission_missing",
      "sim_absent",
      "sim_unreported",
    ]);
    expect(res.body.issues[0].severity).toBe("critical");
    expect(res.body.issues.find((i: { code: string }) => i.code === "permission_missing").message).toContain(
      "read_sms",
    );
    expect((await get(device.deviceId)).body.issues).toEqual({ count: 6, worst: "critical" });
  });

  it("derives issues on each read: a device silent past 5 minutes becomes offline without any new write", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token);
    await sendHeartbeat(sys.api, device.token, {
      sims: [{ sim_id: sims[0].simId, present: true }],
      report: healthyReport([sims[0].simId]),
    });
    expect((await health(device.deviceId)).body.issues).toEqual([]);
    await sys.db.query(
      `update fleet.devices set last_seen_at = now() - interval '6 minutes', health_reported_at = now() - interval '6 minutes' where id = $1`,
      [device.deviceId],
    );
    const res = await health(device.deviceId);
    expect(res.body.issues).toEqual([
      { code: "offline", severity: "critical", message: expect.stringContaining("6 minutes") },
    ]);
  });
});

describe("roles", () => {
  it("every device route is an admin route", async () => {
    const names = Object.keys(ADMIN_ONLY) as (keyof typeof ADMIN_ONLY)[];
    const d = await registerDevice(sys.api, admin.token, "Matrix");
    const sim = await createSim(sys.api, admin.token);
    await recordBalance(sys.api, sim.simId, 1000);
    const routes: [string, string, unknown?][] = [
      ["POST", "/v1/devices", { label: "x" }],
      ["GET", "/v1/devices"],
      ["GET", `/v1/devices/${d.deviceId}`],
      ["PATCH", `/v1/devices/${d.deviceId}`, { label: "y" }],
      ["GET", `/v1/devices/${d.deviceId}/health`],
      ["POST", `/v1/devices/${UNKNOWN_DEVICE_ID}/token`],
      ["DELETE", `/v1/devices/${UNKNOWN_DEVICE_ID}/token`],
      ["DELETE", `/v1/devices/${UNKNOWN_DEVICE_ID}`],
    ];
    for (const [method, path, body] of routes) {
      const statuses = await statusesFor(sys.api, creds, method as "GET", path, names, body);
      expect({ route: `${method} ${path}`, statuses }).toEqual({ route: `${method} ${path}`, statuses: ADMIN_ONLY });
    }
    expect((await get(d.deviceId)).status).toBe(200);
  });
});
