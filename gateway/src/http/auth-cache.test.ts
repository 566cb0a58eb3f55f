import { describe, expect, it } from "vitest";
import { AuthCache } from "./auth-cache.ts";

const device = { kind: "device", deviceId: "d1" } as never;
const session = { kind: "session", agentId: "a1" } as never;

describe("device-token authentication cache", () => {
  it("reuses a device's answer for between half its time to live and all of it, spread at random", () => {
    const cache = new AuthCache(1000);
    const lifetimes = new Set<number>();
    for (let i = 0; i < 200; i += 1) {
      cache.remember(`k${i}`, device, 0);
      expect(cache.get(`k${i}`, 500)).toBe(device);
      expect(cache.get(`k${i}`, 1000)).toBeUndefined();
    }
    for (let i = 0; i < 200; i += 1) {
      cache.remember(`j${i}`, device, 0);
      let t = 500;
      while (cache.get(`j${i}`, t) !== undefined) t += 50;
      lifetimes.add(t);
    }
    expect(lifetimes.size).toBeGreaterThan(3);
  });

  it("keeps the static API keys' answers too", () => {
    const cache = new AuthCache(1000);
    const apiKey = { kind: "api_key" } as never;
    const messagingKey = { kind: "messaging_key" } as never;
    cache.remember("a", apiKey, 0);
    cache.remember("m", messagingKey, 0);
    expect([cache.get("a", 500), cache.get("m", 500)]).toEqual([apiKey, messagingKey]);
  });

  it("never keeps a board session, whose revocation must take effect at once", () => {
    const cache = new AuthCache(1000);
    cache.remember("k", session, 0);
    expect(cache.get("k", 1)).toBeUndefined();
  });

  it("forgets everything when cleared, and keeps nothing with a TTL of 0", () => {
    const cache = new AuthCache(1000);
    cache.remember("k", device, 0);
    cache.clear();
    expect(cache.get("k", 1)).toBeUndefined();
    const off = new AuthCache(0);
    off.remember("k", device, 0);
    expect(off.get("k", 0)).toBeUndefined();
  });
});
