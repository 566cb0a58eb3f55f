// The closed set of evidence refusal reasons. Every DomainError this service raises uses
// one of these codes, and its status comes from this table only. Each route checks them
// in the order written beside it (docs/decisions/evidence.md), so a request breaking two
// rules always gets the same answer.

import { DomainError, refusalsOf, type ReasonSpec } from "@transferops/kit/pure";

export const REASONS = {
  // --- who is calling ------------------------------------------------------------------
  device_required: { status: "forbidden", when: "Submission with a credential other than a device token" },
  session_required: { status: "forbidden", when: "Board route with a credential other than a session" },
  agent_inactive: { status: "forbidden", when: "Board route with an inactive agent's session" },
  admin_required: { status: "forbidden", when: "Reset with a session other than an admin's" },
  supervisor_required: { status: "forbidden", when: "Reconciliation with an agent's session (supervisors, admins)" },
  // --- submission ----------------------------------------------------------------------
  sim_not_assigned_to_device: { status: "forbidden", when: "The SIM is unknown or not in the calling handset" },
  // --- lists ---------------------------------------------------------------------------
  unmatched_required: { status: "bad_request", when: "Unmatched list without unmatched=true" },
  invalid_request: { status: "invalid", when: "A request value is malformed (day, window, limit, reason, operator)" },
  sim_not_found: { status: "not_found", when: "Reconciliation of a SIM id fleet does not know" },
  // --- dismiss and attach ---------------------------------------------------------------
  evidence_not_found: { status: "not_found", when: "No message has this id" },
  sim_not_in_grant: { status: "forbidden", when: "The message's SIM is not in the agent's grant" },
  evidence_already_linked: { status: "conflict", when: "The message already names an operation" },
  operation_already_proven: { status: "conflict", when: "Another message already proved the operation" },
  // --- wording rules (parsers/wording-rules.ts: why a template is refused) ---------------
  wording_rule_not_found: { status: "not_found", when: "No wording rule version (or rule) has this id" },
  wording_rule_retired: { status: "conflict", when: "Activating a retired version (add a new version instead)" },
  wording_rule_needs_second_admin: {
    status: "forbidden",
    when: "Activating a DEP or BAL version drafted by the same admin: another admin activates it",
  },
  wording_rule_reads_money_received: {
    status: "refused",
    when: "A DEP or BAL rule would read a stored text read today as money received (context.texts)",
  },
  wording_rule_operator_mismatch: {
    status: "invalid",
    when: "A new version names another operator than the rule's earlier versions",
  },
  template_too_long: { status: "invalid", when: "The template is over 600 characters" },
  unknown_slot: {
    status: "invalid",
    when: "A slot other than {amount} {fee} {balance} {ref} {phone} {name} {date} {number} {any}",
  },
  repeated_slot: { status: "invalid", when: "A slot other than {any}, {date} or {number} appears twice" },
  no_literal_text: { status: "invalid", when: "No word of three letters outside the slots: it would read anything" },
  unknown_kind: { status: "invalid", when: "The kind is not one of the message kinds" },
  deposit_needs_amount_ref_and_phone: {
    status: "invalid",
    when: "A DEP wording without {amount}, {ref} and {phone} (the divergence check needs the number)",
  },
  balance_needs_balance: { status: "invalid", when: "A BAL wording without {balance}" },
  movement_needs_amount: { status: "invalid", when: "A money-moving kind without {amount}" },
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

/** Every reason, in the table's order (the gateway and the board type theirs against it). */
export const REASON_CODES = Object.keys(REASONS) as Reason[];

export const refusal = refusalsOf(REASONS);

/** A validation refusal naming the field, as the gateway's own validation errors do. */
export function invalid(field: string, message: string, value?: unknown): DomainError {
  return new DomainError("invalid", `${field}: ${message}`, {
    reason: "invalid_request",
    context: value === undefined ? { field } : { field, value },
    violations: [{ field, message }],
  });
}
