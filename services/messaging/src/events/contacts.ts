import { create } from "@bufbuild/protobuf";
import { enqueueEvent, Topics, type EntityManager } from "@transferops/kit";
import { ContactChangedSchema } from "@transferops/kit/gen/transferops/messaging/v1/events_pb";
import { contactOf } from "../flows/mappers.ts";
import { findContact, type ContactRow } from "../store/contacts.ts";

export type ContactChange =
  | "created"
  | "updated"
  | "deleted"
  | "restored"
  | "blocked"
  | "unblocked"
  | "tagged"
  | "untagged"
  | "lifecycle"
  | "collaborators"
  | "transfer_recorded";

/**
 * Reads the contact as the transaction leaves it and writes its ContactChanged to the
 * outbox (topic `contacts`, keyed by customer_id): published if and only if it commits.
 */
export async function contactChanged(
  em: EntityManager,
  customerId: string,
  change: ContactChange,
): Promise<ContactRow> {
  const row = (await findContact(em, customerId))!;
  await enqueueEvent(em, "messaging", {
    topic: Topics.contacts,
    key: customerId,
    schema: ContactChangedSchema,
    message: create(ContactChangedSchema, { contact: contactOf(row), change }),
  });
  return row;
}
