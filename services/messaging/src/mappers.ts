import { create } from "@bufbuild/protobuf";
import { ts } from "@transferops/kit";
import { ContactSchema, type Contact } from "@transferops/kit/gen/transferops/messaging/v1/messaging_pb";
import type { ContactRow } from "./store/contacts.ts";

const opt = <T>(v: T | null): T | undefined => (v === null ? undefined : v);

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
