// The closed set of intake refusal reasons. Every DomainError raised by intake uses one
// of these, and its status comes from this table only. The order is the order of
// precedence in which a request's checks run: a request breaking two rules always gets
// the same answer (caller, then input, then existence and scope, then state, then
// payment).

import { refusalsOf, type ReasonSpec } from "@transferops/kit/pure";

export const REASONS = {
  caller_not_allowed: { status: "forbidden", when: "The credential kind may not use this route" },
  agent_inactive: { status: "forbidden", when: "The signed-in agent is inactive or deleted" },
  invalid_request: { status: "invalid", when: "A value is missing, malformed, too long or out of range" },
  no_receiver_field: { status: "refused", when: "Correct receiver with none of its fields" },
  invalid_msisdn: { status: "refused", when: "receiver_phone is not a 9-digit national number" },
  operator_undetermined: { status: "refused", when: "receiver_phone's prefix belongs to no mobile-money operator" },
  operator_mismatch: { status: "refused", when: "receiver_phone belongs to the other operator" },
  request_id_exists: { status: "conflict", when: "Create with a request_id already taken: refused, never requeued" },
  transaction_not_found: {
    status: "not_found",
    when: "No transaction has this id, or it is outside the caller's scope",
  },
  transaction_not_pending: { status: "conflict", when: "The action needs a pending transaction" },
  already_launched: { status: "conflict", when: "Launch of a transaction another launch already claimed" },
  payment_not_confirmed: { status: "refused", when: "Launch before an agent confirmed the payment" },
  device_frozen: {
    status: "locked",
    when: "Launch whose only usable SIMs sit in frozen handsets (dispatch's no_active_sim naming frozen devices)",
  },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

/** Every reason, in the table's order (the gateway and the board type theirs against it). */
export const REASON_CODES = Object.keys(REASONS) as Reason[];

/** Builds the DomainError of a reason; the status is looked up, never chosen by the caller. */
export const refusal = refusalsOf(REASONS, ["invalid_request"]);
