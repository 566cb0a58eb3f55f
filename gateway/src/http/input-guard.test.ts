import { request as httpRequest } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { registerDevice } from "../../../test/support/fleet-fixtures.ts";
import { deeplyNested } from "../../../test/fuzz/hostile-values.ts";

// The inputs the hardening trial answered with 500: each gets its 4xx with the error
// body, and nothing is stored.

let sys: TestSystem;
let admin: { token: string; agentId: string };
let device: { deviceId: string; token: string };

beforeAll(async () => {
  sys = await startTestSystem();
  admin = await sys.api.bootstrapAdmin();
  device = await registerDevice(sys.api, admin.token, "Guarded handset");
});
afterAll(async () => {
  await sys?.stop();
});

const heartbeat = (extra: Record<string, unknown>) =>
  sys.api.post("/v1/device/heartbeat", {
    token: device.token,
    body: { app_version: "1.2.0", battery: 80, network: "4G", sims: [], ...extra },
  });

async function storedHeartbeat(): Promise<unknown> {
  const [row] = await sys.db.query(`select last_seen_at from fleet.devices where id = $1`, [device.deviceId]);
  return row.last_seen_at;
}

function expectError(res: { status: number; body: any }, status: number, reason: string): void {
  expect([res.status, res.body.code, res.body.context.reason]).toEqual([
    status,
    status === 422 ? "invalid_request" : "bad_request",
    reason,
  ]);
}

describe("no 500 on hostile input", () => {
  it("refuses a NUL character in a body text field with 422, storing nothing", async () => {
    const res = await sys.api.post("/v1/agents/admin", {
      token: admin.token,
      body: { login: "nul\u0000login", full_name: "N", password: "password-123" },
    });
    expectError(res, 422, "nul_character");
    expect(res.body.detail).toEqual([{ field: "body.login", message: "must not contain a NUL character" }]);
    expect(await sys.db.query(`select 1 from fleet.agents where login like 'nul%'`)).toEqual([]);
  });

  it("refuses a NUL character in a query value and a path parameter with 422", async () => {
    expectError(await sys.api.get("/v1/operations?search=a%00b", { token: admin.token }), 422, "nul_character");
    expectError(await sys.api.get("/v1/sims/a%00b", { token: admin.token }), 422, "nul_character");
  });

  it("refuses Content-Encoding gzip with a plain body with 400, storing nothing", async () => {
    const res = await sys.api.post("/v1/agents/admin", {
      token: admin.token,
      headers: { "content-encoding": "gzip" },
      body: { login: "gzip-agent", full_name: "G", password: "password-123" },
    });
    expectError(res, 400, "malformed_request");
    expect(await sys.db.query(`select 1 from fleet.agents where login = 'gzip-agent'`)).toEqual([]);
  });

  it("refuses an unsupported Content-Encoding with 415", async () => {
    const res = await sys.api.post("/v1/agents/admin", {
      token: admin.token,
      headers: { "content-encoding": "compress" },
      body: { login: "compress-agent", full_name: "C", password: "password-123" },
    });
    expectError(res, 415, "unsupported_encoding");
  });

  it("refuses a malformed percent-escape in a path with 400", async () => {
    // fetch would keep %ZZ as is too; node:http makes sure nothing normalises it.
    const res = await new Promise<{ status: number; body: any }>((resolve, reject) => {
      const req = httpRequest(`${sys.url}/v1/devices/%ZZ`, { headers: { authorization: `Bearer ${admin.token}` } });
      req.on("response", (r) => {
        let text = "";
        r.on("data", (c) => (text += c));
        r.on("end", () => resolve({ status: r.statusCode!, body: JSON.parse(text) }));
      });
      req.on("error", reject);
      req.end();
    });
    expectError(res, 400, "malformed_request");
  });

  it("refuses a heartbeat signal beyond int32 with 422, storing nothing", async () => {
    const before = await storedHeartbeat();
    const res = await heartbeat({ sims: [{ sim_id: "s1", present: true, signal: 2 ** 31 }] });
    expect([res.status, res.body.code, res.body.detail[0].field]).toEqual([
      422,
      "invalid_request",
      "body.sims.0.signal",
    ]);
    expect(await storedHeartbeat()).toEqual(before);
  });

  it("refuses a heartbeat report nested 50 levels with 422, storing nothing", async () => {
    const before = await storedHeartbeat();
    const res = await heartbeat({ report: deeplyNested(50) as Record<string, unknown> });
    expectError(res, 422, "nested_too_deeply");
    expect(await storedHeartbeat()).toEqual(before);
    // A sane heartbeat still goes through.
    expect((await heartbeat({ report: { battery: { level: 80 } } })).status).toBe(204);
  });
});
