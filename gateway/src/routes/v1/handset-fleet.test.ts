import { describe, expect, it } from "vitest";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  healthyReport,
  provisionHandset,
  recordBalance,
  registerDevice,
  sendHeartbeat,
  statusesFor,
  type Credentials,
  EVERY_CREDENTIAL,
} from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };

// Silence is checked every 200 ms here; the threshold stays the contract's 5 minutes.
routeSystem({ prefix: "hs", env: { DEVICE_SILENCE_CHECK_MS: "200" } }, (s) => ({ sys, admin, creds } = s));

type Notification = {
  notification_id: string;
  kind: string;
  severity: string;
  sim_id: string | null;
  device_id: string | null;
  context: Record<string, unknown>;
};
const notifications = async (): Promise<Notification[]> =>
  (await sys.api.get("/v1/admin/notifications?limit=250", { token: admin.token })).body;
const alertsFor = async (kind: string, subject: { sim_id?: string; device_id?: string }) =>
  (await notifications()).filter(
    (n) =>
      n.kind === kind &&
      (!subject.sim_id || n.sim_id === subject.sim_id) &&
      (!subject.device_id || n.device_id === subject.device_id),
  );

describe("heartbeat (POST /v1/device/heartbeat)", () => {
  it("records the heartbeat as the device's latest state: 204", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token);
    const res = await sys.api.post("/v1/device/heartbeat", {
      token: device.token,
      body: {
        app_version: "1.0.9",
        battery: 55,
        network: "3G",
        sims: [{ sim_id: sims[0].simId, present: true, signal: -85 }],
        android_version: null,
        manufacturer: "Itel",
        model: null,
        report: null,
      },
    });
    expect(res.status).toBe(204);
    expect(res.body).toBeUndefined();
    const [row] = await sys.db.query(
      `select app_version, battery, network, manufacturer, model, heartbeat_sims, report, last_seen_at from fleet.devices where id = $1`,
      [device.deviceId],
    );
    expect(row).toMatchObject({
      app_version: "1.0.9",
      battery: 55,
      network: "3G",
      manufacturer: "Itel",
      model: null,
      report: null,
    });
    expect(row.heartbeat_sims).toEqual([{ sim_id: sims[0].simId, present: true, signal: -85 }]);
    expect(Date.now() - new Date(row.last_seen_at).getTime()).toBeLessThan(30_000);
  });

  it("keeps a heartbeat whose report lists too many errors or SIMs, trimmed to the contract's 5 and 4", async () => {
    const device = await registerDevice(sys.api, admin.token);
    const errors = Array.from({ length: 7 }, (_, i) => ({ at: `2026-11-22T09:3${i}:00Z`, message: `error ${i}` }));
    const reportSims = Array.from({ length: 6 }, (_, slot) => ({ slot, present: true }));
    const res = await sys.api.post("/v1/device/heartbeat", {
      token: device.token,
      body: {
        app_version: "1.2.0",
        battery: 50,
        network: "4G",
        sims: [],
        report: { recent_errors: [...errors, { at: "x".repeat(60), message: "m".repeat(1500) }], sims: reportSims },
      },
    });
    expect(res.status).toBe(204);
    const [row] = await sys.db.query(`select report, last_seen_at from fleet.devices where id = $1`, [device.deviceId]);
    expect(row.last_seen_at).not.toBeNull();
    expect(row.report.recent_errors).toEqual(errors.slice(0, 5));
    expect(row.report.sims).toEqual(reportSims.slice(0, 4));
  });

  it.each([
    ["a battery above 100", { battery: 101 }],
    ["a missing sims list", { sims: undefined }],
    ["a missing app_version", { app_version: undefined }],
    ["an android_version over 40 characters", { android_version: "x".repeat(41) }],
    ["a manufacturer over 80 characters", { manufacturer: "x".repeat(81) }],
    ["a model over 80 characters", { model: "x".repeat(81) }],
    ["a SIM without present", { sims: [{ sim_id: "x", signal: 1 }] }],
    ["a report that is not an object", { report: "fine" }],
  ])("refuses %s with 422", async (_name, change) => {
    const device = await registerDevice(sys.api, admin.token);
    const body = { app_version: "1.2.0", battery: 50, network: "4G", sims: [], ...change };
    const res = await sys.api.post("/v1/device/heartbeat", { token: device.token, body });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    const [row] = await sys.db.query(`select last_seen_at from fleet.devices where id = $1`, [device.deviceId]);
    expect(row.last_seen_at).toBeNull();
  });

  it("is a handset route: sessions and the API key are refused, a revoked token is 401", async () => {
    const names = EVERY_CREDENTIAL;
    const body = { app_version: "1.2.0", battery: 50, network: "4G", sims: [] };
    expect(await statusesFor(sys.api, creds, "POST", "/v1/device/heartbeat", [...names], body)).toEqual({
      none: 401,
      admin: 403,
      agent: 403,
      supervisor: 403,
      inactive: 403,
      apiKey: 403,
      wrongApiKey: 401,
      device: 204,
      revokedDevice: 401,
    });
  });
});

describe("SIM reported absent", () => {
  it("raises one sim_absent alert per absence, re-armed when the handset sees the SIM again", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_a", "operator_b"] });
    const [a, b] = sims;
    await sendHeartbeat(sys.api, device.token, {
      sims: [
        { sim_id: a.simId, present: false },
        { sim_id: b.simId, present: true },
      ],
      report: healthyReport(),
    });
    await sendHeartbeat(sys.api, device.token, {
      sims: [
        { sim_id: a.simId, present: false },
        { sim_id: b.simId, present: true },
      ],
      report: healthyReport(),
    });
    const first = await eventually(
      async () => {
        const list = await alertsFor("sim_absent", { sim_id: a.simId });
        return list.length ? list : undefined;
      },
      30_000,
      "the sim_absent notification",
    );
    expect(first).toHaveLength(1);
    expect(first[0]).toMatchObject({ severity: "critical", device_id: device.deviceId, context: { msisdn: a.msisdn } });
    expect(await alertsFor("sim_absent", { sim_id: b.simId })).toEqual([]);

    await sendHeartbeat(sys.api, device.token, { sims: [{ sim_id: a.simId, present: true }] });
    await sendHeartbeat(sys.api, device.token, { sims: [{ sim_id: a.simId, present: false }] });
    await eventually(
      async () => ((await alertsFor("sim_absent", { sim_id: a.simId })).length === 2 ? true : undefined),
      30_000,
      "a second absence alert",
    );
  });

  it("ignores SIM ids that are not the device's own", async () => {
    const mine = await provisionHandset(sys.api, admin.token);
    const other = await provisionHandset(sys.api, admin.token);
    await sendHeartbeat(sys.api, mine.device.token, {
      sims: [
        { sim_id: other.sims[0].simId, present: false },
        { sim_id: mine.sims[0].simId, present: false },
      ],
    });
    await eventually(
      async () => ((await alertsFor("sim_absent", { sim_id: mine.sims[0].simId })).length ? true : undefined),
      30_000,
      "the own SIM's alert",
    );
    expect(await alertsFor("sim_absent", { sim_id: other.sims[0].simId })).toEqual([]);
    const [row] = await sys.db.query(`select absent_since from fleet.sims where id = $1`, [other.sims[0].simId]);
    expect(row.absent_since).toBeNull();
  });
});

describe("device silent for more than 5 minutes", () => {
  // Fleet's silence check writes its alerts to the outbox in the statement that claims the
  // silence: once a control device's alert is there, every device was examined by that check.
  const silentAlerts = async (deviceId: string) =>
    Number(
      (
        await sys.db.query(
          `select count(*)::int as n from fleet.outbox where type = 'transferops.common.v1.AlertRaised' and key = $1`,
          [deviceId],
        )
      )[0].n,
    );
  const silentFor = (deviceId: string, minutes: number) =>
    sys.db.query(`update fleet.devices set last_seen_at = now() - make_interval(mins => $2) where id = $1`, [
      deviceId,
      minutes,
    ]);
  const heartbeating = async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token);
    await sendHeartbeat(sys.api, device.token, { sims: [{ sim_id: sims[0].simId, present: true }] });
    return { ...device, simId: sims[0].simId };
  };
  const alerted = (deviceId: string, n: number) =>
    eventually(
      async () => ((await silentAlerts(deviceId)) === n ? true : undefined),
      20_000,
      `${n} silence alert(s) of ${deviceId}`,
    );

  it("raises one device_silent alert per silence, only past 5 minutes, and a heartbeat re-arms it", async () => {
    const x = await heartbeating();
    const quiet = await registerDevice(sys.api, admin.token, "Never seen");

    // 4 minutes: not yet. A control device silent 6 minutes proves a check ran.
    const control1 = await heartbeating();
    await silentFor(x.deviceId, 4);
    await silentFor(control1.deviceId, 6);
    await alerted(control1.deviceId, 1);
    expect(await silentAlerts(x.deviceId)).toBe(0);

    await silentFor(x.deviceId, 6);
    await alerted(x.deviceId, 1);
    const control2 = await heartbeating();
    await silentFor(control2.deviceId, 7);
    await alerted(control2.deviceId, 1);
    expect(await silentAlerts(x.deviceId)).toBe(1);
    expect(await silentAlerts(quiet.deviceId)).toBe(0);

    const stored = await eventually(
      async () => {
        const list = await alertsFor("device_silent", { device_id: x.deviceId });
        return list.length ? list : undefined;
      },
      30_000,
      "the device_silent notification",
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]).toMatchObject({ severity: "critical", context: { label: x.label, silent_minutes: 6 } });

    await sendHeartbeat(sys.api, x.token, { sims: [{ sim_id: x.simId, present: true }] });
    await silentFor(x.deviceId, 10);
    await alerted(x.deviceId, 2);
  });

  it("watches a handset holding a SIM that never sent a heartbeat from its registration", async () => {
    const { device } = await provisionHandset(sys.api, admin.token);
    const bare = await registerDevice(sys.api, admin.token, "Never deployed");
    for (const id of [device.deviceId, bare.deviceId]) {
      await sys.db.query(`update fleet.devices set created_at = now() - interval '6 minutes' where id = $1`, [id]);
    }
    await alerted(device.deviceId, 1);
    // Without a SIM it is not deployed: nothing can wait on it.
    const control = await heartbeating();
    await silentFor(control.deviceId, 6);
    await alerted(control.deviceId, 1);
    expect(await silentAlerts(bare.deviceId)).toBe(0);
  });
});

describe("device SIMs and identity", () => {
  it("lists only the calling device's SIMs with their balance", async () => {
    const mine = await provisionHandset(sys.api, admin.token, { operators: ["operator_a", "operator_b"] });
    const other = await provisionHandset(sys.api, admin.token);
    const at = new Date(Date.now() - 30_000);
    await recordBalance(sys.api, mine.sims[1].simId, 88_000, { observedAt: at });
    const res = await sys.api.get("/v1/device/sims", { token: mine.device.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual([
      {
        sim_id: mine.sims[0].simId,
        slot: 0,
        operator: "operator_a",
        msisdn: mine.sims[0].msisdn,
        status: "active",
        balance: null,
        balance_updated_at: null,
      },
      {
        sim_id: mine.sims[1].simId,
        slot: 1,
        operator: "operator_b",
        msisdn: mine.sims[1].msisdn,
        status: "active",
        balance: 88000,
        balance_updated_at: at.toISOString(),
      },
    ]);
    expect(JSON.stringify(res.body)).not.toContain(other.sims[0].simId);
    expect(JSON.stringify(res.body)).not.toContain(mine.sims[0].pin);
  });

  it("tells the device its own identity", async () => {
    const d = await registerDevice(sys.api, admin.token, "Identity handset");
    const res = await sys.api.get("/v1/device/me", { token: d.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ device_id: d.deviceId, label: "Identity handset", status: "active" });
  });

  it("are handset routes: sessions and the API key are refused, a revoked token is 401", async () => {
    const names = EVERY_CREDENTIAL;
    const expected = {
      none: 401,
      admin: 403,
      agent: 403,
      supervisor: 403,
      inactive: 403,
      apiKey: 403,
      wrongApiKey: 401,
      device: 200,
      revokedDevice: 401,
    };
    expect(await statusesFor(sys.api, creds, "GET", "/v1/device/sims", [...names])).toEqual(expected);
    expect(await statusesFor(sys.api, creds, "GET", "/v1/device/me", [...names])).toEqual(expected);
  });
});
