import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, TEST_API_KEY, type TestSystem } from "../../../../test/support/system.ts";
import { dumpErrors } from "../../../../test/support/fleet-fixtures.ts";
import { UNKNOWN_ID } from "../../../../test/support/constants.ts";

let sys: TestSystem;
let admin: { token: string; agentId: string };
const KEY = TEST_API_KEY;

beforeAll(async () => {
  sys = await startTestSystem();
  admin = await sys.api.bootstrapAdmin();
});
afterAll(async () => {
  dumpErrors(sys?.logs);
  await sys?.stop();
});

let phoneSeq = 0;
/** A fresh Cameroon national mobile number, written the way people do. */
const localPhone = () =>
  `6 9${String(++phoneSeq)
    .padStart(7, "0")
    .replace(/(\d{2})(\d{2})(\d{3})/, "$1 $2 $3")}`;
const e164Of = (local: string) => "+237" + local.replace(/\s/g, "");

const post = (path: string, body?: unknown, headers?: Record<string, string>) =>
  sys.api.post(path, { token: KEY, body, headers });
const get = (path: string) => sys.api.get(path, { token: KEY });
const createContact = async (body: Record<string, unknown> = {}) => {
  const res = await post("/v1/contacts", { first_name: "Test", phone: localPhone(), ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(201);
  return res.body;
};

describe("authentication of the messaging routes", () => {
  it("refuses a request without a key with 401", async () => {
    const res = await sys.api.get("/v1/contacts");
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("not_signed_in");
  });

  it("refuses an unknown Bearer key with 401", async () => {
    const res = await sys.api.get("/v1/contacts", { token: "not-a-key" });
    expect(res.status).toBe(401);
    expect(res.body.code).toBe("not_signed_in");
  });

  it("refuses a board session token (it is not a messaging key) with 401", async () => {
    const res = await sys.api.get("/v1/contacts", { token: admin.token });
    expect(res.status).toBe(401);
  });

  it("refuses the automation key sent as X-API-Key with 403", async () => {
    const res = await sys.api.get("/v1/contacts", { apiKey: true });
    expect(res.status).toBe(403);
    expect(res.body.code).toBe("not_allowed");
  });
});

describe("create a contact (POST /v1/contacts)", () => {
  it("normalises a Cameroon national phone to E.164, lower-cases the e-mail and answers every field", async () => {
    const local = localPhone();
    const res = await post("/v1/contacts", {
      first_name: " Aïcha ",
      last_name: "Nkomo",
      phone: local,
      email: `Aicha.${phoneSeq}@Example.CM`,
      language: "fr",
      custom_fields: { city: "Douala" },
      tags: ["VIP", "vip", "Douala"],
      lifecycle: "customer",
    });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      first_name: "Aïcha",
      last_name: "Nkomo",
      phone: e164Of(local),
      email: `aicha.${phoneSeq}@example.cm`,
      language: "fr",
      custom_fields: { city: "Douala" },
      lifecycle: "customer",
      collaborators: [],
      blocked: false,
      deleted_at: null,
      transfer_count: 0,
      last_transfer_at: null,
    });
    expect(res.body.tags.map((t: { name: string }) => t.name)).toEqual(["Douala", "VIP"]);
    expect(res.body.customer_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(new Date(res.body.created_at).toISOString()).toBe(res.body.created_at);
    const read = await get(`/v1/contacts/${res.body.customer_id}`);
    expect(read.body).toEqual(res.body);
  });

  it.each([
    ["+237 6 77 12 34 56", "+237677123456"],
    ["00237677123457", "+237677123457"],
    ["237677123458", "+237677123458"],
    ["677.12.34.59", "+237677123459"],
    ["+33 6 12 34 56 78", "+33612345678"],
  ])("understands the phone %s as %s", async (phone, e164) => {
    const res = await post("/v1/contacts", { phone });
    expect(res.status).toBe(201);
    expect(res.body.phone).toBe(e164);
  });

  it("refuses a phone or e-mail held by a live contact with 409 naming it", async () => {
    const first = await createContact({ email: `dup${phoneSeq}@example.cm` });
    const samePhone = await post("/v1/contacts", { phone: "+237 " + first.phone.slice(4) });
    expect(samePhone.status).toBe(409);
    expect(samePhone.body).toMatchObject({
      code: "conflict",
      context: { reason: "contact_exists", customer_id: first.customer_id, field: "phone" },
    });
    const sameEmail = await post("/v1/contacts", { email: first.email.toUpperCase() });
    expect(sameEmail.status).toBe(409);
    expect(sameEmail.body.context).toMatchObject({
      reason: "contact_exists",
      customer_id: first.customer_id,
      field: "email",
    });
  });

  it.each([
    ["an invalid phone", { phone: "12345" }, "invalid_phone"],
    ["a malformed e-mail", { email: "not-an-email" }, "invalid_email"],
    ["an unknown lifecycle stage", { lifecycle: "vip" }, "unknown_lifecycle"],
    ["an unknown collaborator", { collaborators: [UNKNOWN_ID] }, "unknown_collaborator"],
    ["a bad custom field key", { custom_fields: { "Bad Key": "x" } }, "invalid_request"],
  ])("refuses %s with 422 and its reason", async (_name, body, reason) => {
    const res = await post("/v1/contacts", body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
    expect(res.body.context.reason).toBe(reason);
  });

  it.each([
    ["a NUL character", { first_name: "a\u0000b" }],
    ["an unknown field", { nickname: "x" }],
    ["a name over 100 characters", { first_name: "x".repeat(101) }],
    ["a collaborator that is not a UUID", { collaborators: ["x"] }],
    ["a number for a name", { first_name: 12 }],
  ])("refuses %s at the gateway with 422", async (_name, body) => {
    const res = await post("/v1/contacts", body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("accepts active fleet agents as collaborators", async () => {
    const agent = await sys.api.createAgent(admin.token, { login: "collab1" });
    const c = await createContact({ collaborators: [agent.agentId] });
    expect(c.collaborators).toEqual([agent.agentId]);
  });
});

describe("change a contact", () => {
  it("PATCH writes only the fields sent; null clears; custom fields merge", async () => {
    const c = await createContact({
      last_name: "Old",
      email: `p${phoneSeq}@example.cm`,
      custom_fields: { a: "1", b: "2" },
    });
    const res = await sys.api.patch(`/v1/contacts/${c.customer_id}`, {
      token: KEY,
      body: { last_name: "New", email: null, custom_fields: { a: "", c: "3" } },
    });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ first_name: "Test", last_name: "New", email: null, phone: c.phone });
    expect(res.body.custom_fields).toEqual({ b: "2", c: "3" });
    expect(res.body.updated_at > c.updated_at).toBe(true);
  });

  it("PATCH refuses the phone of another live contact with 409", async () => {
    const a = await createContact();
    const b = await createContact();
    const res = await sys.api.patch(`/v1/contacts/${b.customer_id}`, { token: KEY, body: { phone: a.phone } });
    expect(res.status).toBe(409);
    expect(res.body.context).toMatchObject({ reason: "contact_exists", customer_id: a.customer_id });
  });

  it("answers 404 for an unknown contact and 422 for a malformed id", async () => {
    const unknown = await get(`/v1/contacts/${UNKNOWN_ID}`);
    expect(unknown.status).toBe(404);
    expect(unknown.body).toMatchObject({ code: "not_found", context: { reason: "contact_not_found" } });
    const malformed = await get(`/v1/contacts/not-a-uuid`);
    expect(malformed.status).toBe(422);
  });

  it("deletes softly, restores, and frees the phone while deleted", async () => {
    const c = await createContact({ lifecycle: "hot_lead" });
    const del = await sys.api.delete(`/v1/contacts/${c.customer_id}`, { token: KEY });
    expect(del.status).toBe(200);
    expect(del.body.deleted_at).not.toBeNull();
    const listed = await get(`/v1/contacts?search=${encodeURIComponent(c.phone)}`);
    expect(listed.body.data).toEqual([]);
    const withDeleted = await get(`/v1/contacts?deleted=only&search=${encodeURIComponent(c.phone)}`);
    expect(withDeleted.body.data.map((x: { customer_id: string }) => x.customer_id)).toEqual([c.customer_id]);
    const blocked = await post(`/v1/contacts/${c.customer_id}/block`);
    expect(blocked.status).toBe(409);
    expect(blocked.body.context.reason).toBe("contact_deleted");
    const taker = await post("/v1/contacts", { phone: c.phone });
    expect(taker.status).toBe(201);
    const refused = await post(`/v1/contacts/${c.customer_id}/restore`);
    expect(refused.status).toBe(409);
    expect(refused.body.context).toMatchObject({ reason: "contact_exists", customer_id: taker.body.customer_id });
    await sys.api.delete(`/v1/contacts/${taker.body.customer_id}`, { token: KEY });
    const restored = await post(`/v1/contacts/${c.customer_id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.deleted_at).toBeNull();
    const again = await post(`/v1/contacts/${c.customer_id}/restore`);
    expect(again.status).toBe(409);
    expect(again.body.context.reason).toBe("contact_not_deleted");
  });

  it("blocks and unblocks idempotently", async () => {
    const c = await createContact();
    for (let i = 0; i < 2; i++) {
      const res = await post(`/v1/contacts/${c.customer_id}/block`);
      expect(res.status).toBe(200);
      expect(res.body.blocked).toBe(true);
    }
    for (let i = 0; i < 2; i++) {
      const res = await sys.api.delete(`/v1/contacts/${c.customer_id}/block`, { token: KEY });
      expect(res.status).toBe(200);
      expect(res.body.blocked).toBe(false);
    }
  });

  it("adds tags by name (catalogue, case-insensitive) or id and removes them", async () => {
    const c = await createContact();
    const added = await post(`/v1/contacts/${c.customer_id}/tags`, { name: "Newsletter" });
    expect(added.status).toBe(200);
    const tag = added.body.tags[0];
    expect(tag.name).toBe("Newsletter");
    const other = await createContact();
    const byName = await post(`/v1/contacts/${other.customer_id}/tags`, { name: "NEWSLETTER" });
    expect(byName.body.tags).toEqual([tag]);
    const byId = await post(`/v1/contacts/${other.customer_id}/tags`, { tag_id: tag.tag_id });
    expect(byId.body.tags).toEqual([tag]);
    const unknown = await post(`/v1/contacts/${other.customer_id}/tags`, { tag_id: UNKNOWN_ID });
    expect(unknown.status).toBe(404);
    expect(unknown.body.context.reason).toBe("tag_not_found");
    const both = await post(`/v1/contacts/${other.customer_id}/tags`, { tag_id: UNKNOWN_ID, name: "x" });
    expect(both.status).toBe(422);
    const removed = await sys.api.delete(`/v1/contacts/${c.customer_id}/tags/${tag.tag_id}`, { token: KEY });
    expect(removed.status).toBe(200);
    expect(removed.body.tags).toEqual([]);
    const again = await sys.api.delete(`/v1/contacts/${c.customer_id}/tags/${tag.tag_id}`, { token: KEY });
    expect(again.status).toBe(404);
    expect(again.body.context.reason).toBe("tag_not_found");
  });

  it("sets and clears the lifecycle from the configured stages", async () => {
    const c = await createContact();
    const set = await sys.api.put(`/v1/contacts/${c.customer_id}/lifecycle`, {
      token: KEY,
      body: { lifecycle: "payment" },
    });
    expect(set.body.lifecycle).toBe("payment");
    const bad = await sys.api.put(`/v1/contacts/${c.customer_id}/lifecycle`, {
      token: KEY,
      body: { lifecycle: "gold" },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.context.reason).toBe("unknown_lifecycle");
    const cleared = await sys.api.put(`/v1/contacts/${c.customer_id}/lifecycle`, {
      token: KEY,
      body: { lifecycle: null },
    });
    expect(cleared.body.lifecycle).toBeNull();
  });

  it("replaces the collaborators; unknown or deactivated agents are refused", async () => {
    const a = await sys.api.createAgent(admin.token, { login: "collab2" });
    const b = await sys.api.createAgent(admin.token, { login: "collab3" });
    const c = await createContact({ collaborators: [a.agentId] });
    const res = await sys.api.put(`/v1/contacts/${c.customer_id}/collaborators`, {
      token: KEY,
      body: { collaborators: [b.agentId] },
    });
    expect(res.status).toBe(200);
    expect(res.body.collaborators).toEqual([b.agentId]);
    const unknown = await sys.api.put(`/v1/contacts/${c.customer_id}/collaborators`, {
      token: KEY,
      body: { collaborators: [a.agentId, UNKNOWN_ID] },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.context).toMatchObject({ reason: "unknown_collaborator", agent_ids: [UNKNOWN_ID] });
    const deact = await sys.api.post(`/v1/agents/admin/${a.agentId}/deactivate`, { token: admin.token });
    expect(deact.status).toBeLessThan(300);
    const inactive = await sys.api.put(`/v1/contacts/${c.customer_id}/collaborators`, {
      token: KEY,
      body: { collaborators: [a.agentId] },
    });
    expect(inactive.status).toBe(422);
    expect(inactive.body.context.reason).toBe("unknown_collaborator");
  });
});

describe("counts (GET /v1/contacts/counts)", () => {
  it("counts live contacts by lifecycle, tag and blocked, and deleted ones apart", async () => {
    const before = (await get("/v1/contacts/counts")).body;
    const tag = `count-${randomUUID().slice(0, 8)}`;
    const a = await createContact({ lifecycle: "cold_lead", tags: [tag] });
    await createContact({ lifecycle: "cold_lead", tags: [tag] });
    const c = await createContact({ tags: [tag] });
    await post(`/v1/contacts/${a.customer_id}/block`);
    await sys.api.delete(`/v1/contacts/${c.customer_id}`, { token: KEY });
    const after = (await get("/v1/contacts/counts")).body;
    expect(after.total - before.total).toBe(2);
    expect(after.blocked - before.blocked).toBe(1);
    expect(after.deleted - before.deleted).toBe(1);
    const stage = (b: typeof after, key: string) => b.by_lifecycle.find((e: { key: string }) => e.key === key).count;
    expect(stage(after, "cold_lead") - stage(before, "cold_lead")).toBe(2);
    expect(after.by_tag.find((e: { key: string }) => e.key === tag)).toEqual({ key: tag, count: 2 });
  });
});
