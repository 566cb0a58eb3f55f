import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, TEST_API_KEY, type TestSystem } from "../../../../test/support/system.ts";
import { dumpErrors } from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
/** The 21 operationIds of the messaging routes (design §11). */
const MESSAGING_OPERATION_IDS = [
  "listContacts",
  "createContact",
  "getContactCounts",
  "getContact",
  "updateContact",
  "deleteContact",
  "restoreContact",
  "blockContact",
  "unblockContact",
  "addContactTag",
  "removeContactTag",
  "setContactLifecycle",
  "setContactCollaborators",
  "listImports",
  "createImport",
  "getImport",
  "listMappingTemplates",
  "listMappings",
  "createMapping",
  "updateMapping",
  "deleteMapping",
];
const KEY = TEST_API_KEY;

beforeAll(async () => {
  sys = await startTestSystem();
});
afterAll(async () => {
  dumpErrors(sys?.logs);
  await sys?.stop();
});

let n = 0;
const phone = () => `+2376${String(50_000_000 + ++n)}`;
const get = (path: string) => sys.api.get(path, { token: KEY });
const create = (body: Record<string, unknown>, key?: string) =>
  sys.api.post("/v1/contacts", { token: KEY, body, headers: key ? { "idempotency-key": key } : {} });

/** Every page of a list, following next_cursor. */
async function allPages(path: string, during?: () => Promise<void>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await get(`${path}${cursor ? `${sep}cursor=${cursor}` : ""}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    ids.push(...res.body.data.map((c: { customer_id: string }) => c.customer_id));
    expect(res.body.pagination.has_more).toBe(res.body.pagination.next_cursor !== null);
    cursor = res.body.pagination.next_cursor;
    await during?.();
  } while (cursor);
  return ids;
}

describe("cursor pages of GET /v1/contacts", () => {
  it("pages with the default limit 50 and refuses a limit over 200 or a forged cursor", async () => {
    const tag = `bulk-${randomUUID().slice(0, 6)}`;
    for (let i = 0; i < 55; i++) expect((await create({ phone: phone(), tags: [tag] })).status).toBe(201);
    const first = await get(`/v1/contacts?tag=${tag}`);
    expect(first.body.data).toHaveLength(50);
    expect(first.body.pagination).toMatchObject({ has_more: true, limit: 50 });
    const second = await get(`/v1/contacts?tag=${tag}&cursor=${first.body.pagination.next_cursor}`);
    expect(second.body.data).toHaveLength(5);
    expect(second.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 50 });
    expect((await get(`/v1/contacts?limit=201`)).status).toBe(422);
    expect((await get(`/v1/contacts?limit=0`)).status).toBe(422);
    const forged = await get(`/v1/contacts?cursor=${Buffer.from("imports:1").toString("base64url")}`);
    expect(forged.status).toBe(422);
    expect(forged.body.context.reason).toBe("invalid_cursor");
    const garbage = await get(`/v1/contacts?cursor=%00%01`);
    expect(garbage.status).toBe(422);
  });

  it("neither skips nor repeats a row while contacts are inserted and updated between pages", async () => {
    const tag = `conc-${randomUUID().slice(0, 6)}`;
    const existing: string[] = [];
    for (let i = 0; i < 30; i++) existing.push((await create({ phone: phone(), tags: [tag] })).body.customer_id);
    let turn = 0;
    const seen = await allPages(`/v1/contacts?tag=${tag}&limit=7`, async () => {
      // Between pages: new contacts with the tag, and updates of rows already seen and not yet seen.
      await Promise.all([
        create({ phone: phone(), tags: [tag] }),
        create({ phone: phone(), tags: [tag] }),
        sys.api.patch(`/v1/contacts/${existing[turn]}`, { token: KEY, body: { first_name: `u${turn}` } }),
        sys.api.patch(`/v1/contacts/${existing[29 - turn]}`, { token: KEY, body: { first_name: `v${turn}` } }),
      ]);
      turn++;
    });
    expect(new Set(seen).size).toBe(seen.length);
    for (const id of existing) expect(seen).toContain(id);
  });

  it("filters by search (name, e-mail, phone prefix in any written form), lifecycle, blocked and updated_since", async () => {
    const marker = randomUUID().slice(0, 8);
    const a = (await create({ first_name: `Zephyrin${marker}`, phone: "+237 699 11 22 33", lifecycle: "payment" }))
      .body;
    const b = (await create({ last_name: "Mbarga", email: `${marker}@example.cm`, phone: "699112234" })).body;
    const ids = async (q: string) =>
      (await get(`/v1/contacts?${q}`)).body.data.map((c: { customer_id: string }) => c.customer_id);
    expect(await ids(`search=zephyrin${marker}`)).toEqual([a.customer_id]);
    expect(await ids(`search=${marker}%40example`)).toEqual([b.customer_id]);
    expect(await ids(`search=${encodeURIComponent("699 11 22")}`)).toEqual([a.customer_id, b.customer_id]);
    expect(await ids(`search=${encodeURIComponent("+23769911223")}`)).toEqual([a.customer_id, b.customer_id]);
    expect(await ids(`search=%25`)).not.toContain(undefined);
    expect(await ids(`search=zephyrin${marker}&lifecycle=payment`)).toEqual([a.customer_id]);
    expect(await ids(`search=zephyrin${marker}&lifecycle=customer`)).toEqual([]);
    await sys.api.post(`/v1/contacts/${b.customer_id}/block`, { token: KEY });
    expect(await ids(`search=6991122&blocked=true`)).toEqual([b.customer_id]);
    expect(await ids(`search=6991122&blocked=false`)).toEqual([a.customer_id]);
    const since = new Date(Date.now() + 60_000).toISOString();
    expect(await ids(`updated_since=${encodeURIComponent(since)}`)).toEqual([]);
    expect((await get(`/v1/contacts?updated_since=yesterday`)).status).toBe(422);
    expect((await get(`/v1/contacts?blocked=maybe`)).status).toBe(422);
  });
});

describe("Idempotency-Key on POST /v1/contacts", () => {
  it("replays the first response for the same key and body, without creating a second contact", async () => {
    const key = randomUUID();
    const body = { first_name: "Idem", phone: phone(), custom_fields: { a: "1", b: "2" } };
    const first = await create(body, key);
    expect(first.status).toBe(201);
    expect(first.headers.get("idempotent-replayed")).toBeNull();
    // Same body with its keys in another order: the same request.
    const again = await create({ custom_fields: { b: "2", a: "1" }, phone: body.phone, first_name: "Idem" }, key);
    expect(again.status).toBe(201);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body).toEqual(first.body);
    const rows = await sys.db.query(`select count(*)::int as n from messaging.contacts where phone = $1`, [body.phone]);
    expect(rows[0].n).toBe(1);
  });

  it("refuses the same key with another body with 409 idempotency_key_reused", async () => {
    const key = randomUUID();
    expect((await create({ phone: phone() }, key)).status).toBe(201);
    const other = await create({ phone: phone() }, key);
    expect(other.status).toBe(409);
    expect(other.body).toMatchObject({ code: "conflict", context: { reason: "idempotency_key_reused" } });
  });

  it("stores a refusal as the first response and replays it", async () => {
    const holder = (await create({ phone: phone() })).body;
    const key = randomUUID();
    const first = await create({ phone: holder.phone }, key);
    expect(first.status).toBe(409);
    await sys.api.delete(`/v1/contacts/${holder.customer_id}`, { token: KEY });
    const again = await create({ phone: holder.phone }, key);
    expect(again.status).toBe(409);
    expect(again.body).toEqual(first.body);
  });

  it("executes concurrent requests with one key once", async () => {
    const key = randomUUID();
    const body = { phone: phone(), first_name: "Race" };
    const answers = await Promise.all(Array.from({ length: 8 }, () => create(body, key)));
    expect(answers.map((a) => a.status)).toEqual(Array(8).fill(201));
    expect(new Set(answers.map((a) => a.body.customer_id)).size).toBe(1);
    expect(answers.filter((a) => a.headers.get("idempotent-replayed") === "true")).toHaveLength(7);
    const rows = await sys.db.query(`select count(*)::int as n from messaging.contacts where phone = $1`, [body.phone]);
    expect(rows[0].n).toBe(1);
    const events = await sys.db.query(
      `select count(*)::int as n from messaging.outbox where key = $1 and type like '%ContactChanged'`,
      [answers[0].body.customer_id],
    );
    expect(events[0].n).toBe(1);
  });

  it("forgets a key after the retention (24 h)", async () => {
    const key = randomUUID();
    const body = { phone: phone() };
    const first = await create(body, key);
    await sys.api.delete(`/v1/contacts/${first.body.customer_id}`, { token: KEY });
    await sys.db.query(
      `update messaging.idempotency_keys set created_at = now() - interval '25 hours' where key = $1`,
      [key],
    );
    const later = await create(body, key);
    expect(later.status).toBe(201);
    expect(later.body.customer_id).not.toBe(first.body.customer_id);
    expect(later.headers.get("idempotent-replayed")).toBeNull();
  });

  it("lets one of concurrent creates without a key take a phone; the others get 409 naming it", async () => {
    const body = { phone: phone() };
    const answers = await Promise.all(Array.from({ length: 6 }, () => create(body)));
    const winners = answers.filter((a) => a.status === 201);
    expect(winners).toHaveLength(1);
    for (const a of answers.filter((x) => x.status !== 201)) {
      expect(a.status).toBe(409);
      expect(a.body.context).toMatchObject({ reason: "contact_exists", customer_id: winners[0].body.customer_id });
    }
  });

  it("refuses a malformed key with 422", async () => {
    const res = await create({ phone: phone() }, "x".repeat(256));
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });
});

describe("OpenAPI document", () => {
  it("publishes the messaging schema version 0.1.0 and documents the 21 messaging routes with schemas and reasons", async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body;
    expect(doc.info["x-messaging-schema-version"]).toBe("0.1.0");
    const create = doc.paths["/v1/contacts"].post;
    expect(create.operationId).toBe("createContact");
    expect(create.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
    expect(create.requestBody.content["application/json"].example).toBeDefined();
    expect(create.responses["201"].content["application/json"].schema.properties.customer_id).toBeDefined();
    const conflict = JSON.stringify(create.responses["409"]);
    expect(conflict).toContain("contact_exists");
    expect(conflict).toContain("idempotency_key_reused");
    const ids = Object.values(doc.paths as Record<string, Record<string, { operationId: string }>>).flatMap((m) =>
      Object.values(m).map((op) => op.operationId),
    );
    for (const id of MESSAGING_OPERATION_IDS) expect(ids).toContain(id);
  });
});
