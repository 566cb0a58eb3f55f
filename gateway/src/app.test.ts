import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "../../test/support/system.ts";
import { RateLimiter } from "./http/rate-limit.ts";

let sys: TestSystem;

beforeAll(async () => {
  sys = await startTestSystem({ RATE_LIMIT_RPS: "1", RATE_LIMIT_BURST: "3" });
});
afterAll(async () => {
  await sys?.stop();
});

/** The answer of `send` once it is not a 429, waiting as each 429's Retry-After says (ten tries). */
async function pastTheLimit<T extends { status: number; headers: Headers }>(send: () => Promise<T>): Promise<T> {
  let res = await send();
  for (let i = 0; res.status === 429 && i < 10; i++) {
    await new Promise((r) => setTimeout(r, 1000 * Number(res.headers.get("retry-after") ?? 1)));
    res = await send();
  }
  return res;
}

describe("gateway", () => {
  it("serves an OpenAPI 3.1 document where every route has a unique operationId", async () => {
    const res = await sys.api.get("/v1/openapi.json");
    expect(res.status).toBe(200);
    expect(res.body.openapi).toBe("3.1.0");
    const ids: string[] = [];
    for (const methods of Object.values(res.body.paths as Record<string, Record<string, { operationId: string }>>)) {
      for (const op of Object.values(methods)) ids.push(op.operationId);
    }
    expect(new Set(ids).size).toBe(ids.length);
    expect(ids).toEqual(
      expect.arrayContaining([
        "getHealth",
        "login",
        "logout",
        "getOwnProfile",
        "changeOwnPassword",
        "bootstrapAdmin",
        "createAgent",
        "listAgents",
        "updateAgent",
        "deactivateAgent",
        "issueTemporaryPassword",
      ]),
    );
    expect(res.body.paths["/v1/agents/admin/{agent_id}"].patch.parameters[0]).toMatchObject({
      name: "agent_id",
      in: "path",
      schema: { format: "uuid" },
    });
  });

  it("reports every service's gRPC health on GET /v1/health", async () => {
    // This system allows 3 requests at once from one address and 1 a second after; its own
    // readiness polls from this address may have spent them: wait as Retry-After says.
    const res = await pastTheLimit(() => sys.api.get("/v1/health"));
    expect(res.status).toBe(200);
    expect(res.body.services).toEqual({
      fleet: "SERVING",
      dispatch: "SERVING",
      evidence: "SERVING",
      intake: "SERVING",
      analytics: "SERVING",
      messaging: "SERVING",
    });
  });

  it("answers 429 with Retry-After once an address spends its burst on invalid credentials; a verified caller keeps its own bucket", async () => {
    // The API key is verified (and remembered) before the address is spent. Until it is
    // remembered, its first request is counted against the address, which the test before may
    // have spent: wait as Retry-After says.
    expect((await pastTheLimit(() => sys.api.get("/v1/agents/me", { apiKey: true }))).status).toBe(403);
    // Earlier tests (and readiness polls) spent this address's bucket: wait until it is full
    // (burst 3 at 1 a second), then send six at once so no refill falls between them, made-up
    // credentials of two kinds: the address is limited, whatever credential it makes up.
    await new Promise((r) => setTimeout(r, 3_500));
    const answers = await Promise.all(
      Array.from({ length: 6 }, (_, i) => sys.api.get("/v1/agents/me", { token: `tos_made-up-${i % 2}` })),
    );
    const statuses = answers.map((res) => res.status);
    const limited = answers.filter((res) => res.status === 429);
    // Three are spent on 401s (one more if a refill lands while they arrive); the rest are 429.
    expect(statuses.filter((s) => s === 401).length).toBeGreaterThanOrEqual(3);
    expect(statuses.filter((s) => s === 401).length).toBeLessThanOrEqual(4);
    expect(statuses.every((s) => s === 401 || s === 429)).toBe(true);
    expect(limited.length).toBeGreaterThanOrEqual(2);
    for (const res of limited) expect(res.headers.get("x-correlation-id")).toBeTruthy();
    const retryAfter = limited[0]!.headers.get("retry-after");
    const body: any = limited[0]!.body;
    expect(Number(retryAfter)).toBeGreaterThanOrEqual(1);
    expect(body.code).toBe("rate_limited");
    // The verified caller is counted in its own bucket.
    expect((await sys.api.get("/v1/agents/me", { apiKey: true })).status).toBe(403);
  });
});

describe("rate limiter", () => {
  it("refills at its rate and never above its burst", () => {
    const limiter = new RateLimiter(2, 2);
    const t0 = 1_000_000;
    expect([limiter.take("k", t0), limiter.take("k", t0), limiter.take("k", t0)]).toEqual([0, 0, 1]);
    expect(limiter.take("k", t0 + 500)).toBe(0);
    expect(limiter.take("k", t0 + 60_000)).toBe(0);
    expect(limiter.take("k", t0 + 60_000)).toBe(0);
    expect(limiter.take("k", t0 + 60_000)).toBeGreaterThan(0);
  });
});
