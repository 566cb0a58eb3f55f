import type { ServiceImpl } from "@connectrpc/connect";
import type {
  CreateImportRequest,
  MessagingService,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/cursor.ts";
import { refusal } from "../domain/reasons.ts";
import { importOf } from "../flows/mappers.ts";
import { createImport, findImport, importErrors, listImports } from "../flows/imports.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";

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

export function importHandlers(deps: MessagingDeps): Impl {
  const { config } = deps;
  return {
    async createImport(req) {
      requireMessagingKey(req.caller);
      checkRequest(req, config.importMaxBytes);
      return createImport(deps, req);
    },

    async getImport(req) {
      requireMessagingKey(req.caller);
      const row = await findImport(deps, req.importId);
      if (!row) throw notFound(req.importId);
      const cursor = decodeCursor("import_errors", req.errorsPage?.cursor ?? "");
      if (!cursor.ok) throw cursor.error;
      const limit = pageLimit(req.errorsPage?.limit ?? 0);
      const found = await importErrors(deps, row.import_id, cursor.seq, limit);
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
      const found = await listImports(deps, cursor.seq, limit, req.state);
      const page = found.slice(0, limit);
      return {
        imports: page.map(importOf),
        page: { nextCursor: found.length > limit ? encodeCursor("imports", page[page.length - 1].seq) : "" },
      };
    },
  };
}
