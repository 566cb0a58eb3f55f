import { isUuid } from "@transferops/kit";
import type { ServiceImpl } from "@connectrpc/connect";
import { create } from "@bufbuild/protobuf";
import {
  CreateMappingRequestSchema,
  CreateMappingResponseSchema,
  type MessagingService,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import type { MappingColumn } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/cursor.ts";
import { checkColumns, TEMPLATES, type Column } from "../domain/mapping.ts";
import { refusal } from "../domain/reasons.ts";
import { columnFrom, columnOf, mappingOf } from "../flows/mappers.ts";
import { deleteMapping, insertMapping, listMappings, updateMapping } from "../store/mappings.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";
import { idempotent } from "../flows/idempotent.ts";

type Impl = Pick<
  ServiceImpl<typeof MessagingService>,
  "listMappingTemplates" | "listMappings" | "createMapping" | "updateMapping" | "deleteMapping"
>;

const notFound = (id: string) => refusal("mapping_not_found", `Mapping ${id} not found`, { mapping_id: id });

/** Proto columns → checked domain columns. */
export function checkedColumns(columns: MappingColumn[]): Column[] {
  const cols = columns.map(columnFrom);
  const error = checkColumns(cols);
  if (error) throw error;
  return cols;
}

function checkedName(name: string): string {
  const t = name.trim();
  if (!t || t.length > 100) throw refusal("invalid_request", "name has 1 to 100 characters", { field: "name" });
  return t;
}

export function mappingHandlers(deps: MessagingDeps): Impl {
  const { db } = deps;
  return {
    async listMappingTemplates(req) {
      requireMessagingKey(req.caller);
      return {
        templates: TEMPLATES.map((t) => ({
          template: t.template,
          description: t.description,
          columns: t.columns.map(columnOf),
        })),
      };
    },

    async listMappings(req) {
      requireMessagingKey(req.caller);
      const cursor = decodeCursor("mappings", req.page?.cursor ?? "");
      if (!cursor.ok) throw cursor.error;
      const limit = pageLimit(req.page?.limit ?? 0);
      const found = await listMappings(db.em(), cursor.seq, limit);
      const page = found.slice(0, limit);
      return {
        mappings: page.map(mappingOf),
        page: { nextCursor: found.length > limit ? encodeCursor("mappings", page[page.length - 1].seq) : "" },
      };
    },

    async createMapping(req) {
      requireMessagingKey(req.caller);
      const name = checkedName(req.name);
      const columns = checkedColumns(req.columns);
      return idempotent(
        deps,
        {
          operation: "createMapping",
          key: req.idempotencyKey,
          requestSchema: CreateMappingRequestSchema,
          request: req,
          responseSchema: CreateMappingResponseSchema,
        },
        async (em) =>
          create(CreateMappingResponseSchema, { mapping: mappingOf(await insertMapping(em, name, columns)) }),
      );
    },

    async updateMapping(req) {
      requireMessagingKey(req.caller);
      if (!isUuid(req.mappingId)) throw notFound(req.mappingId);
      const name = req.name === undefined ? undefined : checkedName(req.name);
      const columns = req.columnsSet ? checkedColumns(req.columns) : undefined;
      const row = await db.tx((em) => updateMapping(em, req.mappingId, { name, columns }));
      if (!row) throw notFound(req.mappingId);
      return { mapping: mappingOf(row) };
    },

    async deleteMapping(req) {
      requireMessagingKey(req.caller);
      if (!isUuid(req.mappingId) || !(await db.tx((em) => deleteMapping(em, req.mappingId)))) {
        throw notFound(req.mappingId);
      }
      return {};
    },
  };
}
