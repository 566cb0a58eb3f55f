import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, TEST_BOOTSTRAP_TOKEN, type TestSystem } from "../../../../test/support/system.ts";
import { UNKNOWN_ID } from "../../../../test/support/constants.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };

beforeAll(async () => {
  sys = await startTestSystem();
});
afterAll(async () => {
  await sys?.stop();
});

describe("bootstrap first admin", () => {
  const body = { login: "root", full_name: "Root Admin", password: "root-password-1" };

  it("refuses a missing or wrong bootstrap token with 403", async () => {
    const missing = await sys.api.post("/v1/agents/bootstrap", { body });
    expect(missing.status).toBe(403);
    expect([missing.body.code, missing.body.context.reason]).toEqual(["not_allowed", "bootstrap_refused"]);
    const wrong = await sys.api.post("/v1/agents/bootstrap", { body, headers: { "x-bootstrap-token": "nope" } });
    expect(wrong.status).toBe(403);
  });

  it("creates an admin whatever role the body names, then refuses a second bootstrap with 409", async () => {
    const res = await sys.api.post("/v1/agents/bootstrap", {
      body: { ...body, role: "agent" },
      headers: { "x-bootstrap-token": TEST_BOOTSTRAP_TOKEN },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      login: "root",
      full_name: "Root Admin",
      role: "admin",
      is_active: true,
      must_change_password: false,
    });
    expect(res.body).not.toHaveProperty("password");
    const again = await sys.api.post("/v1/agents/bootstrap", {
      body: { ...body, login: "second" },
      headers: { "x-bootstrap-token": TEST_BOOTSTRAP_TOKEN },
    });
    expect(again.status).toBe(409);
    expect([again.body.code, again.body.context.reason]).toEqual(["conflict", "admin_exists"]);
    admin = { token: await sys.api.login("root", "root-password-1"), agentId: res.body.agent_id };
  });
});

describe("login and sessions", () => {
  it("issues a token valid 5 hours from issue", async () => {
    const before = Date.now();
    const res = await sys.api.post("/v1/agents/login", { body: { login: "root", password: "root-password-1" } });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: admin.agentId, role: "admin", must_change_password: false });
    const expires = new Date(res.body.expires_at).getTime();
    expect(expires - before).toBeGreaterThanOrEqual(5 * 3600_000 - 1000);
    expect(expires - Date.now()).toBeLessThanOrEqual(5 * 3600_000);
  });

  it("does not extend the session by use", async () => {
    const login = await sys.api.post("/v1/agents/login", { body: { login: "root", password: "root-password-1" } });
    await sys.api.get("/v1/agents/me", { token: login.body.token });
    const rows = await sys.db.query(`select expires_at from fleet.sessions order by created_at desc limit 1`);
    expect(new Date(rows[0].expires_at).toISOString()).toBe(login.body.expires_at);
  });

  it("answers 401 to a wrong password, an unknown login and a missing token", async () => {
    expect((await sys.api.post("/v1/agents/login", { body: { login: "root", password: "wrong" } })).status).toBe(401);
    expect((await sys.api.post("/v1/agents/login", { body: { login: "ghost", password: "wrong" } })).status).toBe(401);
    const me = await sys.api.get("/v1/agents/me");
    expect(me.status).toBe(401);
    expect(me.body).toEqual({
      detail: expect.any(String),
      code: "not_signed_in",
      context: { reason: "credentials_missing" },
    });
  });

  it("names the refusal of a failed sign-in and of an unknown token in context.reason", async () => {
    for (const login of ["root", "ghost"]) {
      const res = await sys.api.post("/v1/agents/login", { body: { login, password: "wrong" } });
      expect([res.status, res.body.code, res.body.context]).toEqual([401, "not_signed_in", { reason: "login_failed" }]);
    }
    const me = await sys.api.get("/v1/agents/me", { token: "tos_unknown" });
    expect([me.status, me.body.code, me.body.context]).toEqual([
      401,
      "not_signed_in",
      { reason: "credentials_invalid" },
    ]);
  });

  it("revokes the session on logout", async () => {
    const token = await sys.api.login("root", "root-password-1");
    expect((await sys.api.post("/v1/agents/logout", { token })).status).toBe(204);
    expect((await sys.api.get("/v1/agents/me", { token })).status).toBe(401);
  });
});

describe("agents (admin)", () => {
  it("creates an agent, refuses a taken login with 409, lists it", async () => {
    const res = await sys.api.post("/v1/agents/admin", {
      token: admin.token,
      body: { login: "alice", full_name: "Alice N.", password: "alice-password-1" },
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({ login: "alice", role: "agent", is_active: true });
    const dup = await sys.api.post("/v1/agents/admin", {
      token: admin.token,
      body: { login: "ALICE", full_name: "Other", password: "x-password-1" },
    });
    expect(dup.status).toBe(409);
    expect([dup.body.code, dup.body.context.reason]).toEqual(["conflict", "login_exists"]);
    const list = await sys.api.get("/v1/agents/admin", { token: admin.token });
    expect(list.status).toBe(200);
    expect(list.body.map((a: { login: string }) => a.login)).toEqual(expect.arrayContaining(["root", "alice"]));
  });

  it("validates field lengths and roles with 422 invalid_request listing the problems", async () => {
    const res = await sys.api.post("/v1/agents/admin", {
      token: admin.token,
      body: { login: "x".repeat(101), full_name: "y".repeat(201), password: "p", role: "boss" },
    });
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    const fields = (res.body.detail as { field: string }[]).map((p) => p.field).sort();
    expect(fields).toEqual(["body.full_name", "body.login", "body.role"]);
  });

  it("answers 400 to malformed JSON and 422 to a malformed UUID path parameter", async () => {
    const bad = await sys.api.post("/v1/agents/admin", { token: admin.token, raw: '{"login":' });
    expect(bad.status).toBe(400);
    expect(bad.body.code).toBe("bad_request");
    const uuid = await sys.api.patch("/v1/agents/admin/not-a-uuid", { token: admin.token, body: {} });
    expect(uuid.status).toBe(422);
    expect(uuid.body.code).toBe("invalid_request");
  });

  it("refuses agents, supervisors and the API key on admin routes with 403", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "bob" });
    const supervisor = await sys.api.createAgent(admin.token, { login: "sue", role: "supervisor" });
    for (const token of [agent.token, supervisor.token]) {
      const res = await sys.api.get("/v1/agents/admin", { token });
      expect(res.status).toBe(403);
      expect([res.body.code, res.body.context.reason]).toEqual(["not_allowed", "admin_required"]);
    }
    const key = await sys.api.get("/v1/agents/admin", { apiKey: true });
    expect(key.status).toBe(403);
    expect(key.body.code).toBe("not_allowed");
  });

  it("updates an agent and 404s an unknown one", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "carol" });
    const res = await sys.api.patch(`/v1/agents/admin/${a.agentId}`, {
      token: admin.token,
      body: { full_name: "Carol K.", role: "supervisor" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ full_name: "Carol K.", role: "supervisor" });
    const missing = await sys.api.patch(`/v1/agents/admin/${UNKNOWN_ID}`, {
      token: admin.token,
      body: {},
    });
    expect(missing.status).toBe(404);
  });

  it("answers every route of an unknown agent with 404 agent_not_found and its id", async () => {
    const ghost = UNKNOWN_ID;
    for (const res of [
      await sys.api.patch(`/v1/agents/admin/${ghost}`, { token: admin.token, body: {} }),
      await sys.api.post(`/v1/agents/admin/${ghost}/deactivate`, { token: admin.token }),
      await sys.api.post(`/v1/agents/admin/${ghost}/temporary-password`, { token: admin.token }),
    ]) {
      expect([res.status, res.body.code, res.body.context]).toEqual([
        404,
        "not_found",
        { reason: "agent_not_found", agent_id: ghost },
      ]);
    }
  });

  it("gives an inactive agent 403 on board routes", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "dave" });
    // Every way of deactivating revokes the sessions: an inactive agent's live session is
    // written directly, to hold the gateway's own refusal of an inactive caller.
    await sys.db.query(`update fleet.agents set is_active = false where id = $1`, [a.agentId]);
    const res = await sys.api.get("/v1/agents/admin", { token: a.token });
    expect(res.status).toBe(403);
    expect([res.body.code, res.body.context.reason]).toEqual(["not_allowed", "agent_inactive"]);
    expect((await sys.api.post("/v1/agents/login", { body: { login: "dave", password: a.password } })).status).toBe(
      401,
    );
  });

  it("deactivates an agent, revokes its sessions, and is idempotent", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "erin" });
    const first = await sys.api.post(`/v1/agents/admin/${a.agentId}/deactivate`, { token: admin.token });
    expect(first.status).toBe(204);
    expect((await sys.api.get("/v1/agents/me", { token: a.token })).status).toBe(401);
    const second = await sys.api.post(`/v1/agents/admin/${a.agentId}/deactivate`, { token: admin.token });
    expect(second.status).toBe(204);
    const list = await sys.api.get("/v1/agents/admin", { token: admin.token });
    expect(list.body.find((x: { login: string }) => x.login === "erin")).toMatchObject({ is_active: false });
  });

  it("issues a temporary password once: hashed, forces a change, revokes sessions", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "fay" });
    const res = await sys.api.post(`/v1/agents/admin/${a.agentId}/temporary-password`, { token: admin.token });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ agent_id: a.agentId, login: "fay" });
    const temporary: string = res.body.temporary_password;
    expect(temporary.length).toBeGreaterThanOrEqual(12);
    expect((await sys.api.get("/v1/agents/me", { token: a.token })).status).toBe(401);
    const stored = await sys.db.query(`select password_hash from fleet.agents where id = $1`, [a.agentId]);
    expect(stored[0].password_hash).not.toContain(temporary);
    const login = await sys.api.post("/v1/agents/login", { body: { login: "fay", password: temporary } });
    expect(login.body.must_change_password).toBe(true);

    const change = await sys.api.patch("/v1/agents/me/password", {
      token: login.body.token,
      body: { current_password: temporary, new_password: "fay-new-password" },
    });
    expect(change.status).toBe(204);
    expect((await sys.api.get("/v1/agents/me", { token: login.body.token })).status).toBe(401);
    const after = await sys.api.post("/v1/agents/login", { body: { login: "fay", password: "fay-new-password" } });
    expect(after.body.must_change_password).toBe(false);
  });

  it("refuses a password change with a wrong current password", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "gus" });
    const res = await sys.api.patch("/v1/agents/me/password", {
      token: a.token,
      body: { current_password: "nope", new_password: "whatever-1" },
    });
    expect(res.status).toBe(401);
  });

  it("publishes agent changes through the outbox and Kafka to analytics", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "hugo", full_name: "Hugo First" });
    await sys.api.patch(`/v1/agents/admin/${a.agentId}`, { token: admin.token, body: { full_name: "Hugo Renamed" } });
    const known = await eventually(
      async () => {
        const rows = await sys.db.query(`select full_name from analytics.agents where agent_id = $1`, [a.agentId]);
        return rows[0]?.full_name === "Hugo Renamed" ? rows[0] : undefined;
      },
      30_000,
      "analytics to learn the renamed agent",
    );
    expect(known.full_name).toBe("Hugo Renamed");
  });
});

describe("cross-cutting rules", () => {
  it("echoes the caller's X-Correlation-Id and mints one otherwise", async () => {
    const mine = await sys.api.get("/v1/health", { headers: { "x-correlation-id": "abc-123" } });
    expect(mine.headers.get("x-correlation-id")).toBe("abc-123");
    const minted = await sys.api.get("/v1/nowhere");
    expect(minted.status).toBe(404);
    expect(minted.headers.get("x-correlation-id")).toMatch(/^[0-9a-f-]{36}$/);
  });

  it("never writes a password or token to the logs", async () => {
    const token = await sys.api.login("root", "root-password-1");
    await sys.api.get("/v1/agents/me", { token });
    const all = sys.logs.join("\n");
    expect(sys.logs.length).toBeGreaterThan(10);
    for (const secret of ["root-password-1", token, TEST_BOOTSTRAP_TOKEN, "alice-password-1"]) {
      expect(all).not.toContain(secret);
    }
  });
});
