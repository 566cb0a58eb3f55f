// A right that ends, ends at once, on every gateway; streams are bounded; the limiter and the
// sign-in throttle cannot be turned against users. Two gateway replicas in front of one
// system: changes are made through A (the system's own gateway), their effect is watched on
// B, another replica that remembers authentications for 10 minutes and re-checks a stream's
// session by itself only every 30 s: only fleet's announcements can end things in time.
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, csv, KafkaBus } from "@transferops/kit";
import { Api } from "../../../test/support/api.ts";
import { grantAccess, provisionHandset } from "../../../test/support/fleet-fixtures.ts";
import { eventually, startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { createGatewayApp, type GatewayOptions } from "../app.ts";
import { connectServices, type Services, type ServiceUrls } from "../services.ts";
import { AuthCache } from "./auth-cache.ts";
import { ChangeFeed } from "./change-feed.ts";

const log = createLogger("gateway-b", { level: "silent" });
let sys: TestSystem;
let admin: { token: string; agentId: string };
const stops: (() => Promise<unknown> | void)[] = [];

interface Replica {
  url: string;
  api: Api;
  /** Authentication calls this replica made to fleet. */
  authentications: () => number;
}

/** Another gateway replica over the same services (10-minute authentication memory). */
async function replica(extra: Partial<GatewayOptions> = {}): Promise<Replica> {
  const real = extra.services ?? connectServices(sys.system.serviceUrls as unknown as ServiceUrls);
  let authentications = 0;
  const services: Services = {
    ...real,
    fleet: {
      ...real.fleet,
      authenticate: (req, o) => {
        authentications += 1;
        return real.fleet.authenticate(req, o);
      },
    },
  };
  const authCache = new AuthCache({ ttlMs: 10 * 60_000, log });
  authCache.start(services.fleet);
  const app = createGatewayApp({
    services,
    log,
    authCache,
    rateLimit: { ratePerS: 1000, burst: 5000 },
    requestTimeoutMs: 10_000,
    ...extra,
  });
  const server: Server = await new Promise((resolve) => {
    const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
  });
  stops.push(
    () => authCache.stop(),
    () => {
      server.closeAllConnections();
      return new Promise((r) => server.close(r));
    },
  );
  await eventually(async () => authCache.live || undefined);
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return { url, api: new Api(url), authentications: () => authentications };
}

/** An open event stream: what it said so far, and when it said `event: end`. */
class Stream {
  text = "";
  endedAt?: number;
  private readonly abort = new AbortController();
  private constructor(private readonly reader: ReadableStreamDefaultReader<string>) {
    void this.pump();
  }
  static async open(base: string, token: string): Promise<Stream> {
    const abort = new AbortController();
    const res = await fetch(`${base}/v1/events`, {
      headers: { authorization: `Bearer ${token}` },
      signal: abort.signal,
    });
    expect(res.status).toBe(200);
    const s = new Stream(res.body!.pipeThrough(new TextDecoderStream()).getReader());
    s.abort.signal.addEventListener("abort", () => abort.abort());
    stops.push(() => s.close());
    await eventually(async () => s.text.includes("event: ready") || undefined, 20_000, "the stream ready");
    return s;
  }
  private async pump(): Promise<void> {
    try {
      for (;;) {
        const { value, done } = await this.reader.read();
        if (done) break;
        this.text += value;
        if (this.endedAt === undefined && this.text.includes("event: end")) this.endedAt = Date.now();
      }
    } catch {
      /* aborted */
    }
  }
  /** The reason of its `end` event, once ended. */
  get reason(): string | undefined {
    const m = /event: end\ndata: (\{.*\})/.exec(this.text);
    return m ? (JSON.parse(m[1]) as { reason: string }).reason : undefined;
  }
  close(): void {
    this.abort.abort();
  }
}

/**
 * The stream ends within `ms` of `since` (B re-checks by itself only every 30 s). Measured from
 * the change's answer: fleet answers only once its replica heard its own announcement.
 */
async function endsWithin(stream: Stream, ms: number, since = Date.now()): Promise<string> {
  await eventually(async () => stream.endedAt !== undefined || undefined, ms + 1000, "the stream to end");
  expect(stream.endedAt! - since).toBeLessThan(ms);
  return stream.reason!;
}

let b: Replica;
beforeAll(async () => {
  sys = await startTestSystem();
  admin = await sys.api.bootstrapAdmin();
  b = await replica();
});
afterAll(async () => {
  for (const stop of stops.reverse()) await stop();
  await sys?.stop();
});

describe("a right that ends ends the streams on every gateway at once", () => {
  it("sign-out through A ends the session's stream on B, and B refuses the token", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ends-logout" });
    const stream = await Stream.open(b.url, agent.token);
    expect((await sys.api.post("/v1/agents/logout", { token: agent.token })).status).toBe(204);
    expect(await endsWithin(stream, 3000, Date.now())).toBe("credentials_changed");
    expect((await b.api.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
    const again = await fetch(`${b.url}/v1/events`, { headers: { authorization: `Bearer ${agent.token}` } });
    expect(again.status).toBe(401);
  });

  it("an admin demoted to agent through A loses the stream on B at once", async () => {
    const other = await sys.api.createAgent(admin.token, { login: "ends-demoted", role: "admin" });
    const stream = await Stream.open(b.url, other.token);
    const r = await sys.api.patch(`/v1/agents/admin/${other.agentId}`, { token: admin.token, body: { role: "agent" } });
    expect(r.status).toBe(200);
    expect(await endsWithin(stream, 3000, Date.now())).toBe("credentials_changed");
    // Reconnecting gives the agent's view (no alerts), not the admin's.
    expect((await b.api.get("/v1/admin/notifications", { token: other.token })).status).toBe(403);
  });

  it("PATCH is_active:false through A ends the stream on B, revokes the sessions, and true again revives none", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ends-patched" });
    const stream = await Stream.open(b.url, agent.token);
    const off = await sys.api.patch(`/v1/agents/admin/${agent.agentId}`, {
      token: admin.token,
      body: { is_active: false },
    });
    expect(off.status).toBe(200);
    expect(await endsWithin(stream, 3000, Date.now())).toBe("credentials_changed");
    const on = await sys.api.patch(`/v1/agents/admin/${agent.agentId}`, {
      token: admin.token,
      body: { is_active: true },
    });
    expect(on.status).toBe(200);
    expect((await b.api.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
    expect((await sys.api.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
    // Signing in again works.
    const fresh = await sys.api.login("ends-patched", agent.password);
    expect((await b.api.get("/v1/agents/me", { token: fresh })).status).toBe(200);
  });

  it("the deactivate route through A ends the stream on B", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ends-deactivated" });
    const stream = await Stream.open(b.url, agent.token);
    expect((await sys.api.post(`/v1/agents/admin/${agent.agentId}/deactivate`, { token: admin.token })).status).toBe(
      204,
    );
    expect(await endsWithin(stream, 3000, Date.now())).toBe("credentials_changed");
  });

  it("a new access grant through A ends the agent's stream on B", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ends-grant" });
    const { sims } = await provisionHandset(sys.api, admin.token, { balance: 100_000 });
    const stream = await Stream.open(b.url, agent.token);
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sims[0].simId], opTypes: ["deposit"] });
    expect(await endsWithin(stream, 3000, Date.now())).toBe("credentials_changed");
    // The session itself stands: the board reconnects under the new grant.
    expect((await b.api.get("/v1/agents/me", { token: agent.token })).status).toBe(200);
  });

  it("a password change through A ends the stream on B", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ends-password" });
    const stream = await Stream.open(b.url, agent.token);
    const r = await sys.api.patch("/v1/agents/me/password", {
      token: agent.token,
      body: { current_password: agent.password, new_password: "ends-password-new-1" },
    });
    expect(r.status).toBe(204);
    expect(await endsWithin(stream, 3000, Date.now())).toBe("credentials_changed");
    expect((await b.api.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
  });

  it("the session's expiry ends its stream at that moment", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "ends-expiry" });
    // The session runs out 3 s from now.
    await sys.db.query(`update fleet.sessions set expires_at = now() + interval '3 seconds' where agent_id = $1`, [
      agent.agentId,
    ]);
    const stream = await Stream.open(b.url, agent.token);
    const expiresAt = Date.now() + 3000;
    expect(await endsWithin(stream, 2500, expiresAt)).toBe("session_ended");
    expect((await b.api.get("/v1/agents/me", { token: agent.token })).status).toBe(401);
  });
});

describe("streams are bounded", () => {
  it("a session holds at most 3 streams: a fourth ends the oldest", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "streams-cap" });
    const streams: Stream[] = [];
    for (let i = 0; i < 3; i += 1) streams.push(await Stream.open(b.url, agent.token));
    const fourth = await Stream.open(b.url, agent.token);
    expect(await endsWithin(streams[0], 3000)).toBe("stream_limit");
    expect(streams[1].endedAt).toBeUndefined();
    expect(streams[2].endedAt).toBeUndefined();
    expect(fourth.endedAt).toBeUndefined();
  });
});

describe("an idle stream costs no read", () => {
  it("reads only when the bus carries a change, within the poll interval", async () => {
    const real = connectServices(sys.system.serviceUrls as unknown as ServiceUrls);
    let reads = 0;
    const services: Services = {
      ...real,
      dispatch: {
        ...real.dispatch,
        listOperations: (req, o) => {
          reads += 1;
          return real.dispatch.listOperations(req, o);
        },
      },
    };
    const bus = new KafkaBus({
      brokers: csv(sys.env.KAFKA_BROKERS),
      clientId: "gateway-d",
      prefix: sys.topicPrefix,
      log,
    });
    const changes = new ChangeFeed(log);
    await changes.start(bus);
    stops.push(() => changes.stop().then(() => bus.close()));
    await eventually(async () => changes.live || undefined, 60_000, "the change feed");
    const d = await replica({ services, changes, eventStream: { pollMs: 500 } });
    const { sims } = await provisionHandset(sys.api, admin.token, { balance: 5_000_000 });
    const agent = await sys.api.createAgent(admin.token, { login: "idle-reader" });
    await grantAccess(sys.api, admin.token, agent.agentId, { simIds: [sims[0].simId], opTypes: ["deposit"] });
    const stream = await Stream.open(d.url, admin.token);
    // What the setup above published has been heard; from now on nothing happens.
    await new Promise((r) => setTimeout(r, 3000));
    const idle = reads;
    await new Promise((r) => setTimeout(r, 4000));
    expect(reads).toBe(idle);

    const created = await sys.api.post("/v1/operations", {
      apiKey: true,
      body: {
        request_id: `idle-${Date.now()}`,
        agent_id: agent.agentId,
        operator: "operator_a",
        type_op: "deposit",
        montant: 5000,
        client: { msisdn: "670000003", nom: "Idle" },
      },
    });
    expect(created.status).toBe(202);
    const id = (created.body as { operation_id: string }).operation_id;
    await eventually(async () => stream.text.includes(id) || undefined, 20_000, "the operation's hint");
    expect(reads).toBeGreaterThan(idle);
  });
});

describe("the rate limiter before verification", () => {
  it("limits made-up tokens by client address, asking fleet at most a burst's worth", async () => {
    const c = await replica({ rateLimit: { ratePerS: 0.05, burst: 10 } });
    const statuses: number[] = [];
    for (let i = 0; i < 40; i += 1) {
      const r = await fetch(`${c.url}/v1/operations`, {
        headers: { authorization: `Bearer made-up-${i}-${Date.now()}` },
      });
      statuses.push(r.status);
    }
    expect(statuses.filter((s) => s === 429).length).toBeGreaterThanOrEqual(25);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(12);
    expect(c.authentications()).toBeLessThanOrEqual(12);
  });

  it("refuses a repeated invalid token without asking fleet each time", async () => {
    const c = await replica();
    for (let i = 0; i < 20; i += 1) {
      const r = await fetch(`${c.url}/v1/operations`, { headers: { authorization: "Bearer the-same-invalid-token" } });
      expect(r.status).toBe(401);
      expect(await r.json()).toMatchObject({ code: "not_signed_in", context: { reason: "credentials_invalid" } });
    }
    expect(c.authentications()).toBe(1);
  });

  it("remembers a refusal for the kind asked: a session refused on a messaging route still signs in elsewhere", async () => {
    const c = await replica();
    const agent = await sys.api.createAgent(admin.token, { login: "refused-as-messaging" });
    const bearer = { authorization: `Bearer ${agent.token}` };
    // The contacts routes take the messaging key alone: the session's token is asked as one, and refused.
    for (let i = 0; i < 2; i += 1) expect((await fetch(`${c.url}/v1/contacts`, { headers: bearer })).status).toBe(401);
    const own = await fetch(`${c.url}/v1/agents/me`, { headers: bearer });
    expect(own.status).toBe(200);
  });

  it("behind a trusted proxy, junk from one client address limits that address, not a verified caller nor another address", async () => {
    const c = await replica({ rateLimit: { ratePerS: 0.05, burst: 10 }, trustedProxies: ["127.0.0.1"] });
    const agent = await sys.api.createAgent(admin.token, { login: "limit-verified" });
    const from = (ip: string, token: string) =>
      fetch(`${c.url}/v1/agents/me`, { headers: { authorization: `Bearer ${token}`, "x-forwarded-for": ip } });
    expect((await from("203.0.113.7", agent.token)).status).toBe(200);
    const junk: number[] = [];
    for (let i = 0; i < 20; i += 1) junk.push((await from("203.0.113.7", `junk-${i}`)).status);
    expect(junk.slice(-5)).toEqual([429, 429, 429, 429, 429]);
    expect((await from("203.0.113.8", "junk-elsewhere")).status).toBe(401);
    expect((await from("203.0.113.7", agent.token)).status).toBe(200);
  });
});

describe("sign-in throttling", () => {
  it("by login and client address: guessing from one address does not lock the user out from another", async () => {
    const c = await replica({
      trustedProxies: ["127.0.0.1"],
      loginThrottle: {
        perLogin: { burst: 5, perMinute: 1 },
        perAddress: { burst: 50, perMinute: 30 },
        perLoginGlobal: { burst: 100, perMinute: 20 },
      },
    });
    const agent = await sys.api.createAgent(admin.token, { login: "throttle-victim" });
    const login = (ip: string, password: string) =>
      fetch(`${c.url}/v1/agents/login`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": ip },
        body: JSON.stringify({ login: "throttle-victim", password }),
      });
    for (let i = 0; i < 5; i += 1) expect((await login("198.51.100.1", `wrong-${i}`)).status).toBe(401);
    expect((await login("198.51.100.1", "wrong-again")).status).toBe(429);
    expect((await login("198.51.100.2", agent.password)).status).toBe(200);
  });

  it("a slower global ceiling per login stops guessing from many addresses, and alerts the admins", async () => {
    const c = await replica({
      trustedProxies: ["127.0.0.1"],
      loginThrottle: {
        perLogin: { burst: 3, perMinute: 1 },
        perAddress: { burst: 50, perMinute: 30 },
        perLoginGlobal: { burst: 12, perMinute: 1 },
      },
    });
    await sys.api.createAgent(admin.token, { login: "throttle-attacked" });
    const statuses: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const r = await fetch(`${c.url}/v1/agents/login`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-forwarded-for": `192.0.2.${i + 1}` },
        body: JSON.stringify({ login: "throttle-attacked", password: "guess" }),
      });
      statuses.push(r.status);
    }
    expect(statuses.slice(0, 12).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(12).every((s) => s === 429)).toBe(true);
    const alert = await eventually(
      async () => {
        const r = await sys.api.get("/v1/admin/notifications?limit=250", { token: admin.token });
        return (r.body as { kind: string; message: string; severity: string }[]).find(
          (n) => n.kind === "sign_in_attack" && n.message.includes("throttle-attacked"),
        );
      },
      30_000,
      "the sign-in attack alert",
    );
    expect(alert.severity).toBe("critical");
  });
});
