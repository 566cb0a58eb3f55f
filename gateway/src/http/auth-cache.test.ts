import { create } from "@bufbuild/protobuf";
import { timestampFromMs } from "@bufbuild/protobuf/wkt";
import { describe, expect, it } from "vitest";
import { createLogger, type Caller } from "@transferops/kit";
import { CallerSchema } from "@transferops/kit/gen/transferops/common/v1/identity_pb";
import {
  AuthenticateResponseSchema,
  type AuthenticateResponse,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { AuthCache } from "./auth-cache.ts";

const log = createLogger("auth-cache-test", { level: "silent" });
const device = create(CallerSchema, { kind: "device", deviceId: "d1" });
const session = create(CallerSchema, { kind: "session", agentId: "a1", sessionId: "s1" });
const otherSession = create(CallerSchema, { kind: "session", agentId: "a2", sessionId: "s2" });
const apiKey = create(CallerSchema, { kind: "api_key" });

/** A cache as the gateway has it while fleet's watch is live. */
function liveCache(ttlMs = 60_000): AuthCache {
  const cache = new AuthCache({ ttlMs, log });
  cache.live = true;
  return cache;
}

/** Fleet's Authenticate, counting its calls. */
function fleet(caller: Caller, validUntilMs?: number) {
  const asked = { n: 0 };
  const ask = async (): Promise<AuthenticateResponse> => {
    asked.n += 1;
    return create(AuthenticateResponseSchema, {
      caller,
      validUntil: validUntilMs === undefined ? undefined : timestampFromMs(validUntilMs),
    });
  };
  return { asked, ask };
}

describe("authentication cache", () => {
  it("asks fleet once for every kind of credential while the watch is live", async () => {
    const cache = liveCache();
    for (const caller of [session, device, apiKey]) {
      const f = fleet(caller);
      expect(await cache.authenticate(`k-${caller.kind}`, f.ask)).toEqual({ caller, cached: false });
      expect(await cache.authenticate(`k-${caller.kind}`, f.ask)).toEqual({ caller, cached: true });
      expect(f.asked.n).toBe(1);
    }
  });

  it("remembers nothing while the watch is not live, and forgets everything when it ends", async () => {
    const cache = new AuthCache({ ttlMs: 60_000, log });
    const f = fleet(session);
    await cache.authenticate("k", f.ask);
    await cache.authenticate("k", f.ask);
    expect(f.asked.n).toBe(2);
    cache.live = true;
    await cache.authenticate("k", f.ask);
    cache.live = false;
    await cache.authenticate("k", f.ask);
    expect(f.asked.n).toBe(4);
  });

  it("forgets a session when it, or its agent, is announced; a device by its id; nothing else", async () => {
    const cache = liveCache();
    const f = { s: fleet(session), o: fleet(otherSession), d: fleet(device), a: fleet(apiKey) };
    const all = async () => {
      await cache.authenticate("s", f.s.ask);
      await cache.authenticate("o", f.o.ask);
      await cache.authenticate("d", f.d.ask);
      await cache.authenticate("a", f.a.ask);
    };
    await all();
    cache.changed({ agentIds: [], sessionIds: ["s1"], deviceIds: [] });
    await all();
    cache.changed({ agentIds: ["a1"], sessionIds: [], deviceIds: ["d1"] });
    await all();
    expect([f.s.asked.n, f.o.asked.n, f.d.asked.n, f.a.asked.n]).toEqual([3, 1, 2, 1]);
  });

  it("does not remember an answer when a change was announced while it was in flight", async () => {
    const cache = liveCache();
    let asked = 0;
    const ask = async () => {
      asked += 1;
      cache.changed({ agentIds: ["someone-else"], sessionIds: [], deviceIds: [] });
      return create(AuthenticateResponseSchema, { caller: session });
    };
    await cache.authenticate("k", ask);
    await cache.authenticate("k", ask);
    expect(asked).toBe(2);
  });

  it("never uses a session's answer past the session's expiry", async () => {
    const cache = liveCache();
    const f = fleet(session, Date.now() + 40);
    await cache.authenticate("k", f.ask);
    await cache.authenticate("k", f.ask);
    expect(f.asked.n).toBe(1);
    await new Promise((r) => setTimeout(r, 60));
    await cache.authenticate("k", f.ask);
    expect(f.asked.n).toBe(2);
  });

  it("asks fleet once for requests that arrive together, unless a change was announced after it asked", async () => {
    const cache = liveCache();
    const answers: (() => void)[] = [];
    const ask = async () => {
      await new Promise<void>((r) => answers.push(r));
      return create(AuthenticateResponseSchema, { caller: session });
    };
    const first = [cache.authenticate("k", ask), cache.authenticate("k", ask)];
    cache.changed({ agentIds: ["a1"], sessionIds: [], deviceIds: [] });
    const late = cache.authenticate("k", ask);
    expect(answers).toHaveLength(2);
    for (const answer of answers) answer();
    expect((await Promise.all([...first, late])).map((r) => r.caller)).toEqual([session, session, session]);
  });

  it("keeps an answer between half its time to live and all of it, spread at random", () => {
    const cache = liveCache(1000);
    const lifetimes = new Set<number>();
    for (let i = 0; i < 200; i += 1) {
      cache.keep(`k${i}`, device, cache.mark(), 0);
      let t = 0;
      while (cache.recall(`k${i}`, t) !== undefined) t += 50;
      expect(t).toBeGreaterThan(500);
      expect(t).toBeLessThanOrEqual(1000);
      lifetimes.add(t);
    }
    expect(lifetimes.size).toBeGreaterThan(3);
  });

  it("keeps nothing with a TTL of 0", async () => {
    const cache = liveCache(0);
    const f = fleet(device);
    await cache.authenticate("k", f.ask);
    await cache.authenticate("k", f.ask);
    expect(f.asked.n).toBe(2);
  });
});
