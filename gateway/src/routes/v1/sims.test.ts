import { fromBinary } from "@bufbuild/protobuf";
import { SimDeletedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { describe, expect, it } from "vitest";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  ADMIN_ONLY,
  createSim,
  provisionHandset,
  recordBalance,
  registerDevice,
  setCircuitBreaker,
  statusesFor,
  uniqueMsisdn,
  type Credentials,
  EVERY_CREDENTIAL,
} from "../../../../test/support/fleet-fixtures.ts";
import { UNKNOWN_DEVICE_ID, UNKNOWN_ID } from "../../../../test/support/constants.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };

routeSystem({ prefix: "sim" }, (s) => ({ sys, admin, creds } = s));

const post = (body: unknown) => sys.api.post("/v1/sims", { token: admin.token, body });
const getSim = (id: string) => sys.api.get(`/v1/sims/${id}`, { token: admin.token });
const assign = (id: string, body: unknown) => sys.api.patch(`/v1/sims/${id}/assignment`, { token: admin.token, body });
const balance = (id: string, body: unknown, o: { apiKey?: true | string; token?: string } = { apiKey: true }) =>
  sys.api.patch(`/v1/sims/${id}/balance`, { ...o, body });

describe("create a SIM (POST /v1/sims)", () => {
  it("creates an unassigned SIM, unmeasured, with its PIN encrypted under a key id and never returned", async () => {
    const msisdn = uniqueMsisdn();
    const res = await post({ operator: "operator_a", msisdn, pin: "73519264" });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      operator: "operator_a",
      msisdn,
      device_id: null,
      subscription_slot: null,
      status: "active",
      balance_mirror: null,
      balance_updated_at: null,
    });
    expect(res.body.sim_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(res.body.created_at).toMatch(/^\d{4}-/);
    expect(JSON.stringify(res.body)).not.toContain("73519264");
    const [row] = await sys.db.query(
      `select pin_key_id, pin_ciphertext, row_to_json(s)::text as whole from fleet.sims s where id = $1`,
      [res.body.sim_id],
    );
    expect(row.pin_key_id).toBe("local");
    expect(row.pin_ciphertext.length).toBe(12 + 16 + 8);
    expect(row.pin_ciphertext.toString("latin1")).not.toContain("73519264");
    expect(row.whole).not.toContain("73519264");
    const [audit] = await sys.db.query(
      `select details::text as d from fleet.audit_log where action = 'sim.create' and target_id = $1`,
      [res.body.sim_id],
    );
    expect(audit.d).not.toContain("73519264");
  });

  it('places a SIM in a device slot given as the string "0"/"1" or a number', async () => {
    const d = await registerDevice(sys.api, admin.token);
    const a = await post({
      operator: "operator_a",
      msisdn: uniqueMsisdn(),
      pin: "1234",
      device_id: d.deviceId,
      subscription_slot: "1",
    });
    expect(a.status).toBe(201);
    expect(a.body).toMatchObject({ device_id: d.deviceId, subscription_slot: 1 });
    const b = await post({
      operator: "operator_b",
      msisdn: uniqueMsisdn("operator_b"),
      pin: "1234",
      device_id: d.deviceId,
      subscription_slot: 0,
    });
    expect(b.status).toBe(201);
    expect(b.body.subscription_slot).toBe(0);
  });

  it.each([
    ["only device_id", (d: string) => ({ device_id: d })],
    ["only subscription_slot", () => ({ subscription_slot: "0" })],
    ["a slot of 2", (d: string) => ({ device_id: d, subscription_slot: "2" })],
    ["a PIN of 3 digits", () => ({ pin: "123" })],
    ["a PIN of 9 digits", () => ({ pin: "123456789" })],
    ["a PIN with a letter", () => ({ pin: "12a4" })],
    ["an MSISDN that is not 9 digits", () => ({ msisdn: "6701234" })],
    ["an unknown operator", () => ({ operator: "operator_c" })],
    ["no PIN", () => ({ pin: undefined })],
  ])("refuses %s with 422 invalid_request", async (_name, change) => {
    const d = await registerDevice(sys.api, admin.token);
    const res = await post({ operator: "operator_a", msisdn: uniqueMsisdn(), pin: "1234", ...change(d.deviceId) });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    expect(JSON.stringify(res.body)).not.toMatch(/12a4|123456789/);
  });

  it("answers 404 for an unknown device and 409 for a taken MSISDN, a full device, an occupied slot, a device not active", async () => {
    const body = (o: Record<string, unknown>) => ({
      operator: "operator_a",
      msisdn: uniqueMsisdn(),
      pin: "1234",
      ...o,
    });
    const unknown = await post(body({ device_id: UNKNOWN_DEVICE_ID, subscription_slot: "0" }));
    expect(unknown.status).toBe(404);
    expect([unknown.body.code, unknown.body.context.reason]).toEqual(["not_found", "device_not_found"]);

    const taken = await createSim(sys.api, admin.token);
    const dup = await post(body({ msisdn: taken.msisdn }));
    expect(dup.status).toBe(409);
    expect(dup.body).toMatchObject({ code: "conflict", context: { reason: "msisdn_exists", msisdn: taken.msisdn } });

    const { device, sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_a"] });
    const occupied = await post(body({ device_id: device.deviceId, subscription_slot: "0" }));
    expect(occupied.status).toBe(409);
    expect(occupied.body).toMatchObject({
      code: "conflict",
      context: { reason: "slot_occupied", device_id: device.deviceId, subscription_slot: 0, sim_id: sims[0].simId },
    });
    await createSim(sys.api, admin.token, { deviceId: device.deviceId, slot: 1 });
    const full = await post(body({ device_id: device.deviceId, subscription_slot: "1" }));
    expect(full.status).toBe(409);
    expect([full.body.code, full.body.context.reason]).toEqual(["conflict", "device_full"]);

    const idle = await registerDevice(sys.api, admin.token);
    await setCircuitBreaker(sys.api, admin.token, true);
    try {
      const frozen = await post(body({ device_id: idle.deviceId, subscription_slot: "0" }));
      expect(frozen.status).toBe(409);
      expect(frozen.body).toMatchObject({
        code: "conflict",
        context: { reason: "device_not_active", device_id: idle.deviceId, device_status: "frozen" },
      });
    } finally {
      await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token });
    }
    expect((await post(body({ device_id: idle.deviceId, subscription_slot: "0" }))).status).toBe(201);
  });
});

describe("list and read SIMs", () => {
  it("filters on unassigned: true only unassigned, false only assigned, omitted all", async () => {
    const loose = await createSim(sys.api, admin.token);
    const { sims } = await provisionHandset(sys.api, admin.token);
    const ids = async (q: string) =>
      (await sys.api.get(`/v1/sims${q}`, { token: admin.token })).body.map((s: { sim_id: string }) => s.sim_id);
    const all = await ids("");
    const unassigned = await ids("?unassigned=true");
    const assigned = await ids("?unassigned=false");
    expect(all).toEqual(expect.arrayContaining([loose.simId, sims[0].simId]));
    expect(unassigned).toContain(loose.simId);
    expect(unassigned).not.toContain(sims[0].simId);
    expect(assigned).toContain(sims[0].simId);
    expect(assigned).not.toContain(loose.simId);
    expect(unassigned.length + assigned.length).toBe(all.length);
    expect((await sys.api.get("/v1/sims?unassigned=maybe", { token: admin.token })).status).toBe(422);
  });

  it("reads one SIM with every field; 404 unknown, 422 malformed id", async () => {
    const sim = await createSim(sys.api, admin.token, { operator: "operator_b" });
    const res = await getSim(sim.simId);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(
      [
        "balance_mirror",
        "balance_source",
        "balance_updated_at",
        "created_at",
        "device_id",
        "high_balance_threshold",
        "low_balance_threshold",
        "msisdn",
        "operator",
        "sim_id",
        "status",
        "subscription_slot",
      ].sort(),
    );
    const ghost = await getSim(UNKNOWN_ID);
    expect([ghost.status, ghost.body.code, ghost.body.context.reason]).toEqual([404, "not_found", "sim_not_found"]);
    expect((await getSim("nope")).status).toBe(422);
  });
});

describe("update a SIM (PATCH /v1/sims/{id})", () => {
  it("sets status and thresholds, clears a threshold with null, keeps what is not named", async () => {
    const sim = await createSim(sys.api, admin.token);
    const a = await sys.api.patch(`/v1/sims/${sim.simId}`, {
      token: admin.token,
      body: { status: "retired", low_balance_threshold: 1000, high_balance_threshold: 900000 },
    });
    expect(a.status).toBe(200);
    expect(a.body).toMatchObject({ status: "retired", low_balance_threshold: 1000, high_balance_threshold: 900000 });
    const b = await sys.api.patch(`/v1/sims/${sim.simId}`, {
      token: admin.token,
      body: { high_balance_threshold: null, status: "active" },
    });
    expect(b.body).toMatchObject({ status: "active", low_balance_threshold: 1000, high_balance_threshold: null });
  });

  it.each([
    ["an unknown status", { status: "lost" }],
    ["a negative threshold", { low_balance_threshold: -1 }],
    ["a low threshold above the high one", { low_balance_threshold: 5000, high_balance_threshold: 100 }],
  ])("refuses %s with 422", async (_name, body) => {
    const sim = await createSim(sys.api, admin.token);
    const res = await sys.api.patch(`/v1/sims/${sim.simId}`, { token: admin.token, body });
    expect(res.status).toBe(422);
    expect((await getSim(sim.simId)).body).toMatchObject({
      status: "active",
      low_balance_threshold: null,
      high_balance_threshold: null,
    });
  });

  it("answers 404 for an unknown SIM", async () => {
    expect(
      (await sys.api.patch(`/v1/sims/${UNKNOWN_ID}`, { token: admin.token, body: { status: "frozen" } })).status,
    ).toBe(404);
  });
});

describe("delete a SIM (DELETE /v1/sims/{id})", () => {
  it("deletes permanently, audits, and publishes SimDeleted for dispatch and evidence", async () => {
    const { sims } = await provisionHandset(sys.api, admin.token, { balance: 1000 });
    const res = await sys.api.delete(`/v1/sims/${sims[0].simId}`, { token: admin.token });
    expect(res.status).toBe(204);
    expect((await getSim(sims[0].simId)).status).toBe(404);
    const [event] = await sys.db.query(
      `select payload from fleet.outbox where type = 'transferops.fleet.v1.SimDeleted' and key = $1`,
      [sims[0].simId],
    );
    expect(fromBinary(SimDeletedSchema, new Uint8Array(event.payload)).simId).toBe(sims[0].simId);
    const [audit] = await sys.db.query(
      `select actor_agent_id, details from fleet.audit_log where action = 'sim.delete' and target_id = $1`,
      [sims[0].simId],
    );
    expect(audit).toMatchObject({
      actor_agent_id: admin.agentId,
      details: { msisdn: sims[0].msisdn, balance_mirror: 1000 },
    });
    expect((await sys.api.delete(`/v1/sims/${sims[0].simId}`, { token: admin.token })).status).toBe(404);
  });
});

describe("assign and move (PATCH /v1/sims/{id}/assignment)", () => {
  it("assigns an unassigned SIM and moves it to another device keeping its measured balance", async () => {
    const sim = await createSim(sys.api, admin.token);
    await recordBalance(sys.api, sim.simId, 64_000);
    const d1 = await registerDevice(sys.api, admin.token);
    const d2 = await registerDevice(sys.api, admin.token);
    const first = await assign(sim.simId, { device_id: d1.deviceId, subscription_slot: "1" });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ sim_id: sim.simId, device_id: d1.deviceId, subscription_slot: 1 });
    const moved = await assign(sim.simId, { device_id: d2.deviceId, subscription_slot: 0 });
    expect(moved.status).toBe(200);
    expect(moved.body).toMatchObject({
      sim_id: sim.simId,
      device_id: d2.deviceId,
      subscription_slot: 0,
      balance_mirror: 64000,
    });
    const d1Sims = (await sys.api.get(`/v1/devices/${d1.deviceId}`, { token: admin.token })).body.sims;
    expect(d1Sims).toEqual([]);
    const audit = await sys.db.query(
      `select details from fleet.audit_log where action = 'sim.assign' and target_id = $1 order by id`,
      [sim.simId],
    );
    expect(audit[1].details).toEqual({
      from: { device_id: d1.deviceId, subscription_slot: 1 },
      to: { device_id: d2.deviceId, subscription_slot: 0 },
    });
  });

  it("excludes the moved SIM from the occupancy check: a full device's SIM can change slot", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_a", "operator_b"] });
    // Slot 0 is held by sims[0]: moving sims[1] there is refused, but sims[0] may re-assign itself.
    const occupied = await assign(sims[1].simId, { device_id: device.deviceId, subscription_slot: "0" });
    expect(occupied.status).toBe(409);
    expect([occupied.body.code, occupied.body.context.reason]).toEqual(["conflict", "slot_occupied"]);
    const same = await assign(sims[0].simId, { device_id: device.deviceId, subscription_slot: "0" });
    expect(same.status).toBe(200);
    const other = await createSim(sys.api, admin.token);
    const full = await assign(other.simId, { device_id: device.deviceId, subscription_slot: "1" });
    expect(full.status).toBe(409);
    expect(full.body).toMatchObject({
      code: "conflict",
      context: { reason: "device_full", device_id: device.deviceId },
    });
    const lone = await provisionHandset(sys.api, admin.token);
    const swap = await assign(lone.sims[0].simId, { device_id: lone.device.deviceId, subscription_slot: "1" });
    expect(swap.status).toBe(200);
    expect(swap.body.subscription_slot).toBe(1);
  });

  it("answers 404 for an unknown SIM or device, 409 for a device not active, 422 for a bad body", async () => {
    const sim = await createSim(sys.api, admin.token);
    const d = await registerDevice(sys.api, admin.token);
    expect((await assign(UNKNOWN_ID, { device_id: d.deviceId, subscription_slot: "0" })).status).toBe(404);
    const noDevice = await assign(sim.simId, { device_id: UNKNOWN_DEVICE_ID, subscription_slot: "0" });
    expect(noDevice.status).toBe(404);
    expect([noDevice.body.code, noDevice.body.context.reason]).toEqual(["not_found", "device_not_found"]);
    expect((await assign(sim.simId, { device_id: d.deviceId })).status).toBe(422);
    expect((await assign(sim.simId, { subscription_slot: "0" })).status).toBe(422);
    expect((await assign(sim.simId, { device_id: d.deviceId, subscription_slot: "3" })).status).toBe(422);
    await setCircuitBreaker(sys.api, admin.token, true);
    try {
      const frozen = await assign(sim.simId, { device_id: d.deviceId, subscription_slot: "0" });
      expect(frozen.status).toBe(409);
      expect([frozen.body.code, frozen.body.context.reason]).toEqual(["conflict", "device_not_active"]);
    } finally {
      await sys.api.post("/v1/admin/circuit-breaker/lift", { token: admin.token });
    }
    expect((await getSim(sim.simId)).body.device_id).toBeNull();
  });
});

describe("unassign (DELETE /v1/sims/{id}/assignment)", () => {
  it("takes the SIM out of its device keeping the rest, then 409 when already unassigned, 404 when unknown", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, { balance: 3000 });
    const res = await sys.api.delete(`/v1/sims/${sims[0].simId}/assignment`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({
      sim_id: sims[0].simId,
      device_id: null,
      subscription_slot: null,
      balance_mirror: 3000,
    });
    expect((await sys.api.get(`/v1/devices/${device.deviceId}`, { token: admin.token })).body.sims).toEqual([]);
    const again = await sys.api.delete(`/v1/sims/${sims[0].simId}/assignment`, { token: admin.token });
    expect(again.status).toBe(409);
    expect([again.body.code, again.body.context.reason]).toEqual(["conflict", "sim_unassigned"]);
    expect((await sys.api.delete(`/v1/sims/${UNKNOWN_ID}/assignment`, { token: admin.token })).status).toBe(404);
  });
});

describe("record a balance (PATCH /v1/sims/{id}/balance)", () => {
  it("writes mirror, time and source together with an audit row of previous and new values", async () => {
    const sim = await createSim(sys.api, admin.token);
    const t1 = new Date(Date.now() - 120_000);
    const first = await balance(sim.simId, { balance: 10_000, observed_at: t1.toISOString(), source: "balance_check" });
    expect(first.status).toBe(200);
    expect(first.body).toEqual({
      sim_id: sim.simId,
      balance_mirror: 10000,
      balance_updated_at: t1.toISOString(),
      balance_source: "balance_check",
      applied: true,
    });
    const second = await balance(sim.simId, { balance: 8_500 });
    expect(second.body).toMatchObject({ balance_mirror: 8500, balance_source: "api", applied: true });
    expect(Math.abs(new Date(second.body.balance_updated_at).getTime() - Date.now())).toBeLessThan(10_000);
    const [row] = await sys.db.query(
      `select balance_mirror, balance_updated_at, balance_source from fleet.sims where id = $1`,
      [sim.simId],
    );
    expect({
      ...row,
      balance_mirror: Number(row.balance_mirror),
      balance_updated_at: new Date(row.balance_updated_at).toISOString(),
    }).toEqual({
      balance_mirror: 8500,
      balance_updated_at: second.body.balance_updated_at,
      balance_source: "api",
    });
    const audit = await sys.db.query(
      `select action, details from fleet.audit_log where target_id = $1 and action like 'sim.balance%' order by id`,
      [sim.simId],
    );
    expect(audit.map((a) => [a.action, a.details.previous_balance, a.details.balance])).toEqual([
      ["sim.balance", null, 10000],
      ["sim.balance", 10000, 8500],
    ]);
    expect(audit[1].details.previous_updated_at).toBe(t1.toISOString());
  });

  it("never lets an older reading replace a newer one", async () => {
    const sim = await createSim(sys.api, admin.token);
    const newer = new Date(Date.now() - 60_000);
    await balance(sim.simId, { balance: 50_000, observed_at: newer.toISOString() });
    const older = await balance(sim.simId, {
      balance: 1,
      observed_at: new Date(newer.getTime() - 1000).toISOString(),
      source: "sms",
    });
    expect(older.status).toBe(200);
    expect(older.body).toEqual({
      sim_id: sim.simId,
      balance_mirror: 50000,
      balance_updated_at: newer.toISOString(),
      balance_source: "api",
      applied: false,
    });
    const [audit] = await sys.db.query(
      `select details from fleet.audit_log where target_id = $1 and action = 'sim.balance_ignored'`,
      [sim.simId],
    );
    expect(audit.details).toMatchObject({ previous_balance: 50000, balance: 1, applied: false });
    expect((await getSim(sim.simId)).body.balance_mirror).toBe(50000);
  });

  it("accepts n8n as a source", async () => {
    const sim = await createSim(sys.api, admin.token);
    const res = await balance(sim.simId, { balance: 0, source: "n8n" });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ balance_mirror: 0, balance_source: "n8n" });
  });

  it.each([
    ["a negative balance", { balance: -1 }],
    ["a fractional balance", { balance: 10.5 }],
    ["a future observed_at", { balance: 100, observed_at: new Date(Date.now() + 3600_000).toISOString() }],
    ["an unknown source", { balance: 100, source: "guess" }],
    ["a malformed observed_at", { balance: 100, observed_at: "yesterday" }],
  ])("refuses %s with 422 and writes nothing", async (_name, body) => {
    const sim = await createSim(sys.api, admin.token);
    const res = await balance(sim.simId, body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    expect((await getSim(sim.simId)).body.balance_mirror).toBeNull();
  });

  it("answers 404 for an unknown SIM; only the API key may record (401 without or with a wrong key, 403 for sessions and devices)", async () => {
    expect((await balance(UNKNOWN_ID, { balance: 1 })).status).toBe(404);
    const sim = await createSim(sys.api, admin.token);
    const names = EVERY_CREDENTIAL;
    const statuses = await statusesFor(sys.api, creds, "PATCH", `/v1/sims/${sim.simId}/balance`, [...names], {
      balance: 5,
    });
    expect(statuses).toEqual({
      none: 401,
      admin: 403,
      agent: 403,
      supervisor: 403,
      inactive: 403,
      apiKey: 200,
      wrongApiKey: 401,
      device: 403,
      revokedDevice: 401,
    });
  });

  it("raises one low_balance alert when a reading falls under the SIM's low threshold", async () => {
    const sim = await createSim(sys.api, admin.token);
    await sys.api.patch(`/v1/sims/${sim.simId}`, { token: admin.token, body: { low_balance_threshold: 20_000 } });
    await recordBalance(sys.api, sim.simId, 50_000);
    await recordBalance(sys.api, sim.simId, 15_000);
    await recordBalance(sys.api, sim.simId, 12_000);
    const alerts = await eventually(
      async () => {
        const list = (await sys.api.get("/v1/admin/notifications", { token: admin.token })).body as {
          kind: string;
          sim_id: string;
        }[];
        const mine = list.filter((n) => n.sim_id === sim.simId);
        return mine.length ? mine : undefined;
      },
      30_000,
      "the low balance notification",
    );
    expect(alerts).toHaveLength(1);
    expect(alerts[0]).toMatchObject({
      kind: "low_balance",
      severity: "warning",
      context: { balance: 15000, threshold: 20000, msisdn: sim.msisdn },
    });
    // Back above the threshold and under it again: a second alert.
    await recordBalance(sys.api, sim.simId, 30_000);
    await recordBalance(sys.api, sim.simId, 1_000);
    await eventually(
      async () => {
        const list = (await sys.api.get("/v1/admin/notifications", { token: admin.token })).body as {
          sim_id: string;
        }[];
        return list.filter((n) => n.sim_id === sim.simId).length === 2 ? true : undefined;
      },
      30_000,
      "the second low balance notification",
    );
  });
});

describe("history (GET /v1/sims/{id}/history)", () => {
  it("answers totals derived from operations and the measured balance; 404 unknown", async () => {
    const sim = await createSim(sys.api, admin.token);
    await recordBalance(sys.api, sim.simId, 7_000);
    const res = await sys.api.get(`/v1/sims/${sim.simId}/history`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      sim_id: sim.simId,
      total_operations: 0,
      total_confirmed: 0,
      total_failed: 0,
      total_no_evidence: 0,
      balance_mirror: 7000,
      operations: [],
    });
    expect((await sys.api.get(`/v1/sims/${UNKNOWN_ID}/history`, { token: admin.token })).status).toBe(404);
  });
});

describe("with dispatch's operations", () => {
  // An operation queued through the real dispatch on a SIM of ours: operator_b, the only
  // operator_b SIM of this file with a measured balance, named in the request.
  const queue = async (simId: string, requestId: string) => {
    const res = await sys.api.post("/v1/operations", {
      apiKey: true,
      body: {
        request_id: requestId,
        agent_id: admin.agentId,
        operator: "operator_b",
        client: { msisdn: "699000111", nom: "Test Recipient" },
        montant: 1000,
        sim_id: simId,
      },
    });
    expect(res.status).toBe(202);
    return res.body.operation_id as string;
  };
  const operation = async (id: string) => (await sys.api.get(`/v1/operations/${id}`, { token: admin.token })).body;

  it("refuses to unassign a SIM with an operation queued (409 sim_busy) and counts it in the SIM's history", async () => {
    const { sims } = await provisionHandset(sys.api, admin.token, { operators: ["operator_b"], balance: 500_000 });
    const id = await queue(sims[0].simId, "fleet-busy-1");
    expect((await operation(id)).sim_id).toBe(sims[0].simId);
    const res = await sys.api.delete(`/v1/sims/${sims[0].simId}/assignment`, { token: admin.token });
    expect(res.status).toBe(409);
    expect(res.body).toMatchObject({
      code: "conflict",
      context: { reason: "sim_busy", sim_id: sims[0].simId, queued_or_running: 1 },
    });
    expect((await getSim(sims[0].simId)).body.device_id).not.toBeNull();
    const history = await sys.api.get(`/v1/sims/${sims[0].simId}/history`, { token: admin.token });
    expect(history.body).toMatchObject({ sim_id: sims[0].simId, total_operations: 1, balance_mirror: 500000 });
    expect(history.body.operations).toEqual([
      expect.objectContaining({
        operation_id: id,
        status: "queued",
        op_type: "deposit",
        montant: 1000,
        msisdn_dest: "699000111",
      }),
    ]);
  });

  it("deleting the device nulls device_id on its operations and keeps sim_id; deleting the SIM nulls sim_id", async () => {
    const { device, sims } = await provisionHandset(sys.api, admin.token, {
      operators: ["operator_b"],
      balance: 500_000,
    });
    const id = await queue(sims[0].simId, "fleet-delete-1");
    expect(await operation(id)).toMatchObject({ sim_id: sims[0].simId, device_id: device.deviceId });
    expect((await sys.api.delete(`/v1/devices/${device.deviceId}`, { token: admin.token })).status).toBe(204);
    const afterDevice = await eventually(
      async () => {
        const op = await operation(id);
        return op.device_id === null ? op : undefined;
      },
      30_000,
      "dispatch to null the operation's device_id",
    );
    expect(afterDevice.sim_id).toBe(sims[0].simId);
    expect((await sys.api.delete(`/v1/sims/${sims[0].simId}`, { token: admin.token })).status).toBe(204);
    await eventually(
      async () => ((await operation(id)).sim_id === null ? true : undefined),
      30_000,
      "dispatch to null the operation's sim_id",
    );
  });
});

describe("roles", () => {
  it("every SIM route but the balance one is an admin route", async () => {
    const names = Object.keys(ADMIN_ONLY) as (keyof typeof ADMIN_ONLY)[];
    const sim = await createSim(sys.api, admin.token);
    const routes: [string, string, unknown?][] = [
      ["GET", "/v1/sims"],
      ["GET", `/v1/sims/${sim.simId}`],
      ["POST", "/v1/sims", { operator: "operator_a", msisdn: uniqueMsisdn(), pin: "1234" }],
      ["PATCH", `/v1/sims/${sim.simId}`, { status: "frozen" }],
      ["DELETE", `/v1/sims/${UNKNOWN_ID}`],
      ["PATCH", `/v1/sims/${sim.simId}/assignment`, { device_id: UNKNOWN_DEVICE_ID, subscription_slot: "0" }],
      ["DELETE", `/v1/sims/${sim.simId}/assignment`],
      ["GET", `/v1/sims/${sim.simId}/history`],
    ];
    for (const [method, path, body] of routes) {
      const statuses = await statusesFor(sys.api, creds, method as "GET", path, names, body);
      expect({ route: `${method} ${path}`, statuses }).toEqual({ route: `${method} ${path}`, statuses: ADMIN_ONLY });
    }
    expect((await getSim(sim.simId)).body.status).toBe("active");
  });
});
