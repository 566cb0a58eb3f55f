import { fromTs, on, Topics, isUuid } from "@transferops/kit";
import { OperationConfirmedSchema } from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { recordTransfer } from "../store/contacts.ts";
import { contactChanged } from "./contacts.ts";

export const operationTopics = [Topics.operations];

/**
 * An operation confirmed with a contact_id naming a contact is recorded on it (count,
 * last transfer). contact_id is opaque to dispatch: one that names no contact is ignored.
 * The inbox makes a redelivered event change nothing.
 */
export const operationHandlers = [
  on(OperationConfirmedSchema, async (em, event, meta) => {
    const op = event.operation;
    const contactId = op?.contactId;
    if (!op || !contactId || !isUuid(contactId)) return;
    const at = fromTs(event.confirmedAt) ?? meta.occurredAt;
    if (await recordTransfer(em, contactId.toLowerCase(), op.operationId, at)) {
      await contactChanged(em, contactId.toLowerCase(), "transfer_recorded");
    }
  }),
];
