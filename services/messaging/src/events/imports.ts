import { create, toBinary } from "@bufbuild/protobuf";
import { enqueueEvent, ts, Topics, type EntityManager } from "@transferops/kit";
import { ContactsImportedSchema, ImportFinishedSchema } from "@transferops/kit/gen/transferops/messaging/v1/events_pb";
import { ContactSchema, type Contact } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import type { Known } from "../domain/import-plan.ts";
import { importOf } from "../flows/mappers.ts";
import type { ImportRow } from "../store/imports.ts";

/** ImportFinished on the `contacts` topic, keyed by import_id, in the finishing transaction. */
export async function importFinished(em: EntityManager, row: ImportRow): Promise<void> {
  await enqueueEvent(em, "messaging", {
    topic: Topics.contacts,
    key: row.import_id,
    schema: ImportFinishedSchema,
    message: create(ImportFinishedSchema, { import: importOf(row), finishedAt: ts(row.finished_at ?? new Date()) }),
  });
}

/** Largest encoded size of one ContactsImported (Kafka's default message limit is 1 MB). */
const MAX_EVENT_BYTES = 512 * 1024;

/**
 * ContactsImported of a batch, in the batch's transaction: one event per ~512 KB of
 * contacts rather than one per contact, so a 100,000-row import writes about a hundred
 * events instead of 100,000.
 */
export async function contactsImported(
  em: EntityManager,
  importId: string,
  contacts: Known[],
  tagIds: Map<string, string>,
): Promise<void> {
  const now = ts(new Date());
  let event = create(ContactsImportedSchema, { importId });
  let bytes = 0;
  const flush = async () => {
    if (!event.created.length && !event.updated.length) return;
    await enqueueEvent(em, "messaging", {
      topic: Topics.contacts,
      key: importId,
      schema: ContactsImportedSchema,
      message: event,
    });
    event = create(ContactsImportedSchema, { importId });
    bytes = 0;
  };
  for (const c of contacts) {
    const contact: Contact = create(ContactSchema, {
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
    });
    const size = toBinary(ContactSchema, contact).length + 8;
    if (bytes + size > MAX_EVENT_BYTES) await flush();
    (c.isNew ? event.created : event.updated).push(contact);
    bytes += size;
  }
  await flush();
}
