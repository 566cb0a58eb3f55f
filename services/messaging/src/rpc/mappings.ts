import { isUuid } from "@transferops/kit";
import type { ServiceImpl } from "@connectrpc/connect";
import type { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import { decodeCursor, encodeCursor, pageLimit } from "../domain/cursor.ts";
import { TEMPLATES } from "../domain/mapping.ts";
import { refusal } from "../domain/reasons.ts";
import { checkedColumns, columnOf, mappingOf } from "../flows/mappers.ts";
import { createMapping, deleteMapping, listMappings, updateMapping } from "../flows/mappings.ts";
import type { MessagingDeps } from "../flows/ports.ts";
import { requireMessagingKey } from "./guard.ts";

type Impl = Pick<
  ServiceImpl<typeof MessagingService>,
  "listMappingTemplates" | "listMappings" | "createMapping" | "updateMapping" | "deleteMapping"
>;

const notFound = (id: string) => refusal("mapping_not_found", `Mapping ${id} not found`, { mapping_id: id });

function checkedName(name: string): string {
  const t = name.trim();
  if (!t || t.length > 100) throw refusal("invalid_request", "name has 1 to 100 characters", { field: "name" });
  return t;
}

export function mappingHandlers(deps: MessagingDeps): Impl {
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
      const found = await listMappings(deps, cursor.seq, limit);
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
      return createMapping(deps, req, name, columns);
    },

    async updateMapping(req) {
      requireMessagingKey(req.caller);
      if (!isUuid(req.mappingId)) throw notFound(req.mappingId);
      const name = req.name === undefined ? undefined : checkedName(req.name);
      const columns = req.columnsSet ? checkedColumns(req.columns) : undefined;
      const row = await updateMapping(deps, req.mappingId, { name, columns });
      if (!row) throw notFound(req.mappingId);
      return { mapping: mappingOf(row) };
    },

    async deleteMapping(req) {
      requireMessagingKey(req.caller);
      if (!isUuid(req.mappingId) || !(await deleteMapping(deps, req.mappingId))) {
        throw notFound(req.mappingId);
      }
      return {};
    },
  };
}
