// Two gateway replicas in front of one fleet, each remembering device tokens (AUTH_CACHE_TTL_MS
// 30 s, the default): a token revoked through one replica must stop working on the other at
// once, on every route that reveals a PIN or changes anything.
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import { Api, bearer } from "../../../test/support/api.ts";
import { grantAccess, provisionHandset } from "../../../test/support/fleet-fixtures.ts";
import { eventually, startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { createGatewayApp } from "../app.ts";
import { connectServices } from "../services.ts";
import type { ServiceUrls } from "../services.ts";
import { IdlePolls } from "./idle-polls.ts";

let sys: TestSystem;
let other: Server;
let b: Api;
let idlePolls: IdlePolls;

beforeAll(async () => {
  sys = await startTestSystem();
  const log = createLogger("gateway-b", { level: "silent" });
  const services = connectServices(sys.system.serviceUrls as unknown as ServiceUrls);
  // As the deployed gateway: idle handsets answered from memory, dispatch's announcements watched.
  idlePolls = new IdlePolls({ ttlMs: 120_000, log });
  idlePolls.start(services.dispatch);
  const app = createGatewayApp({
    services,
    log,
    idlePolls,
    rateLimit: { ratePerS: 1000, burst: 5000 },
    requestTimeoutMs: 10_000,
    authCacheTtlMs: 30_000,
  });
  other = await new Promise((resolve) => {
    const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
  });
  b = new Api(`http://127.0.0.1:${(other.address() as AddressInfo).port}`);
});
afterAll(async () => {
  idlePolls?.stop();
  await new Promise((resolve) => other?.close(resolve));
  await sys?.stop();
});

describe("a device token revoked through gateway A", () => {
  it("is refused at once by gateway B, which had it in memory: no PIN, no SMS taken", async () => {
    const a = sys.api;
    const admin = await a.bootstrapAdmin();
    const agent = await a.createAgent(admin.token, { login: "replica-agent" });
    const { device, sims } = await provisionHandset(a, admin.token, { balance: 5_000_000 });
    await grantAccess(a, admin.token, agent.agentId, { simIds: [sims[0].simId], opTypes: ["deposit"] });

    // B learns the token: the handset polls through it while idle.
    expect((await b.get("/v1/device/next", { headers: bearer(device.token) })).status).toBe(204);
    expect((await b.get("/v1/device/next", { headers: bearer(device.token) })).status).toBe(204);

    // Work for the handset, then the token revoked through A.
    await eventually(async () => {
      const r = await a.post("/v1/operations", {
        apiKey: true,
        body: {
          request_id: `replica-${Date.now()}`,
          agent_id: agent.agentId,
          operator: "operator_a",
          type_op: "deposit",
          montant: 5000,
          client: { msisdn: "670000001", nom: "Replica" },
        },
      });
      return r.status === 202 ? r : undefined;
    });
    const revoked = await a.delete(`/v1/devices/${device.deviceId}/token`, { token: admin.token });
    expect(revoked.status).toBeLessThan(300);

    const poll = await b.get("/v1/device/next", { headers: bearer(device.token) });
    expect(poll.status).toBe(401);
    expect(JSON.stringify(poll.body)).not.toContain(sims[0].pin);
    const sms = await b.post("/v1/device/messages", {
      headers: bearer(device.token),
      body: {
        sim_id: sims[0].simId,
        messages: [{ sender: "MobileMoney", raw: "forged", received_at: new Date().toISOString() }],
      },
    });
    expect(sms.status).toBe(401);
  });
});
