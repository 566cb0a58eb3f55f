// The closed set of dispatch refusal reasons. Every DomainError raised in this
// folder uses one of these codes, and its status comes from this table only, so
// the code-to-status mapping cannot drift between modules.
//
// The order of the table is the order of precedence in which the create-operation
// gates run (house style: a request breaking two rules always gets the same
// answer). `CREATE_OPERATION_PRECEDENCE` spells that order out for the caller.

import { refusalsOf, type ReasonSpec } from "@transferops/kit/pure";
import type { DomainError, DomainStatus } from "./errors.ts";

export const REASONS = {
  // --- create operation, in precedence order -------------------------------
  // `invalid` is a malformed value alone (422 invalid_request with the list of problems);
  // a well-formed request a business rule refuses is `refused` (422 refused, a text).
  // Before the replay answer: a reserved request_id is refused even when it exists.
  request_id_reserved: {
    status: "forbidden",
    when: "request_id starts with `tx-`, reserved to the operations of transaction launches (intake alone)",
  },
  circuit_breaker: { status: "locked", when: "The circuit breaker is active; nothing is queued" },
  invalid_request: { status: "invalid", when: "A request value is malformed (amount, date, day count)" },
  origin_matching_refused: { status: "refused", when: "origin `matching` on the create route" },
  merchant_code_required: {
    status: "refused",
    when: "operator_b withdrawal, float_deposit or mini_statement without merchant_code",
  },
  invalid_msisdn: { status: "refused", when: "Destination is not a 9-digit local number" },
  operator_undetermined: { status: "refused", when: "Destination prefix belongs to no operator" },
  operator_mismatch: { status: "refused", when: "Destination prefix contradicts the declared operator" },
  agent_unknown: { status: "refused", when: "The API key names no agent, or an agent that does not exist" },
  agent_inactive: { status: "forbidden", when: "The owning agent is inactive" },
  parent_not_found: {
    status: "not_found",
    when: "parent_operation_id names no operation, or one of another agent (to an agent: nothing of it is said)",
  },
  retry_contradicted: {
    status: "conflict",
    when: "parent_operation_id names a failed or rejected operation an operator's proof then showed went through (context.contradicting_message_id): a retry would pay twice",
  },
  // 422, not 409: on create, 409 means only "request_id exists" (the contract's replay answer).
  retry_not_allowed: {
    status: "refused",
    when: "parent_operation_id names an operation whose retry is not allowed (in flight, confirmed, or already retried)",
  },
  no_grant: { status: "forbidden", when: "Agent has no access grant, or a grant with no SIM" },
  not_in_grant_type: { status: "forbidden", when: "Operation type not in allowed_op_types" },
  over_max_amount: { status: "forbidden", when: "Amount above the grant's max_amount" },
  not_in_grant_sim: { status: "forbidden", when: "SIM not in allowed_sim_ids, or no granted SIM of the operator" },
  sim_not_found: { status: "refused", when: "Named SIM does not exist" },
  sim_operator_mismatch: { status: "refused", when: "Named SIM belongs to the other operator" },
  sim_frozen: { status: "refused", when: "Named SIM is frozen" },
  sim_retired: { status: "refused", when: "Named SIM is retired" },
  sim_not_assigned: { status: "refused", when: "Named SIM is in no handset" },
  // 422, not 423: on create, 423 is the breaker alone (the launch route of transactions keeps its own 423).
  device_frozen: { status: "refused", when: "Named SIM's handset is not active (frozen by the breaker)" },
  no_active_sim: { status: "refused", when: "No active SIM on an active device for the operator" },
  no_assigned_sim: { status: "refused", when: "Active SIMs of the operator exist but none is in a handset" },
  no_measured_balance: { status: "refused", when: "No eligible SIM of the operator has a measured balance" },
  sim_unmeasured: { status: "refused", when: "Named SIM has no measured balance" },
  stale_balance: { status: "refused", when: "Balance reading older than the staleness window (24 h)" },
  insufficient_balance: { status: "refused", when: "Measured balance below the amount of a debiting operation" },

  // --- scope and lookups ----------------------------------------------------------
  operation_not_found: {
    status: "not_found",
    when: "No operation has this id (or, for a device, none of its own has)",
  },
  caller_not_allowed: { status: "forbidden", when: "The credential kind or role may not use this action" },
  request_id_taken: {
    status: "conflict",
    when: "A create replays a request_id whose operation is outside the caller's scope (nothing of it is shown)",
  },
  request_id_reused: {
    status: "conflict",
    when: "A create replays a request_id with another agent_id, operator, type_op, montant, client.msisdn or named sim_id (context.differs names them; nothing of the first operation is shown)",
  },
  not_in_scope: {
    status: "forbidden",
    when: "The operation is outside the caller's scope (another agent's, another SIM's)",
  },

  // --- operation lifecycle ----------------------------------------------------
  operation_not_cancellable: { status: "conflict", when: "Cancel of an operation not in a cancellable status" },
  operation_not_editable: { status: "conflict", when: "Edit of a matching operation that left awaiting_manual_dial" },
  operation_not_settleable: { status: "conflict", when: "Board settle of an operation not in no_evidence" },
  operation_not_arbitrable: { status: "refused", when: "Admin arbitration of an operation not in no_evidence" },
  retry_chain_may_have_paid: {
    status: "conflict",
    when: "Settle `arrived` of an operation whose retry or parent was proven, or dialled and not ended: a person's word would record a second payment of one transfer (context.other_operation_id); the operator's text of a second payment is attached instead",
  },
  arbitration_retry_chain_may_have_paid: {
    status: "refused",
    when: "Arbitration `confirmed` of an operation whose retry or parent was proven, or dialled and not ended (context.other_operation_id), as for settle",
  },
  operation_not_attachable: {
    status: "conflict",
    when: "Attach to a failed or rejected operation, or one already proven by evidence",
  },
  operation_not_running: {
    status: "conflict",
    when: "Device outcome for an operation that is not running and never got one",
  },
  outcome_conflict: { status: "conflict", when: "Device outcome differs from the outcome already recorded" },
  invalid_transition: { status: "conflict", when: "Any other trigger not allowed from the current status" },
  device_busy: { status: "conflict", when: "Device poll while the device already has a running operation" },
  evidence_sim_mismatch: {
    status: "refused",
    when: "Attach of a message that arrived on another SIM than the operation's",
  },
  // Attach is proof (attach-proof.ts): the message must be one that could have proved the operation by itself.
  evidence_unknown_sender: {
    status: "refused",
    when: "Attach of a message not sent by the operator's sender (anyone can text a SIM the operator's wording)",
  },
  evidence_kind_cannot_prove: {
    status: "refused",
    when: "Attach of a message whose kind cannot prove the operation (a deposit proves a transfer, a balance reply a balance check; a refusal, movement, notice or unrecognised text nothing)",
  },
  evidence_amount_mismatch: {
    status: "refused",
    when: "Attach of a deposit whose amount is not exactly the operation's",
  },
  evidence_number_mismatch: {
    status: "refused",
    when: "Attach of a message naming a number that contradicts the operation's destination",
  },
  operation_never_dialled: {
    status: "refused",
    when: "Attach to an operation no handset ever dialled (queued): no operator message can prove it",
  },
  evidence_already_used: { status: "conflict", when: "Attach of a message that already proves another operation" },

  // --- faults ---------------------------------------------------------------------
  ussd_steps_unavailable: { status: "internal", when: "No USSD template, or a placeholder cannot be filled" },
} as const satisfies Record<string, ReasonSpec & { status: DomainStatus }>;

export type Reason = keyof typeof REASONS;

export const REASON_CODES = Object.keys(REASONS) as Reason[];

/**
 * Builds the DomainError for a reason; the status is looked up, never chosen by the caller. A
 * validation problem travels as the contract's list of problems (`detail` becomes
 * `[{field, message}]` at the gateway, code invalid_request); every other refusal keeps its text.
 */
export const refusal = refusalsOf(REASONS, ["invalid_request"]);

/** The gates of create operation, in the order they run. The first failing gate answers. */
export const CREATE_OPERATION_PRECEDENCE: readonly Reason[] = REASON_CODES.slice(
  0,
  REASON_CODES.indexOf("insufficient_balance") + 1,
);

/** The contract fixes this body exactly: 423 with detail `circuit_breaker`. */
export function checkCircuitBreaker(active: boolean): DomainError | null {
  return active ? refusal("circuit_breaker", "circuit_breaker") : null;
}
