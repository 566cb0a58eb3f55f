import { create } from "@bufbuild/protobuf";
import { isUuid, type EntityManager } from "@transferops/kit";
import {
  CreateImportRequestSchema,
  CreateImportResponseSchema,
  type CreateImportRequest,
  type CreateImportResponse,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import { findTemplate, type Column } from "../domain/mapping.ts";
import { refusal } from "../domain/reasons.ts";
import {
  findImport as findImportRow,
  insertImport,
  listImportErrors,
  listImports as listImportRows,
} from "../store/imports.ts";
import { findMapping } from "../store/mappings.ts";
import { idempotent } from "./idempotent.ts";
import { checkedColumns, importOf } from "./mappers.ts";
import type { MessagingDeps } from "./ports.ts";

/** The import's columns: its saved mapping, its template or its own (checked). */
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

/** A new import (its form already checked) queued for the worker, once per Idempotency-Key. */
export async function createImport(deps: MessagingDeps, req: CreateImportRequest): Promise<CreateImportResponse> {
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
}

/** The import, if there is one. */
export async function findImport(deps: MessagingDeps, id: string) {
  return isUuid(id) ? await findImportRow(deps.db.em(), id) : undefined;
}

/** The import's row errors after the cursor's `seq`, one more than `limit`. */
export async function importErrors(deps: MessagingDeps, id: string, afterSeq: string, limit: number) {
  return listImportErrors(deps.db.em(), id, afterSeq, limit);
}

/** The imports in a state after the cursor's `seq`, one more than `limit`. */
export async function listImports(deps: MessagingDeps, afterSeq: string, limit: number, state: string) {
  return listImportRows(deps.db.em(), afterSeq, limit, state);
}
