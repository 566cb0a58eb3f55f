import { z } from "zod";
import { TARGETS, TRANSFORMS } from "@transferops/messaging/mapping";
import {
  ImportRowErrorSchema,
  ImportSchema,
  MappingSchema,
  MappingTemplateSchema,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import type { Import, Mapping } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import { HttpError } from "../../http/errors.ts";
import { toContractJson } from "../../http/json.ts";
import { created, noContent, ok, route, type ResponseDoc, type Route } from "../../http/route.ts";
import {
  cleanText,
  IDEMPOTENCY_HEADER,
  idempotencyKeyOf,
  pageOf,
  pageQuery,
  paginationSchema,
  replayHeaders,
} from "./messaging-common.ts";
import { MESSAGING } from "../../http/service-reasons.ts";
import { reasonsOf } from "../../http/reasons.ts";

// Imports of contacts from CSV files, and saved mappings of their columns. Every route takes
// `Authorization: Bearer <messaging API key>`. Decisions: docs/decisions/messaging.md.

const AUTH: ["messaging_key"] = ["messaging_key"];
const IMPORTS = "Imports";
const AUTH_ERRORS: Record<number, ResponseDoc> = {
  401: { description: "Missing Bearer key, or not a messaging API key" },
  403: {
    description: "A credential of another kind (X-API-Key, session)",
    reasons: reasonsOf(MESSAGING, "caller_not_allowed"),
  },
};

const columnSchema = z
  .object({
    column: cleanText(200).min(1).describe("Header of the source column (case and surrounding spaces ignored)"),
    target: z.enum(TARGETS).describe("Contact field; tags splits on , ; |; full_name splits into first and last name"),
    custom_field_key: z
      .string()
      .regex(/^[a-z][a-z0-9_]{0,63}$/)
      .optional()
      .describe("Key of the custom field, for target custom_field"),
    transform: z.enum(TRANSFORMS).optional().describe("Default none (phones are always normalised to E.164)"),
  })
  .strict();
const columnsSchema = z.array(columnSchema).min(1).max(100);

const COLUMNS_EXAMPLE = [
  { column: "Nom complet", target: "full_name", transform: "split_full_name" },
  { column: "Téléphone", target: "phone", transform: "normalize_phone" },
  { column: "Ville", target: "custom_field", custom_field_key: "city" },
  { column: "Étiquettes", target: "tags" },
];

const mappingSchemaZ = z.object({
  mapping_id: z.string().uuid(),
  name: z.string(),
  columns: z.array(
    z.object({ column: z.string(), target: z.string(), custom_field_key: z.string(), transform: z.string() }),
  ),
  created_at: z.string(),
  updated_at: z.string(),
});
const MAPPING_EXAMPLE = {
  mapping_id: "3c1b9a2e-8f7d-4c6b-a5e4-d3c2b1a09f8e",
  name: "Shop sheet",
  columns: COLUMNS_EXAMPLE.map((c) => ({ custom_field_key: "", transform: "none", ...c })),
  created_at: "2026-11-22T09:00:00.000Z",
  updated_at: "2026-11-22T09:00:00.000Z",
};

const progressSchema = z.object({
  rows_total: z.number().int(),
  processed: z.number().int(),
  created: z.number().int(),
  updated: z.number().int(),
  skipped: z.number().int(),
  failed: z.number().int(),
});
const importSchemaZ = z.object({
  import_id: z.string().uuid(),
  state: z.enum(["queued", "running", "completed", "failed"]),
  file_name: z.string().nullable(),
  duplicate_policy: z.enum(["skip", "update", "create"]),
  mapping_id: z.string().nullable(),
  template: z.string().nullable(),
  delimiter: z.string().nullable().describe("Separator found, once parsed"),
  charset: z.string().nullable().describe("utf-8, utf-16le or windows-1252, once parsed"),
  progress: progressSchema,
  failure_reason: z
    .string()
    .nullable()
    .describe(
      "unterminated_quote, empty_file, invalid_encoding or no_mapped_column (nothing is written), or import_error (repeated internal failure; committed batches stay)",
    ),
  failure_detail: z.string().nullable(),
  created_at: z.string(),
  started_at: z.string().nullable(),
  finished_at: z.string().nullable(),
});
const rowErrorSchema = z.object({
  line: z.number().int().describe("Line of the file where the row starts; 1 is the header"),
  column: z.string().describe("Source column at fault; empty for the whole row"),
  reason: z
    .string()
    .describe(
      "invalid_phone, invalid_email, invalid_request, unknown_lifecycle, invalid_tag, column_count, missing_identity, duplicate_contact, contact_exists",
    ),
  detail: z.string(),
});
const IMPORT_EXAMPLE = {
  import_id: "9f8e7d6c-5b4a-4392-8170-6f5e4d3c2b1a",
  state: "completed",
  file_name: "clients.csv",
  duplicate_policy: "skip",
  mapping_id: null,
  template: "spreadsheet",
  delimiter: ";",
  charset: "windows-1252",
  progress: { rows_total: 4, processed: 4, created: 2, updated: 0, skipped: 1, failed: 1 },
  failure_reason: null,
  failure_detail: null,
  created_at: "2026-11-22T09:00:00.000Z",
  started_at: "2026-11-22T09:00:00.100Z",
  finished_at: "2026-11-22T09:00:00.400Z",
};

const importJson = (i: Import | undefined) => toContractJson(ImportSchema, i!);
const mappingJson = (m: Mapping | undefined) => toContractJson(MappingSchema, m!);
const protoColumns = (cols: z.infer<typeof columnsSchema>) =>
  cols.map((c) => ({
    column: c.column,
    target: c.target,
    customFieldKey: c.custom_field_key ?? "",
    transform: c.transform ?? "none",
  }));

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/;

const createImportBody = z
  .object({
    file: z
      .object({
        name: cleanText(255).optional(),
        content: z.string().min(1).describe("The CSV file: its text, or base64 of its bytes"),
        content_encoding: z
          .enum(["text", "base64"])
          .optional()
          .describe("text (default) or base64 (for Windows-1252 or other bytes)"),
        charset: z.enum(["auto", "utf-8", "windows-1252"]).optional().describe("Of base64 bytes; default auto"),
        delimiter: z.enum(["auto", ",", ";", "\t"]).optional().describe("Default auto (from the header line)"),
      })
      .strict(),
    mapping: z
      .object({
        mapping_id: z.string().uuid().optional(),
        template: cleanText(64).optional(),
        columns: columnsSchema.optional(),
      })
      .strict()
      .refine(
        (m) => [m.mapping_id, m.template, m.columns].filter((v) => v !== undefined).length === 1,
        "give exactly one of mapping_id, template and columns",
      ),
    duplicate_policy: z.enum(["skip", "update", "create"]).optional().describe("Default skip"),
  })
  .strict();

function fileBytes(file: z.infer<typeof createImportBody>["file"]): Uint8Array {
  if (file.content_encoding !== "base64") return new TextEncoder().encode(file.content);
  const b64 = file.content.replace(/\s/g, "");
  if (!BASE64.test(b64) || b64.length % 4 === 1) {
    throw new HttpError("invalid", [{ field: "body.file.content", message: "is not base64" }]);
  }
  return new Uint8Array(Buffer.from(b64, "base64"));
}

export const importRoutes: Route[] = [
  route({
    operationId: "listImports",
    method: "get",
    path: "/v1/imports",
    tag: IMPORTS,
    summary: "List imports, a cursor page in creation order",
    auth: AUTH,
    query: z.object({ ...pageQuery, state: z.enum(["queued", "running", "completed", "failed"]).optional() }).strict(),
    responses: {
      200: {
        description: "A page of imports",
        schema: z.object({ data: z.array(importSchemaZ), pagination: paginationSchema }),
        example: { data: [IMPORT_EXAMPLE], pagination: { next_cursor: null, has_more: false, limit: 50 } },
      },
      ...AUTH_ERRORS,
      422: {
        description: "Invalid query or cursor",
        reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_cursor"),
      },
    },
    async handle({ caller, query, services }) {
      const res = await services.messaging.listImports({
        caller,
        page: { limit: query.limit ?? 0, cursor: query.cursor ?? "" },
        state: query.state ?? "",
      });
      return ok(pageOf(res.imports.map(importJson), res.page?.nextCursor ?? "", query.limit));
    },
  }),
  route({
    operationId: "createImport",
    method: "post",
    path: "/v1/imports",
    tag: IMPORTS,
    summary: "Import contacts from a CSV file, in the background",
    description:
      "The body carries the file (text, or base64 bytes) and a mapping: a saved mapping_id, a built-in template, or " +
      "inline columns. UTF-8 with or without BOM and Windows-1252 are read; the separator (comma, semicolon, tab) is " +
      "found from the header line; quoted fields may hold separators and line breaks. The import is queued (202) and " +
      "processed in batches; follow it with getImport. A file that cannot be read as a whole (an unclosed quote: a " +
      "truncated file) fails with failure_reason and writes nothing. duplicate_policy says what a row matching a live " +
      "contact (same phone, else same e-mail) does: skip (counted skipped), update (fields present overwrite, tags are " +
      "added), create (the row fails with duplicate_contact: phone and e-mail stay unique). Body up to 60 MB.",
    auth: AUTH,
    headers: [IDEMPOTENCY_HEADER],
    bodyLimit: "60mb",
    body: createImportBody,
    requestExample: {
      file: {
        name: "clients.csv",
        content: "Nom;Téléphone;Email\r\nAïcha Nkomo;677 12 34 56;aicha@example.cm\r\n",
        content_encoding: "text",
      },
      mapping: { template: "spreadsheet" },
      duplicate_policy: "skip",
    },
    responses: {
      202: {
        description: "The import, queued (or the replay of the first response)",
        schema: importSchemaZ,
        example: {
          ...IMPORT_EXAMPLE,
          state: "queued",
          started_at: null,
          finished_at: null,
          delimiter: null,
          charset: null,
          progress: { rows_total: 0, processed: 0, created: 0, updated: 0, skipped: 0, failed: 0 },
        },
      },
      ...AUTH_ERRORS,
      404: {
        description: "Unknown mapping_id or template",
        reasons: reasonsOf(MESSAGING, "mapping_not_found", "template_not_found"),
      },
      409: {
        description: "The Idempotency-Key was used with another body",
        reasons: reasonsOf(MESSAGING, "idempotency_key_reused"),
      },
      413: { description: "Body over 60 MB" },
      422: {
        description: "Invalid body",
        reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_file", "invalid_mapping"),
      },
    },
    async handle(ctx) {
      const { file, mapping, duplicate_policy } = ctx.body;
      const res = await ctx.services.messaging.createImport({
        caller: ctx.caller,
        idempotencyKey: idempotencyKeyOf(ctx),
        fileName: file.name ?? "",
        content: fileBytes(file),
        charset: file.content_encoding === "base64" ? (file.charset ?? "auto") : "utf-8",
        delimiter: file.delimiter ?? "auto",
        mappingId: mapping.mapping_id ?? "",
        template: mapping.template ?? "",
        columns: protoColumns(mapping.columns ?? []),
        duplicatePolicy: duplicate_policy ?? "skip",
      });
      return { status: 202, json: importJson(res.import), headers: replayHeaders(res.replayed) };
    },
  }),
  route({
    operationId: "getImport",
    method: "get",
    path: "/v1/imports/:import_id",
    tag: IMPORTS,
    summary: "An import's state and progress, with a cursor page of its row errors",
    description:
      "errors lists refused rows in file order (line, column, reason, detail); page them with errors_cursor.",
    auth: AUTH,
    uuidParams: ["import_id"],
    query: z
      .object({
        errors_cursor: z.string().max(64).optional(),
        errors_limit: z.coerce.number().int().min(1).max(200).optional(),
      })
      .strict(),
    responses: {
      200: {
        description: "The import and a page of its row errors",
        schema: importSchemaZ.extend({ errors: z.array(rowErrorSchema), errors_pagination: paginationSchema }),
        example: {
          ...IMPORT_EXAMPLE,
          errors: [
            {
              line: 3,
              column: "Téléphone",
              reason: "invalid_phone",
              detail: "phone 12 34 is not an E.164 or Cameroon national number",
            },
          ],
          errors_pagination: { next_cursor: null, has_more: false, limit: 50 },
        },
      },
      ...AUTH_ERRORS,
      404: { description: "No import has this import_id", reasons: reasonsOf(MESSAGING, "import_not_found") },
      422: {
        description: "Malformed import_id or cursor",
        reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_cursor"),
      },
    },
    async handle({ caller, params, query, services }) {
      const res = await services.messaging.getImport({
        caller,
        importId: params.import_id,
        errorsPage: { limit: query.errors_limit ?? 0, cursor: query.errors_cursor ?? "" },
      });
      const page = pageOf(
        res.errors.map((e) => toContractJson(ImportRowErrorSchema, e)),
        res.errorsPage?.nextCursor ?? "",
        query.errors_limit,
      );
      return ok({ ...importJson(res.import), errors: page.data, errors_pagination: page.pagination });
    },
  }),
  route({
    operationId: "listMappingTemplates",
    method: "get",
    path: "/v1/import-mappings/templates",
    tag: IMPORTS,
    summary: "Built-in mappings for common exports (Google, Outlook/iPhone, spreadsheets, HubSpot, respond.io)",
    description: "A single page (the catalogue is small); columns absent from a file are ignored.",
    auth: AUTH,
    responses: {
      200: {
        description: "The templates",
        schema: z.object({
          data: z.array(
            z.object({ template: z.string(), description: z.string(), columns: mappingSchemaZ.shape.columns }),
          ),
          pagination: paginationSchema,
        }),
        example: {
          data: [
            {
              template: "spreadsheet",
              description:
                "A simple sheet (Excel, LibreOffice, Google Sheets): Name, Phone, Email, Tags; French headers too",
              columns: [{ column: "Name", target: "full_name", custom_field_key: "", transform: "split_full_name" }],
            },
          ],
          pagination: { next_cursor: null, has_more: false, limit: 50 },
        },
      },
      ...AUTH_ERRORS,
    },
    async handle({ caller, services }) {
      const res = await services.messaging.listMappingTemplates({ caller });
      return ok(
        pageOf(
          res.templates.map((t) => toContractJson(MappingTemplateSchema, t)),
          "",
          undefined,
        ),
      );
    },
  }),
  route({
    operationId: "listMappings",
    method: "get",
    path: "/v1/import-mappings",
    tag: IMPORTS,
    summary: "List saved mappings, a cursor page in creation order",
    auth: AUTH,
    query: z.object(pageQuery).strict(),
    responses: {
      200: {
        description: "A page of mappings",
        schema: z.object({ data: z.array(mappingSchemaZ), pagination: paginationSchema }),
        example: { data: [MAPPING_EXAMPLE], pagination: { next_cursor: null, has_more: false, limit: 50 } },
      },
      ...AUTH_ERRORS,
      422: {
        description: "Invalid query or cursor",
        reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_cursor"),
      },
    },
    async handle({ caller, query, services }) {
      const res = await services.messaging.listMappings({
        caller,
        page: { limit: query.limit ?? 0, cursor: query.cursor ?? "" },
      });
      return ok(pageOf(res.mappings.map(mappingJson), res.page?.nextCursor ?? "", query.limit));
    },
  }),
  route({
    operationId: "createMapping",
    method: "post",
    path: "/v1/import-mappings",
    tag: IMPORTS,
    summary: "Save a mapping of a file's columns to contact fields",
    auth: AUTH,
    headers: [IDEMPOTENCY_HEADER],
    body: z.object({ name: cleanText(100).min(1), columns: columnsSchema }).strict(),
    requestExample: { name: "Shop sheet", columns: COLUMNS_EXAMPLE },
    responses: {
      201: {
        description: "The mapping (or the replay of the first response)",
        schema: mappingSchemaZ,
        example: MAPPING_EXAMPLE,
      },
      ...AUTH_ERRORS,
      409: {
        description: "The Idempotency-Key was used with another body",
        reasons: reasonsOf(MESSAGING, "idempotency_key_reused"),
      },
      422: { description: "Invalid body", reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_mapping") },
    },
    async handle(ctx) {
      const res = await ctx.services.messaging.createMapping({
        caller: ctx.caller,
        idempotencyKey: idempotencyKeyOf(ctx),
        name: ctx.body.name,
        columns: protoColumns(ctx.body.columns),
      });
      return { ...created(mappingJson(res.mapping)), headers: replayHeaders(res.replayed) };
    },
  }),
  route({
    operationId: "updateMapping",
    method: "patch",
    path: "/v1/import-mappings/:mapping_id",
    tag: IMPORTS,
    summary: "Change a mapping's name or columns (the columns sent replace the set)",
    description: "Imports already created keep the columns they were created with.",
    auth: AUTH,
    uuidParams: ["mapping_id"],
    body: z.object({ name: cleanText(100).min(1).optional(), columns: columnsSchema.optional() }).strict(),
    requestExample: { name: "Shop sheet (2026)" },
    responses: {
      200: { description: "The mapping", schema: mappingSchemaZ, example: MAPPING_EXAMPLE },
      ...AUTH_ERRORS,
      404: { description: "No mapping has this mapping_id", reasons: reasonsOf(MESSAGING, "mapping_not_found") },
      422: { description: "Invalid body", reasons: reasonsOf(MESSAGING, "invalid_request", "invalid_mapping") },
    },
    async handle({ caller, params, body, services }) {
      const res = await services.messaging.updateMapping({
        caller,
        mappingId: params.mapping_id,
        name: body.name,
        columns: protoColumns(body.columns ?? []),
        columnsSet: body.columns !== undefined,
      });
      return ok(mappingJson(res.mapping));
    },
  }),
  route({
    operationId: "deleteMapping",
    method: "delete",
    path: "/v1/import-mappings/:mapping_id",
    tag: IMPORTS,
    summary: "Delete a saved mapping",
    description: "Imports that used it keep their copy of its columns.",
    auth: AUTH,
    uuidParams: ["mapping_id"],
    responses: {
      204: { description: "Deleted" },
      ...AUTH_ERRORS,
      404: { description: "No mapping has this mapping_id", reasons: reasonsOf(MESSAGING, "mapping_not_found") },
      422: { description: "Malformed mapping_id", reasons: reasonsOf(MESSAGING, "invalid_request") },
    },
    async handle({ caller, params, services }) {
      await services.messaging.deleteMapping({ caller, mappingId: params.mapping_id });
      return noContent();
    },
  }),
];
