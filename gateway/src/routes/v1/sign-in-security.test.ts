import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, type TestSystem } from "../../../../test/support/system.ts";

// Failed sign-ins are limited per login (from one address) and per client address whatever credential
// headers come with them; a session opened with a temporary password may only change
// it, read its own profile and sign out.

let sys: TestSystem;
let admin: { token: string; agentId: string };

beforeAll(async () => {
  // Refills slow enough that sign-ins as slow as a loaded machine makes them refill nothing meanwhile.
  sys = await startTestSystem({
    LOGIN_FAILURES_BURST: "3",
    LOGIN_ADDRESS_FAILURES_BURST: "8",
    LOGIN_ADDRESS_FAILURES_PER_MIN: "1",
  });
  admin = await sys.api.bootstrapAdmin();
});
afterAll(async () => {
  await sys?.stop();
});

const guess = (login: string, password: string, headers: Record<string, string> = {}) =>
  sys.api.post("/v1/agents/login", { body: { login, password }, headers });

describe("sign-in throttle", () => {
  it("limits failed sign-ins per login even with a fresh junk X-API-Key on every guess", async () => {
    const victim = await sys.api.createAgent(admin.token, { login: "victim" });
    for (let i = 0; i < 3; i++) {
      const res = await guess("victim", `wrong-${i}`, { "x-api-key": `junk-${i}`, authorization: `Bearer junk-${i}` });
      expect(res.status).toBe(401);
    }
    const throttled = await guess("VICTIM", victim.password, { "x-api-key": "junk-last" });
    expect([throttled.status, throttled.body.code, throttled.body.context.reason]).toEqual([
      429,
      "rate_limited",
      "login_throttled",
    ]);
    expect(Number(throttled.headers.get("retry-after"))).toBeGreaterThan(0);
    expect(JSON.stringify(throttled.body)).not.toContain("token");
  });

  it("limits failed sign-ins per client address across logins, whatever X-Forwarded-For says", async () => {
    // 3 failures were spent above; 5 more on other logins exhaust the address's 8.
    for (let i = 0; i < 5; i++) {
      const res = await guess(`nobody-${i}`, "wrong", { "x-forwarded-for": `10.0.0.${i}`, "x-api-key": `k${i}` });
      expect(res.status).toBe(401);
    }
    const res = await guess("root", "root-password-1", { "x-forwarded-for": "10.9.9.9" });
    expect([res.status, res.body.context.reason]).toEqual([429, "login_throttled"]);
  });
});

describe("temporary-password session", () => {
  it("may only change the password, read its profile and sign out", async () => {
    // A fresh system: the address above is throttled.
    const own = await startTestSystem();
    try {
      const root = await own.api.bootstrapAdmin();
      const agent = await own.api.createAgent(root.token, { login: "tess" });
      const issued = await own.api.post(`/v1/agents/admin/${agent.agentId}/temporary-password`, {
        token: root.token,
      });
      const temporary: string = issued.body.temporary_password;
      const signIn = async () =>
        (await own.api.post("/v1/agents/login", { body: { login: "tess", password: temporary } })).body.token as string;
      const token = await signIn();

      expect((await own.api.get("/v1/agents/me", { token })).status).toBe(200);
      const refused = [
        await own.api.get("/v1/agents/me/limits", { token }),
        await own.api.get("/v1/agents/me/sims", { token }),
        await own.api.get("/v1/operations", { token }),
        await own.api.post("/v1/operations", {
          token,
          body: { request_id: "r-1", operator: "operator_a", montant: 1000, client: { msisdn: "670000001" } },
        }),
      ];
      for (const res of refused) {
        expect([res.status, res.body.code, res.body.context.reason]).toEqual([
          403,
          "not_allowed",
          "password_change_required",
        ]);
      }
      expect(await own.db.query(`select 1 from dispatch.operations`)).toEqual([]);
      expect((await own.api.post("/v1/agents/logout", { token })).status).toBe(204);

      const second = await signIn();
      const change = await own.api.patch("/v1/agents/me/password", {
        token: second,
        body: { current_password: temporary, new_password: "tess-new-password" },
      });
      expect(change.status).toBe(204);
      const fresh = await own.api.login("tess", "tess-new-password");
      expect((await own.api.get("/v1/agents/me/limits", { token: fresh })).status).toBe(200);
    } finally {
      await own.stop();
    }
  });
});
