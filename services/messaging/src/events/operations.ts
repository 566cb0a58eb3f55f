import { fromTs, on, Topics, isUuid } from "@transferops/kit";
import {
  OperationConfirmedSchema,
  type OperationConfirmed,
} from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { recordTransfer } from "../store/contacts.ts";
import { contactChanged } from "./contacts.ts";

export const operationTopics = [Topics.operations];

/** A contact's id, when the operation carries one that could name a contact. */
function contactOf(event: OperationConfirmed): string | undefined {
  const contactId = event.operation?.contactId;
  return contactId && isUuid(contactId) ? contactId.toLowerCase() : undefined;
}

/**
 * An operation confirmed with a contact_id naming a contact is recorded on it (count,
 * last transfer). contact_id is opaque to dispatch: one that names no contact is ignored.
 * The inbox makes a redelivered event change nothing; an operation without a contact_id
 * (or with one that is not a contact's id) is skipped before it (`applies`): no transaction.
 */
export const operationHandlers = [
  on(
    OperationConfirmedSchema,
    async (em, event, meta) => {
      const contactId = contactOf(event);
      if (!event.operation || !contactId) return;
      const at = fromTs(event.confirmedAt) ?? meta.occurredAt;
      if (await recordTransfer(em, contactId, event.operation.operationId, at)) {
        await contactChanged(em, contactId, "transfer_recorded");
      }
    },
    (event) => contactOf(event) !== undefined,
  ),
];
