// Two gateway replicas in front of one fleet, each remembering authentications: a credential
// ended through gateway A (a device token revoked, a session signed out, an agent deactivated,
// a password changed) must be refused at once by gateway B, which had it in memory. B keeps
// answers for 10 minutes, so only fleet's announcements (WatchCredentials) can end them in time.
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import type { WatchCredentialsResponse } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { Api, bearer } from "../../../test/support/api.ts";
import { grantAccess, provisionHandset } from "../../../test/support/fleet-fixtures.ts";
import { eventually, startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { createGatewayApp } from "../app.ts";
import { connectServices, type Services } from "../services.ts";
import type { ServiceUrls } from "../services.ts";
import { AuthCache } from "./auth-cache.ts";
import { IdlePolls } from "./idle-polls.ts";

const LONG_TTL_MS = 10 * 60_000;
const log = createLogger("gateway-b", { level: "silent" });

let sys: TestSystem;
let admin: { token: string; agentId: string };
const stops: (() => Promise<unknown> | void)[] = [];

/** Another gateway replica over the same services, remembering authentications for 10 minutes. */
async function replica(services: Services, retryMs = 1000): Promise<{ api: Api; cache: AuthCache }> {
  // As the deployed gateway: idle handsets answered from memory, dispatch's announcements watched.
  const idlePolls = new IdlePolls({ ttlMs: 120_000, log });
  idlePolls.start(services.dispatch);
  const authCache = new AuthCache({ ttlMs: LONG_TTL_MS, log, retryMs });
  authCache.start(services.fleet);
  const app = createGatewayApp({
    services,
    log,
    idlePolls,
    authCache,
    rateLimit: { ratePerS: 1000, burst: 5000 },
    requestTimeoutMs: 10_000,
  });
  const server: Server = await new Promise((resolve) => {
    const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
  });
  stops.push(
    () => idlePolls.stop(),
    () => authCache.stop(),
    () => new Promise((r) => server.close(r)),
  );
  await eventually(async () => authCache.live || undefined);
  return { api: new Api(`http://127.0.0.1:${(server.address() as AddressInfo).port}`), cache: authCache };
}

const servicesOf = () => connectServices(sys.system.serviceUrls as unknown as ServiceUrls);

let b: Api;
let bCache: AuthCache;

beforeAll(async () => {
  sys = await startTestSystem();
  ({ api: b, cache: bCache } = await replica(servicesOf()));
  admin = await sys.api.bootstrapAdmin();
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await sys?.stop();
});

/** B answers 200 for the session, from memory the second time. */
async function learnSession(token: string): Promise<void> {
  const before = bCache.size;
  expect((await b.get("/v1/agents/me", { token })).status).toBe(200);
  expect((await b.get("/v1/agents/me", { token })).status).toBe(200);
  expect(bCache.size).toBeGreaterThan(before);
}

describe("a credential ended through gateway A", () => {
  it("a revoked device token is refused at once by gateway B, which had it in memory: no PIN, no SMS taken", async () => {
    const a = sys.api;
    const agent = await a.createAgent(admin.token, { login: "replica-agent" });
    const { device, sims } = await provisionHandset(a, admin.token, { balance: 5_000_000 });
    await grantAccess(a, admin.token, agent.agentId, { simIds: [sims[0].simId], opTypes: ["deposit"] });

    // B learns the token: the handset polls through it while idle, and reads its SIMs.
    expect((await b.get("/v1/device/next", { headers: bearer(device.token) })).status).toBe(204);
    expect((await b.get("/v1/device/sims", { headers: bearer(device.token) })).status).toBe(200);
    expect((await b.get("/v1/device/sims", { headers: bearer(device.token) })).status).toBe(200);

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

    expect((await b.get("/v1/device/sims", { headers: bearer(device.token) })).status).toBe(401);
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

  it("a signed-out session is refused at once by gateway B", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "replica-logout" });
    await learnSession(agent.token);
    expect((await sys.api.post("/v1/agents/logout", { token: agent.token })).status).toBe(204);
    expect((await b.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
  });

  it("a deactivated agent's session is refused at once by gateway B", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "replica-deactivated" });
    await learnSession(agent.token);
    const r = await sys.api.post(`/v1/agents/admin/${agent.agentId}/deactivate`, { token: admin.token });
    expect(r.status).toBeLessThan(300);
    const after = await b.get("/v1/operations", { token: agent.token });
    expect(after.status).toBe(401);
  });

  it("a session opened before a password change is refused at once by gateway B", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "replica-password" });
    await learnSession(agent.token);
    const changed = await sys.api.patch("/v1/agents/me/password", {
      token: agent.token,
      body: { current_password: agent.password, new_password: "a-new-password-2" },
    });
    expect(changed.status).toBe(204);
    expect((await b.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
    const fresh = await sys.api.login("replica-password", "a-new-password-2");
    expect((await b.get("/v1/agents/me", { token: fresh })).status).toBe(200);
  });

  it("an agent's new role reaches gateway B at once", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "replica-role", role: "admin" });
    expect((await b.get("/v1/agents/admin", { token: agent.token })).status).toBe(200);
    expect((await b.get("/v1/agents/admin", { token: agent.token })).status).toBe(200);
    const r = await sys.api.patch(`/v1/agents/admin/${agent.agentId}`, { token: admin.token, body: { role: "agent" } });
    expect(r.status).toBe(200);
    expect((await b.get("/v1/agents/admin", { token: agent.token })).status).toBe(403);
  });
});

describe("a claim on a remembered authentication", () => {
  it("asks fleet nothing while the token stands, and a token revoked before the announcement arrives gets no PIN", async () => {
    const real = servicesOf();
    let authentications = 0;
    // Gateway C remembers for 10 minutes and never hears of a device's token ending: the
    // window of an announcement still in flight, held open.
    const fleet: Services["fleet"] = {
      ...real.fleet,
      authenticate: (req, o) => {
        authentications += 1;
        return real.fleet.authenticate(req, o);
      },
      watchCredentials: (req, o) =>
        (async function* () {
          for await (const m of real.fleet.watchCredentials(req, o)) yield { ...m, deviceIds: [] };
        })(),
    };
    const { api: c } = await replica({ ...real, fleet });
    const a = sys.api;
    const create = async (agentId: string) => {
      const r = await a.post("/v1/operations", {
        apiKey: true,
        body: {
          request_id: `remembered-${agentId}-${Date.now()}`,
          agent_id: agentId,
          operator: "operator_a",
          type_op: "deposit",
          montant: 5000,
          client: { msisdn: "670000002", nom: "Remembered" },
        },
      });
      expect(r.status).toBe(202);
      return (r.body as { operation_id: string }).operation_id;
    };
    const handset = async (login: string) => {
      const agent = await a.createAgent(admin.token, { login });
      const { device, sims } = await provisionHandset(a, admin.token, { balance: 5_000_000 });
      await grantAccess(a, admin.token, agent.agentId, { simIds: [sims[0].simId], opTypes: ["deposit"] });
      expect((await c.get("/v1/device/next", { headers: bearer(device.token) })).status).toBe(204);
      return { agent, device, sim: sims[0] };
    };

    // A token that stands: the claim reveals the PIN on C's remembered answer.
    const kept = await handset("remembered-kept");
    await create(kept.agent.agentId);
    const before = authentications;
    const claimed = await eventually(async () => {
      const r = await c.get("/v1/device/next", { headers: bearer(kept.device.token) });
      return r.status === 200 ? r : undefined;
    });
    expect(JSON.stringify(claimed.body)).toContain(kept.sim.pin);
    expect(authentications).toBe(before);

    // A token revoked through A while C still remembers it: fleet's reveal reads the token
    // in its own transaction and refuses; the claim rolls back, nothing is revealed or audited.
    const gone = await handset("remembered-revoked");
    const operationId = await create(gone.agent.agentId);
    expect((await a.delete(`/v1/devices/${gone.device.deviceId}/token`, { token: admin.token })).status).toBe(204);
    const poll = await c.get("/v1/device/next", { headers: bearer(gone.device.token) });
    expect(poll.status).toBe(401);
    expect(poll.body).toMatchObject({ code: "not_signed_in", context: { reason: "credentials_invalid" } });
    expect(JSON.stringify(poll.body)).not.toContain(gone.sim.pin);
    const op = await a.get(`/v1/operations/${operationId}`, { token: admin.token });
    expect((op.body as { status: string }).status).toBe("queued");
    const reveals = await sys.db.query(
      `select count(*)::int as n from fleet.audit_log where action = 'sim.pin_revealed' and target_id = $1`,
      [gone.sim.simId],
    );
    expect(reveals[0].n).toBe(0);

    // A new token gets the work that waited.
    const issued = await a.post(`/v1/devices/${gone.device.deviceId}/token`, { token: admin.token });
    expect(issued.status).toBe(201);
    const token = (issued.body as { device_token: string }).device_token;
    const after = await eventually(async () => {
      const r = await c.get("/v1/device/next", { headers: bearer(token) });
      return r.status === 200 ? r : undefined;
    });
    expect((after.body as { operation_id: string }).operation_id).toBe(operationId);
  });
});

describe("the watch of fleet's credential changes", () => {
  it("starts with ready, then relays what another fleet replica committed (its NOTIFY), and forget-all", async () => {
    const abort = new AbortController();
    const got: WatchCredentialsResponse[] = [];
    const watching = (async () => {
      for await (const m of servicesOf().fleet.watchCredentials({}, { signal: abort.signal, timeoutMs: 60_000 })) {
        got.push(m);
      }
    })().catch(() => undefined);
    await eventually(async () => got.length > 0 || undefined);
    expect(got[0].ready).toBe(true);
    await sys.db.query(`select pg_notify('fleet_credentials', $1)`, ["session:elsewhere"]);
    await sys.db.query(`select pg_notify('fleet_credentials', $1)`, ["device:elsewhere"]);
    await eventually(async () => got.flatMap((m) => m.deviceIds).includes("elsewhere") || undefined);
    expect(got.flatMap((m) => m.sessionIds)).toEqual(["elsewhere"]);
    await sys.db.query(`select pg_notify('fleet_credentials', '*')`);
    await eventually(async () => got.some((m) => m.forgetAll) || undefined);
    abort.abort();
    await watching;
  });

  it("when it ends, the replica remembers nothing and asks fleet on every request until it is back", async () => {
    const real = servicesOf();
    let authentications = 0;
    let ended = false;
    let endWatch: (() => void) | undefined;
    const fleet: Services["fleet"] = {
      ...real.fleet,
      authenticate: (req, o) => {
        authentications += 1;
        return real.fleet.authenticate(req, o);
      },
      // Fleet's stream, which the test can end (as a fleet replica stopping ends it), and
      // which cannot be opened again while `ended`.
      watchCredentials: (req, o) =>
        (async function* () {
          if (ended) throw new Error("fleet is gone");
          const stopped = new Promise<"ended">((resolve) => (endWatch = () => resolve("ended")));
          const it = real.fleet.watchCredentials(req, o)[Symbol.asyncIterator]();
          for (;;) {
            const next = await Promise.race([it.next(), stopped]);
            if (next === "ended" || next.done) {
              await it.return?.();
              return;
            }
            yield next.value;
          }
        })(),
    };
    const { api: c, cache } = await replica({ ...real, fleet }, 200);
    const agent = await sys.api.createAgent(admin.token, { login: "replica-dark" });
    const twice = async () => {
      const before = authentications;
      for (let i = 0; i < 2; i += 1) expect((await c.get("/v1/agents/me", { token: agent.token })).status).toBe(200);
      return authentications - before;
    };

    expect(await twice()).toBe(1);
    expect(await twice()).toBe(0);
    ended = true;
    endWatch!();
    await eventually(async () => !cache.live || undefined);
    expect(cache.size).toBe(0);
    expect(await twice()).toBe(2);
    expect(await twice()).toBe(2);

    ended = false;
    await eventually(async () => cache.live || undefined);
    expect(await twice()).toBe(1);
  });
});
