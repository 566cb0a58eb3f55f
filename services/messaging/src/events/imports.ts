import { create, toBinary } from "@bufbuild/protobuf";
import { enqueueEvent, ts, Topics, type EntityManager } from "@transferops/kit";
import { ContactChangedSchema, ImportFinishedSchema } from "@transferops/kit/gen/transferops/messaging/v1/events_pb";
import { ContactSchema } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import type { Known } from "../domain/import-plan.ts";
import { importOf } from "../mappers.ts";
import type { ImportRow } from "../store/imports.ts";
import { enqueueMany } from "../store/import-batch.ts";

/** ImportFinished on the `contacts` topic, keyed by import_id, in the finishing transaction. */
export async function importFinished(em: EntityManager, row: ImportRow): Promise<void> {
  await enqueueEvent(em, "messaging", {
    topic: Topics.contacts,
    key: row.import_id,
    schema: ImportFinishedSchema,
    message: create(ImportFinishedSchema, { import: importOf(row), finishedAt: ts(row.finished_at ?? new Date()) }),
  });
}

/**
 * ContactChanged (`imported`) of every contact a batch created or updated, written in one
 * statement. The contact is as the batch leaves it; tag ids are not resolved here (names only).
 */
export async function contactsImported(
  em: EntityManager,
  importId: string,
  contacts: Known[],
  tagIds: Map<string, string>,
  correlationId: string,
): Promise<void> {
  const now = ts(new Date());
  await enqueueMany(
    em,
    contacts.map((c) => ({
      topic: Topics.contacts,
      key: c.customer_id,
      type: ContactChangedSchema.typeName,
      correlationId,
      payload: toBinary(
        ContactChangedSchema,
        create(ContactChangedSchema, {
          change: "imported",
          importId,
          contact: create(ContactSchema, {
            customerId: c.customer_id,
            firstName: c.first_name ?? undefined,
            lastName: c.last_name ?? undefined,
            phone: c.phone ?? undefined,
            email: c.email ?? undefined,
            language: c.language ?? undefined,
            customFields: c.custom_fields,
            tags: c.tag_names.map((name) => ({ tagId: tagIds.get(name.toLowerCase()) ?? "", name })),
            lifecycle: c.lifecycle ?? undefined,
            updatedAt: now,
            createdAt: c.isNew ? now : undefined,
          }),
        }),
      ),
    })),
  );
}
