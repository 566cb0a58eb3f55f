import { create } from "@bufbuild/protobuf";
import { ts, opt } from "@transferops/kit";
import {
  ContactSchema,
  ImportSchema,
  MappingColumnSchema,
  MappingSchema,
  type Contact,
  type Import,
  type Mapping,
  type MappingColumn,
} from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import { checkColumns, type Column } from "../domain/mapping.ts";
import type { ContactRow } from "../store/contacts.ts";
import type { ImportRow } from "../store/imports.ts";
import type { MappingRow } from "../store/mappings.ts";

export function contactOf(r: ContactRow): Contact {
  return create(ContactSchema, {
    customerId: r.customer_id,
    firstName: opt(r.first_name),
    lastName: opt(r.last_name),
    phone: opt(r.phone),
    email: opt(r.email),
    language: opt(r.language),
    customFields: r.custom_fields,
    tags: r.tags.map((t) => ({ tagId: t.tag_id, name: t.name })),
    lifecycle: opt(r.lifecycle),
    collaborators: r.collaborators,
    blocked: r.blocked,
    deletedAt: ts(r.deleted_at),
    createdAt: ts(r.created_at),
    updatedAt: ts(r.updated_at),
    lastTransferAt: ts(r.last_transfer_at),
    transferCount: r.transfer_count,
    lastOperationId: opt(r.last_operation_id),
  });
}

export function importOf(r: ImportRow): Import {
  return create(ImportSchema, {
    importId: r.import_id,
    state: r.state,
    fileName: opt(r.file_name),
    duplicatePolicy: r.duplicate_policy,
    mappingId: opt(r.mapping_id),
    template: opt(r.template),
    delimiter: opt(r.delimiter),
    charset: opt(r.charset),
    progress: {
      rowsTotal: r.rows_total,
      processed: r.processed,
      created: r.created,
      updated: r.updated,
      skipped: r.skipped,
      failed: r.failed,
    },
    failureReason: opt(r.failure_reason),
    failureDetail: opt(r.failure_detail),
    createdAt: ts(r.created_at),
    startedAt: ts(r.started_at),
    finishedAt: ts(r.finished_at),
  });
}

export function mappingOf(r: MappingRow): Mapping {
  return create(MappingSchema, {
    mappingId: r.mapping_id,
    name: r.name,
    columns: r.columns.map(columnOf),
    createdAt: ts(r.created_at),
    updatedAt: ts(r.updated_at),
  });
}

export function columnOf(c: Column): MappingColumn {
  return create(MappingColumnSchema, {
    column: c.column,
    target: c.target,
    customFieldKey: c.custom_field_key ?? "",
    transform: c.transform ?? "none",
  });
}

/** Proto columns → domain columns (checked by checkColumns). */
export function columnFrom(c: MappingColumn): Column {
  return {
    column: c.column,
    target: c.target as Column["target"],
    ...(c.customFieldKey ? { custom_field_key: c.customFieldKey } : {}),
    ...(c.transform && c.transform !== "none" ? { transform: c.transform as Column["transform"] } : {}),
  };
}

/** Proto columns → checked domain columns. */
export function checkedColumns(columns: MappingColumn[]): Column[] {
  const cols = columns.map(columnFrom);
  const error = checkColumns(cols);
  if (error) throw error;
  return cols;
}
