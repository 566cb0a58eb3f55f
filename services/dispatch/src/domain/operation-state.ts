// The operation state machine. The diagram is in operation-state.md beside this
// file; change both together.
//
// `transition` answers one question: from this status, what does this trigger
// lead to? Conditions the contract puts on a row (the late evidence window, whether
// an operation already carries evidence) travel in the trigger, so the whole table
// is decided here; the caller gathers the facts and applies the answer.

import {
  ACTIVE_OPERATION_STATUSES,
  OPERATION_STATUSES,
  TERMINAL_OPERATION_STATUSES,
  type OperationStatus,
} from "@transferops/kit/pure";
import { fail, ok, type Result } from "./errors.ts";
import { refusal } from "./reasons.ts";
import type { Origin } from "./vocabulary.ts";

// The statuses are the platform's (the kit's vocabulary): intake, evidence and the board read them.
export { OPERATION_STATUSES, type OperationStatus };

/** Terminal as the routes name them. `no_evidence` is terminal yet can still be confirmed (late SMS, attach, settle, arbitrate). */
export const TERMINAL_STATUSES: readonly OperationStatus[] = TERMINAL_OPERATION_STATUSES;

/** Statuses an SMS may confirm at any time (correlation candidates, besides no_evidence in its late window). */
export const ACTIVE_STATUSES: readonly OperationStatus[] = ACTIVE_OPERATION_STATUSES;

export const CANCELLABLE_STATUSES: readonly OperationStatus[] = ["queued", "running"];

export const DEVICE_OUTCOMES = [
  "ussd_ok",
  "ussd_unconfirmed",
  "ussd_failed",
  "ussd_timeout",
  "no_service",
  "sim_absent",
  "name_mismatch",
] as const;
export type DeviceOutcome = (typeof DEVICE_OUTCOMES)[number];

/** Where each device outcome leads a running operation. */
const OUTCOME_STATUS: Readonly<Record<DeviceOutcome, OperationStatus>> = {
  ussd_ok: "awaiting_evidence", // dialled; the SMS decides within the evidence window
  ussd_unconfirmed: "awaiting_evidence", // PIN sent, no closing screen: the SMS decides
  ussd_failed: "failed",
  sim_absent: "failed", // the caller also raises an alert
  name_mismatch: "failed", // PIN never sent, no funds moved
  ussd_timeout: "no_evidence", // may or may not have gone through: a person settles it
  no_service: "no_evidence",
};

export type Trigger =
  /** The device poll hands the operation to its device. */
  | { readonly type: "claim" }
  | { readonly type: "outcome"; readonly outcome: DeviceOutcome }
  /** A coherent SMS match. `within_late_window` matters only from no_evidence. */
  | {
      readonly type: "proof";
      readonly within_late_window: boolean;
      /** Whether the operation already has its proof: false for one confirmed on word. */
      readonly has_evidence?: boolean;
    }
  /** An SMS whose amount or MSISDN diverges: the caller alerts, the status never moves. */
  | { readonly type: "divergent_proof" }
  | { readonly type: "cancel" }
  | { readonly type: "cancel_matching" }
  | { readonly type: "edit_matching" }
  /** A person attaches an orphan message. `has_evidence`: the operation already carries a matched message. */
  | { readonly type: "attach"; readonly has_evidence: boolean }
  | { readonly type: "settle"; readonly outcome: "arrived" | "did_not_arrive" }
  | { readonly type: "arbitrate"; readonly decision: "confirmed" | "failed" }
  /** The evidence-window sweep found the window closed. */
  | { readonly type: "sweep" }
  /**
   * The sweep found an operation still running long after its handset's USSD timeout: the
   * handset died or lost it. It may have been dialled, so it goes to no_evidence, where a
   * late SMS or a person decides it, and the handset is free to take new work.
   */
  | { readonly type: "running_timeout" }
  /**
   * The poll found the operation but could not build its USSD steps (no template, a
   * value that cannot be typed, a SIM gone): it never reached the operator, so it fails
   * instead of answering 500 to every later poll of its handset.
   */
  | { readonly type: "dispatch_fault" }
  /**
   * Fleet deleted the handset holding the operation. Queued work can never be claimed:
   * it fails (nothing was dialled). A running operation may have been dialled: it goes
   * to no_evidence, where a late SMS or a person still decides it.
   */
  | { readonly type: "device_deleted" };

export interface OperationRef {
  readonly operation_id: string;
  readonly status: OperationStatus;
}

export function isTerminal(status: OperationStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

export function isActive(status: OperationStatus): boolean {
  return ACTIVE_STATUSES.includes(status);
}

/** A matching operation is dialled by hand: never queued, no handset can claim it. */
export function initialStatus(origin: Origin): OperationStatus {
  return origin === "matching" ? "awaiting_manual_dial" : "queued";
}

export function transition(operation: OperationRef, trigger: Trigger): Result<OperationStatus> {
  const { status } = operation;
  switch (trigger.type) {
    case "claim":
      return status === "queued" ? ok("running") : invalid(operation, trigger);
    case "outcome":
      return status === "running" ? ok(OUTCOME_STATUS[trigger.outcome]) : notRunning(operation);
    case "proof":
      return proof(operation, trigger.within_late_window, trigger.has_evidence);
    case "divergent_proof":
      return ok(status);
    case "cancel":
      return CANCELLABLE_STATUSES.includes(status) ? ok("rejected") : notCancellable(operation);
    case "cancel_matching":
      return status === "awaiting_manual_dial" ? ok("rejected") : notCancellable(operation);
    case "edit_matching":
      return status === "awaiting_manual_dial" ? ok(status) : notEditable(operation);
    case "attach":
      return attach(operation, trigger.has_evidence);
    case "settle":
      return status === "no_evidence"
        ? ok(trigger.outcome === "arrived" ? "confirmed" : "failed")
        : notDecidable(operation, "operation_not_settleable", "settled");
    case "arbitrate":
      return status === "no_evidence"
        ? ok(trigger.decision)
        : notDecidable(operation, "operation_not_arbitrable", "arbitrated");
    case "sweep":
      // The contract leaves the swept status open; no_evidence puts the transfer in
      // front of a person (arbitration queue) while a late SMS can still confirm it.
      return status === "awaiting_evidence" ? ok("no_evidence") : invalid(operation, trigger);
    case "running_timeout":
      return status === "running" ? ok("no_evidence") : invalid(operation, trigger);
    case "dispatch_fault":
      return status === "queued" ? ok("failed") : invalid(operation, trigger);
    case "device_deleted":
      if (status === "queued") return ok("failed");
      return status === "running" ? ok("no_evidence") : invalid(operation, trigger);
  }
}

/**
 * A proof confirms an active operation, a `no_evidence` one within the late window, and proves
 * one a person confirmed on word (settled `arrived`, arbitrated `confirmed`) within the same
 * window: it stays confirmed, with its proof now (no second confirmed event).
 */
function proof(operation: OperationRef, withinLateWindow: boolean, hasEvidence?: boolean): Result<OperationStatus> {
  if (isActive(operation.status)) return ok("confirmed");
  if (operation.status === "no_evidence" && withinLateWindow) return ok("confirmed");
  if (operation.status === "confirmed" && hasEvidence === false && withinLateWindow) return ok("confirmed");
  return invalid(operation, { type: "proof", within_late_window: withinLateWindow });
}

/**
 * Attaching is a person's decision, so it is not bound by the late window: it
 * confirms any active or no_evidence operation. A confirmed operation without a
 * message (settled on word) may still receive its proof: the status stays
 * confirmed, and the caller, seeing no change, emits no second confirmed event.
 */
function attach(operation: OperationRef, hasEvidence: boolean): Result<OperationStatus> {
  const { operation_id, status } = operation;
  if (isActive(status) || status === "no_evidence") return ok("confirmed");
  if (status === "confirmed" && !hasEvidence) return ok("confirmed");
  const detail =
    status === "confirmed"
      ? `Operation ${operation_id} is already confirmed by evidence`
      : `Operation ${operation_id} is ${status}; evidence cannot be attached`;
  return fail(refusal("operation_not_attachable", detail, context(operation)));
}

function context(operation: OperationRef): Record<string, unknown> {
  return { operation_id: operation.operation_id, operation_status: operation.status };
}

function notCancellable(operation: OperationRef): Result<never> {
  return fail(
    refusal(
      "operation_not_cancellable",
      `Operation ${operation.operation_id} is ${operation.status} and cannot be cancelled`,
      context(operation),
    ),
  );
}

function notEditable(operation: OperationRef): Result<never> {
  return fail(
    refusal(
      "operation_not_editable",
      `Operation ${operation.operation_id} is ${operation.status}; only an operation awaiting manual dial can be edited`,
      context(operation),
    ),
  );
}

function notDecidable(
  operation: OperationRef,
  code: "operation_not_settleable" | "operation_not_arbitrable",
  verb: string,
): Result<never> {
  return fail(
    refusal(
      code,
      `Operation ${operation.operation_id} is ${operation.status}; only a no_evidence operation can be ${verb}`,
      context(operation),
    ),
  );
}

function notRunning(operation: OperationRef): Result<never> {
  return fail(
    refusal(
      "operation_not_running",
      `Operation ${operation.operation_id} is ${operation.status}, not running`,
      context(operation),
    ),
  );
}

function invalid(operation: OperationRef, trigger: Trigger): Result<never> {
  return fail(
    refusal(
      "invalid_transition",
      `Operation ${operation.operation_id} is ${operation.status}; ${trigger.type} does not apply`,
      { ...context(operation), trigger: trigger.type },
    ),
  );
}

// ---------------------------------------------------------------------------
// Outcome report: idempotency

/**
 * What to do with a device's outcome report.
 * - `apply`: the operation is running; run the transition.
 * - `replay`: the same outcome was already recorded; answer 200 with the current status.
 * - `record`: the operation left running without the device (an SMS confirmed it
 *   first, an agent cancelled it mid-dial, or the running timeout moved it to
 *   no_evidence because the handset never reported); store the outcome and the
 *   operator's text for the people who will look at it, keep the status, answer 200.
 * A different outcome from the recorded one is a conflict (409).
 */
export type OutcomeReportDecision = "apply" | "replay" | "record";

export interface OutcomeReportTarget extends OperationRef {
  /** The outcome recorded by an earlier report, null when none was. */
  readonly outcome: DeviceOutcome | null;
}

/** Where an operation a handset claimed ends up without that handset's report. */
const LEFT_RUNNING_WITHOUT_DEVICE: readonly OperationStatus[] = ["confirmed", "rejected", "no_evidence"];

export function classifyOutcomeReport(
  operation: OutcomeReportTarget,
  reported: DeviceOutcome,
): Result<OutcomeReportDecision> {
  if (operation.outcome !== null) {
    if (operation.outcome === reported) return ok("replay");
    return fail(
      refusal(
        "outcome_conflict",
        `Operation ${operation.operation_id} already reported ${operation.outcome}; cannot report ${reported}`,
        { ...context(operation), recorded_outcome: operation.outcome, reported_outcome: reported },
      ),
    );
  }
  if (operation.status === "running") return ok("apply");
  // A late report after the running timeout was refused and its ussd_response lost.
  if (LEFT_RUNNING_WITHOUT_DEVICE.includes(operation.status)) return ok("record");
  return notRunning(operation);
}

/**
 * `failure_reason` for a device outcome: the device's `failure_detail` when it
 * sent one; otherwise, for name_mismatch, the operator's screen text (it shows the
 * name that did not match); otherwise the outcome value, for every outcome (the
 * contract's fallback: `ussd_ok` and `ussd_unconfirmed` too, so the record says what
 * the handset reported). Blank strings count as absent.
 */
export function failureReasonFor(
  outcome: DeviceOutcome,
  failureDetail: string | null | undefined,
  ussdResponse: string | null | undefined,
): string {
  if (present(failureDetail)) return failureDetail;
  if (outcome === "name_mismatch" && present(ussdResponse)) return ussdResponse;
  return outcome;
}

function present(text: string | null | undefined): text is string {
  return text != null && text.trim() !== "";
}

// ---------------------------------------------------------------------------
// Retry flags

/**
 * A handset that reports `ussd_ok` or `ussd_unconfirmed` for an operation cancelled while it
 * was dialling says the PIN went: the transfer may have gone through. Such an operation is
 * treated as dialled: its debit is held (store/operations.ts, `HELD_DEBITS`), a proof of it is
 * contradicting evidence (flows/proof.ts), and an alert names it (rpc/handset.ts).
 */
export function dialledAfterCancel(outcome: DeviceOutcome | null | undefined): boolean {
  return outcome === "ussd_ok" || outcome === "ussd_unconfirmed";
}

export interface RetryFlags {
  readonly retry_allowed: boolean;
  /** null where the contract says "not applicable": no retry is allowed. */
  readonly retry_requires_confirmation: boolean | null;
}

/** What besides its status decides an operation's retry. */
export interface RetryFacts {
  /** An operator's proof that arrived after it failed or was rejected: its money went. */
  readonly contradicting_message_id?: string | null;
  /** The handset's outcome, reported after a cancel too (`ussd_ok` then means it was dialled). */
  readonly device_outcome?: DeviceOutcome | null;
  /** `parent_went_through`: a retry withdrawn because its parent went after all. */
  readonly failure_reason?: string | null;
}

/**
 * failed and rejected moved no money: retry freely. no_evidence may have moved
 * money: a retry needs the caller's confirmation, as does a rejected operation whose
 * handset then reported it dialled (`ussd_ok`, `ussd_unconfirmed`: cancelled mid-dial).
 * An operation an operator's proof contradicts moved money: no retry; nor a retry withdrawn
 * because its parent went after all (`parent_went_through`): retrying it pays again. Everything else
 * is still in flight or done; awaiting_manual_dial included, since its agent has not
 * dialled yet (cancel it instead). Only one retry per operation: once one exists, none
 * is allowed.
 */
export function retryFlags(status: OperationStatus, hasRetry: boolean, facts: RetryFacts = {}): RetryFlags {
  const notAllowed: RetryFlags = { retry_allowed: false, retry_requires_confirmation: null };
  if (hasRetry || facts.contradicting_message_id || facts.failure_reason === "parent_went_through") return notAllowed;
  switch (status) {
    case "failed":
      return { retry_allowed: true, retry_requires_confirmation: false };
    case "rejected":
      return { retry_allowed: true, retry_requires_confirmation: dialledAfterCancel(facts.device_outcome) };
    case "no_evidence":
      return { retry_allowed: true, retry_requires_confirmation: true };
    default:
      return notAllowed;
  }
}
