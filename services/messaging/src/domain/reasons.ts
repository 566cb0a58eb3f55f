// The closed set of messaging refusal reasons. Every DomainError of the service uses one
// of these, with the status of this table, so reason and status cannot drift apart.
// Within one request the checks run in the order of this table: a request breaking two
// rules always gets the same answer (validation, then lookups, then conflicts).

import { refusalsOf, type ReasonSpec } from "@transferops/kit/pure";

export const REASONS = {
  caller_not_allowed: { status: "forbidden", when: "The credential is not a messaging API key" },
  invalid_request: { status: "invalid", when: "A field is malformed (length, format, UUID, cursor)" },
  invalid_phone: { status: "invalid", when: "The phone is not an E.164 number nor a Cameroon national number" },
  invalid_email: { status: "invalid", when: "The e-mail address is malformed" },
  invalid_cursor: { status: "invalid", when: "The cursor was not produced by this list" },
  unknown_lifecycle: { status: "invalid", when: "The lifecycle stage is not one of the configured stages" },
  unknown_collaborator: { status: "invalid", when: "A collaborator id names no active fleet agent" },
  invalid_mapping: { status: "invalid", when: "A mapping has no column, an unknown target or transform" },
  invalid_file: { status: "invalid", when: "The import file is empty or not valid base64" },
  contact_not_found: { status: "not_found", when: "No contact has this customer_id (or it is deleted, for changes)" },
  tag_not_found: { status: "not_found", when: "No tag of the catalogue has this tag_id" },
  mapping_not_found: { status: "not_found", when: "No saved mapping has this mapping_id" },
  template_not_found: { status: "not_found", when: "No built-in template has this name" },
  import_not_found: { status: "not_found", when: "No import has this import_id" },
  contact_exists: {
    status: "conflict",
    when: "The phone or e-mail belongs to another live contact (context.customer_id names it)",
  },
  contact_deleted: { status: "conflict", when: "The contact is soft-deleted: restore it first" },
  contact_not_deleted: { status: "conflict", when: "Restore of a contact that is not deleted" },
  idempotency_key_reused: {
    status: "conflict",
    when: "The Idempotency-Key was used with another request body or route",
  },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

/** Every reason, in the table's order (the gateway and the board type theirs against it). */
export const REASON_CODES = Object.keys(REASONS) as Reason[];

/** The refusal of `reason`, with its status from the table. */
export const refusal = refusalsOf(REASONS);
