import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, startTestSystem, TEST_API_KEY, type TestSystem } from "../../../../test/support/system.ts";
import { dumpErrors } from "../../../../test/support/fleet-fixtures.ts";

let sys: TestSystem;
const KEY = TEST_API_KEY;

beforeAll(async () => {
  sys = await startTestSystem({ IMPORT_POLL_MS: "200", IMPORT_BATCH_ROWS: "3" });
});
afterAll(async () => {
  dumpErrors(sys?.logs);
  await sys?.stop();
});

let n = 0;
/** A fresh national number, 9 digits. */
const local = () => `69${String(3_000_000 + ++n).padStart(7, "0")}`;

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  sys.api.post(path, { token: KEY, body, headers });

async function importFile(body: Record<string, unknown>) {
  const res = await post("/v1/imports", { duplicate_policy: "skip", ...body });
  expect(res.status, JSON.stringify(res.body)).toBe(202);
  expect(res.body.state).toBe("queued");
  return finished(res.body.import_id);
}

async function finished(importId: string) {
  return eventually(async () => {
    const r = await sys.api.get(`/v1/imports/${importId}`, { token: KEY });
    return r.body.state === "completed" || r.body.state === "failed" ? r.body : undefined;
  }, 30_000);
}

const contactByPhone = async (phone: string) =>
  (await sys.api.get(`/v1/contacts?search=${encodeURIComponent(phone)}`, { token: KEY })).body.data;

describe("imports of nasty files (POST /v1/imports)", () => {
  it("reads a UTF-8 file with BOM, semicolons, quoted newlines, a duplicate row and an invalid phone, with exact counts", async () => {
    const [p1, p2, p3] = [local(), local(), local()];
    const csv =
      "\uFEFFNom;Téléphone;Email;Tags;Notes\r\n" +
      `Aïcha Nkomo;${p1};aicha${n}@example.cm;VIP|Douala;"line one\r\nline; two"\r\n` +
      `Jean Paul Mbarga;6 ${p2.slice(1)};;;\r\n` +
      `Duplicate Row;${p1};;;\r\n` +
      `Bad Phone;12 34;;;\r\n` +
      `"Quoted ""Name""";${p3};;;\r\n`;
    const done = await importFile({
      file: { name: "clients.csv", content: csv },
      mapping: {
        columns: [
          { column: "nom", target: "full_name", transform: "split_full_name" },
          { column: "Téléphone", target: "phone" },
          { column: "Email", target: "email" },
          { column: "Tags", target: "tags" },
          { column: "Notes", target: "custom_field", custom_field_key: "notes" },
        ],
      },
    });
    expect(done).toMatchObject({
      state: "completed",
      delimiter: ";",
      charset: "utf-8",
      file_name: "clients.csv",
      progress: { rows_total: 5, processed: 5, created: 3, updated: 0, skipped: 1, failed: 1 },
      failure_reason: null,
    });
    // Line 2's quoted field spans two lines: the bad phone's row starts on line 6.
    expect(done.errors).toEqual([
      {
        line: 6,
        column: "Téléphone",
        reason: "invalid_phone",
        detail: "phone 12 34 is not an E.164 or Cameroon national number",
      },
    ]);
    const [aicha] = await contactByPhone(`+237${p1}`);
    expect(aicha).toMatchObject({
      first_name: "Aïcha",
      last_name: "Nkomo",
      custom_fields: { notes: "line one\r\nline; two" },
    });
    expect(aicha.tags.map((t: { name: string }) => t.name)).toEqual(["Douala", "VIP"]);
    const [jp] = await contactByPhone(`+237${p2}`);
    expect(jp).toMatchObject({ first_name: "Jean Paul", last_name: "Mbarga" });
    const [quoted] = await contactByPhone(`+237${p3}`);
    expect(quoted).toMatchObject({ first_name: "Quoted", last_name: '"Name"' });
  });

  it("reads Windows-1252 bytes sent as base64, with commas", async () => {
    const p = local();
    const text = `Name,Phone\r\nRémy Ébodé,${p}\r\n`;
    const bytes = Buffer.from(text, "latin1"); // é and É are the same bytes in Windows-1252
    const done = await importFile({
      file: { content: bytes.toString("base64"), content_encoding: "base64" },
      mapping: { template: "spreadsheet" },
    });
    expect(done).toMatchObject({ state: "completed", charset: "windows-1252", delimiter: "," });
    expect(done.progress).toMatchObject({ created: 1, failed: 0 });
    const [c] = await contactByPhone(`+237${p}`);
    expect(c).toMatchObject({ first_name: "Rémy", last_name: "Ébodé" });
  });

  it("fails a truncated file (an unclosed quote) with a clear reason and writes nothing", async () => {
    const [p1, p2] = [local(), local()];
    const csv = `Name,Phone,Notes\n Ok Row,${p1},fine\nCut Row,${p2},"the file stops in the midd`;
    const done = await importFile({ file: { content: csv }, mapping: { template: "spreadsheet" } });
    expect(done).toMatchObject({
      state: "failed",
      failure_reason: "unterminated_quote",
      progress: { processed: 0, created: 0 },
    });
    expect(done.failure_detail).toContain("line 3");
    expect(await contactByPhone(`+237${p1}`)).toEqual([]);
  });

  it("reports rows with a wrong number of fields and rows without identity", async () => {
    const p = local();
    const csv = `Name,Phone\nShort Row\n,\nGood Row,${p}\n`;
    const done = await importFile({ file: { content: csv }, mapping: { template: "spreadsheet" } });
    expect(done.progress).toMatchObject({ rows_total: 3, created: 1, failed: 2 });
    expect(done.errors.map((e: { line: number; reason: string }) => [e.line, e.reason])).toEqual([
      [2, "column_count"],
      [3, "missing_identity"],
    ]);
  });

  it("refuses NUL and control characters in a row without stopping the import", async () => {
    const p = local();
    const csv = `Name,Phone,Language\nNul\u0000Name,${local()},fr\nBad Lang,${local()},\u0000x\nGood,${p},fr\n`;
    // In the JSON text itself a NUL is refused at the gateway, like in any field; inside
    // the file's bytes (base64) it reaches the import, which fails only the rows carrying it.
    const inline = await post("/v1/imports", { file: { content: csv }, mapping: { template: "spreadsheet" } });
    expect([inline.status, inline.body.code, inline.body.context.reason]).toEqual([
      422,
      "invalid_request",
      "nul_character",
    ]);
    const done = await importFile({
      file: { content: Buffer.from(csv).toString("base64"), content_encoding: "base64" },
      mapping: { template: "spreadsheet" },
    });
    expect(done).toMatchObject({ state: "completed", progress: { rows_total: 3, created: 1, failed: 2 } });
    expect(done.errors.map((e: { line: number; reason: string }) => [e.line, e.reason])).toEqual([
      [2, "invalid_request"],
      [3, "invalid_request"],
    ]);
  });

  it("fails a file whose header has none of the mapped columns", async () => {
    const done = await importFile({ file: { content: "foo,bar\n1,2\n" }, mapping: { template: "hubspot" } });
    expect(done).toMatchObject({ state: "failed", failure_reason: "no_mapped_column" });
  });
});

describe("duplicate policies", () => {
  it("update overwrites the fields present and adds tags; create fails the row; skip skips it", async () => {
    const p = local();
    const existing = await post("/v1/contacts", { first_name: "Old", last_name: "Name", phone: p, tags: ["keep"] });
    expect(existing.status).toBe(201);
    const csv = `First Name,Last Name,Phone Number,Email\nNew,,${p},new${n}@example.cm\n`;
    const mapping = { template: "hubspot" };
    const skipped = await importFile({ file: { content: csv }, mapping, duplicate_policy: "skip" });
    expect(skipped.progress).toMatchObject({ skipped: 1, created: 0, updated: 0 });
    const refused = await importFile({ file: { content: csv }, mapping, duplicate_policy: "create" });
    expect(refused.progress).toMatchObject({ failed: 1 });
    expect(refused.errors[0]).toMatchObject({ line: 2, column: "Phone Number", reason: "duplicate_contact" });
    const updated = await importFile({ file: { content: csv }, mapping, duplicate_policy: "update" });
    expect(updated.progress).toMatchObject({ updated: 1, created: 0 });
    const [c] = await contactByPhone(`+237${p}`);
    expect(c).toMatchObject({ customer_id: existing.body.customer_id, first_name: "New", last_name: "Name" });
    expect(c.email).toBe(`new${n}@example.cm`);
    expect(c.tags.map((t: { name: string }) => t.name)).toEqual(["keep"]);
  });
});

describe("import validation and idempotency", () => {
  it.each([
    ["two mappings at once", { file: { content: "a\n" }, mapping: { template: "hubspot", columns: [] } }],
    ["no file", { mapping: { template: "hubspot" } }],
    ["a bad policy", { file: { content: "a\n" }, mapping: { template: "hubspot" }, duplicate_policy: "merge" }],
    ["bad base64", { file: { content: "%%%", content_encoding: "base64" }, mapping: { template: "hubspot" } }],
    ["an unknown target", { file: { content: "a\n" }, mapping: { columns: [{ column: "a", target: "age" }] } }],
  ])("refuses %s with 422", async (_name, body) => {
    const res = await post("/v1/imports", body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("refuses an unknown template or mapping with 404", async () => {
    const t = await post("/v1/imports", { file: { content: "a\n" }, mapping: { template: "nope" } });
    expect(t.status).toBe(404);
    expect(t.body.context.reason).toBe("template_not_found");
    const m = await post("/v1/imports", { file: { content: "a\n" }, mapping: { mapping_id: randomUUID() } });
    expect(m.status).toBe(404);
    expect(m.body.context.reason).toBe("mapping_not_found");
  });

  it("creates one import per Idempotency-Key and refuses the key with another file", async () => {
    const key = randomUUID();
    const body = { file: { content: `Name,Phone\nIdem,${local()}\n` }, mapping: { template: "spreadsheet" } };
    const first = await post("/v1/imports", body, { "idempotency-key": key });
    const again = await post("/v1/imports", body, { "idempotency-key": key });
    expect(again.status).toBe(202);
    expect(again.headers.get("idempotent-replayed")).toBe("true");
    expect(again.body.import_id).toBe(first.body.import_id);
    const other = await post("/v1/imports", { ...body, file: { content: "Name\nX\n" } }, { "idempotency-key": key });
    expect(other.status).toBe(409);
    expect(other.body.context.reason).toBe("idempotency_key_reused");
  });

  it("lists imports as cursor pages and pages an import's row errors", async () => {
    const csv = "Name,Phone\n" + Array.from({ length: 5 }, (_, i) => `Bad ${i},12\n`).join("");
    const done = await importFile({ file: { content: csv }, mapping: { template: "spreadsheet" } });
    expect(done.progress.failed).toBe(5);
    const first = await sys.api.get(`/v1/imports/${done.import_id}?errors_limit=2`, { token: KEY });
    expect(first.body.errors.map((e: { line: number }) => e.line)).toEqual([2, 3]);
    const second = await sys.api.get(
      `/v1/imports/${done.import_id}?errors_limit=2&errors_cursor=${first.body.errors_pagination.next_cursor}`,
      { token: KEY },
    );
    expect(second.body.errors.map((e: { line: number }) => e.line)).toEqual([4, 5]);
    const list = await sys.api.get(`/v1/imports?limit=1`, { token: KEY });
    expect(list.body.data).toHaveLength(1);
    expect(list.body.pagination.has_more).toBe(true);
    const failedOnly = await sys.api.get(`/v1/imports?state=failed`, { token: KEY });
    expect(failedOnly.body.data.every((i: { state: string }) => i.state === "failed")).toBe(true);
    expect((await sys.api.get(`/v1/imports/${randomUUID()}`, { token: KEY })).status).toBe(404);
  });
});

describe("saved mappings (/v1/import-mappings)", () => {
  it("creates, lists, changes, uses and deletes a mapping", async () => {
    const columns = [
      { column: "Client", target: "full_name", transform: "split_full_name" },
      { column: "Tel", target: "phone" },
    ];
    const created = await post("/v1/import-mappings", { name: "Shop", columns });
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({
      name: "Shop",
      columns: [{ column: "Client", target: "full_name" }, { column: "Tel" }],
    });
    const id = created.body.mapping_id;
    const listed = await sys.api.get("/v1/import-mappings", { token: KEY });
    expect(listed.body.data.map((m: { mapping_id: string }) => m.mapping_id)).toContain(id);
    const renamed = await sys.api.patch(`/v1/import-mappings/${id}`, { token: KEY, body: { name: "Shop 2" } });
    expect(renamed.body).toMatchObject({ name: "Shop 2", columns: created.body.columns });
    const p = local();
    const done = await importFile({
      file: { content: `Client;Tel\nMarie Claire Ngo;${p}\n` },
      mapping: { mapping_id: id },
    });
    expect(done).toMatchObject({ mapping_id: id, progress: { created: 1 } });
    const del = await sys.api.delete(`/v1/import-mappings/${id}`, { token: KEY });
    expect(del.status).toBe(204);
    expect((await sys.api.delete(`/v1/import-mappings/${id}`, { token: KEY })).status).toBe(404);
    const bad = await post("/v1/import-mappings", { name: "x", columns: [{ column: "a", target: "custom_field" }] });
    expect(bad.status).toBe(422);
    expect(bad.body.context.reason).toBe("invalid_mapping");
  });

  it("lists the built-in templates", async () => {
    const res = await sys.api.get("/v1/import-mappings/templates", { token: KEY });
    expect(res.status).toBe(200);
    expect(res.body.data.map((t: { template: string }) => t.template)).toEqual([
      "google_contacts",
      "outlook_contacts",
      "spreadsheet",
      "hubspot",
      "respond_io",
    ]);
    expect(res.body.pagination).toEqual({ next_cursor: null, has_more: false, limit: 50 });
  });
});
