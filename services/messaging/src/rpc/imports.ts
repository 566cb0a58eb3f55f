import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  CreateImportRequestSchema,
  CreateImportResponseSchema,
  type CreateImportRequest,
  type MessagingService,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import { isUuid, type EntityManager } from "@transferops/kit";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/cursor.ts";
import { findTemplate, type Column } from "../domain/mapping.ts";
import { refusal } from "../domain/reasons.ts";
import { importOf } from "../flows/mappers.ts";
import { findImport, insertImport, listImportErrors, listImports } from "../store/imports.ts";
import { findMapping } from "../store/mappings.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";
import { idempotent } from "../flows/idempotent.ts";
import { checkedColumns } from "./mappings.ts";

type Impl = Pick<ServiceImpl<typeof MessagingService>, "listImports" | "createImport" | "getImport">;

const POLICIES = new Set(["skip", "update", "create"]);
const CHARSETS = new Set(["", "auto", "utf-8", "windows-1252"]);
const DELIMITERS = new Set(["", "auto", ",", ";", "\t"]);
const STATES = new Set(["", "queued", "running", "completed", "failed"]);

const notFound = (id: string) => refusal("import_not_found", `Import ${id} not found`, { import_id: id });

/** Checks the request's form; the mapping is resolved in the transaction. */
function checkRequest(req: CreateImportRequest, maxBytes: number): void {
  const invalid = (detail: string, field: string) => refusal("invalid_request", detail, { field });
  if (!POLICIES.has(req.duplicatePolicy))
    throw invalid("duplicate_policy is skip, update or create", "duplicate_policy");
  if (!CHARSETS.has(req.charset)) throw invalid("charset is auto, utf-8 or windows-1252", "charset");
  if (!DELIMITERS.has(req.delimiter)) throw invalid("delimiter is auto, comma, semicolon or tab", "delimiter");
  if (!req.content.length) throw refusal("invalid_file", "The file is empty", { field: "file" });
  if (req.content.length > maxBytes) {
    throw refusal("invalid_file", `The file is over ${maxBytes} bytes`, { field: "file", max_bytes: maxBytes });
  }
  if (req.fileName.length > 255) throw invalid("file name is at most 255 characters", "file.name");
  const given = [req.mappingId !== "", req.template !== "", req.columns.length > 0].filter(Boolean).length;
  if (given !== 1) throw refusal("invalid_mapping", "Give exactly one of mapping_id, template and columns");
}

async function columnsOf(em: EntityManager, req: CreateImportRequest): Promise<Column[]> {
  if (req.mappingId) {
    const m = isUuid(req.mappingId) ? await findMapping(em, req.mappingId) : undefined;
    if (!m) throw refusal("mapping_not_found", `Mapping ${req.mappingId} not found`, { mapping_id: req.mappingId });
    return m.columns;
  }
  if (req.template) {
    const t = findTemplate(req.template);
    if (!t)
      throw refusal("template_not_found", `No template ${req.template.slice(0, 64)}`, {
        template: req.template.slice(0, 64),
      });
    return t.columns;
  }
  return checkedColumns(req.columns);
}

export function importHandlers(deps: MessagingDeps): Impl {
  const { db, config } = deps;
  return {
    async createImport(req) {
      requireMessagingKey(req.caller);
      checkRequest(req, config.importMaxBytes);
      const res = await idempotent(
        deps,
        {
          operation: "createImport",
          key: req.idempotencyKey,
          requestSchema: CreateImportRequestSchema,
          request: req,
          responseSchema: CreateImportResponseSchema,
        },
        async (em) => {
          const columns = await columnsOf(em, req);
          const row = await insertImport(em, {
            file_name: req.fileName || null,
            content: req.content,
            charset: req.charset || "auto",
            delimiter: req.delimiter || "auto",
            mapping_id: req.mappingId || null,
            template: req.template || null,
            columns,
            duplicate_policy: req.duplicatePolicy,
          });
          return create(CreateImportResponseSchema, { import: importOf(row) });
        },
      );
      deps.importQueued();
      return res;
    },

    async getImport(req) {
      requireMessagingKey(req.caller);
      const row = isUuid(req.importId) ? await findImport(db.em(), req.importId) : undefined;
      if (!row) throw notFound(req.importId);
      const cursor = decodeCursor("import_errors", req.errorsPage?.cursor ?? "");
      if (!cursor.ok) throw cursor.error;
      const limit = pageLimit(req.errorsPage?.limit ?? 0);
      const found = await listImportErrors(db.em(), row.import_id, cursor.seq, limit);
      const page = found.slice(0, limit);
      return {
        import: importOf(row),
        errors: page.map((e) => ({ line: e.line, column: e.column, reason: e.reason, detail: e.detail })),
        errorsPage: {
          nextCursor: found.length > limit ? encodeCursor("import_errors", page[page.length - 1].seq) : "",
        },
      };
    },

    async listImports(req) {
      requireMessagingKey(req.caller);
      if (!STATES.has(req.state)) throw refusal("invalid_request", "state is queued, running, completed or failed");
      const cursor = decodeCursor("imports", req.page?.cursor ?? "");
      if (!cursor.ok) throw cursor.error;
      const limit = pageLimit(req.page?.limit ?? 0);
      const found = await listImports(db.em(), cursor.seq, limit, req.state);
      const page = found.slice(0, limit);
      return {
        imports: page.map(importOf),
        page: { nextCursor: found.length > limit ? encodeCursor("imports", page[page.length - 1].seq) : "" },
      };
    },
  };
}
