import { create } from "@bufbuild/protobuf";
import {
  CreateMappingRequestSchema,
  CreateMappingResponseSchema,
  type CreateMappingRequest,
  type CreateMappingResponse,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import type { Column } from "../domain/mapping.ts";
import {
  deleteMapping as deleteMappingRow,
  insertMapping,
  listMappings as listMappingRows,
  updateMapping as updateMappingRow,
  type MappingRow,
} from "../store/mappings.ts";
import { idempotent } from "./idempotent.ts";
import { mappingOf } from "./mappers.ts";
import type { MessagingDeps } from "./ports.ts";

/** The mappings after the cursor's `seq`, one more than `limit` (whether a next page exists). */
export async function listMappings(deps: MessagingDeps, afterSeq: string, limit: number): Promise<MappingRow[]> {
  return listMappingRows(deps.db.em(), afterSeq, limit);
}

/** A new mapping (already checked), once per Idempotency-Key. */
export async function createMapping(
  deps: MessagingDeps,
  req: CreateMappingRequest,
  name: string,
  columns: Column[],
): Promise<CreateMappingResponse> {
  return idempotent(
    deps,
    {
      operation: "createMapping",
      key: req.idempotencyKey,
      requestSchema: CreateMappingRequestSchema,
      request: req,
      responseSchema: CreateMappingResponseSchema,
    },
    async (em) => create(CreateMappingResponseSchema, { mapping: mappingOf(await insertMapping(em, name, columns)) }),
  );
}

/** The mapping changed, or undefined where there is none. */
export async function updateMapping(
  deps: MessagingDeps,
  id: string,
  patch: { name?: string; columns?: Column[] },
): Promise<MappingRow | undefined> {
  return deps.db.tx((em) => updateMappingRow(em, id, patch));
}

/** Whether a mapping was deleted. */
export async function deleteMapping(deps: MessagingDeps, id: string): Promise<boolean> {
  return deps.db.tx((em) => deleteMappingRow(em, id));
}
