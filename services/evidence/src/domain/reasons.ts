// The closed set of evidence refusal reasons. Every DomainError this service raises uses
// one of these codes, and its status comes from this table only. Each route checks them
// in the order written beside it (docs/decisions/evidence.md), so a request breaking two
// rules always gets the same answer.

import { DomainError, refusalsOf, type ReasonSpec } from "@transferops/kit";

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
} as const satisfies Record<string, ReasonSpec>;

export type Reason = keyof typeof REASONS;

export const refusal = refusalsOf(REASONS);

/** A validation refusal naming the field, as the gateway's own validation errors do. */
export function invalid(field: string, message: string, value?: unknown): DomainError {
  return new DomainError("invalid", `${field}: ${message}`, {
    reason: "invalid_request",
    context: value === undefined ? { field } : { field, value },
    violations: [{ field, message }],
  });
}
