import { describe, expect, it } from "vitest";
import {
  classifyOutcomeReport,
  failureReasonFor,
  initialStatus,
  isTerminal,
  OPERATION_STATUSES,
  retryFlags,
  transition,
  type DeviceOutcome,
  type OperationStatus,
  type Trigger,
} from "./operation-state.ts";

const ID = "6f1c2a9e-0000-4000-8000-000000000001";

function next(status: OperationStatus, trigger: Trigger): OperationStatus | [string, string] {
  const result = transition({ operation_id: ID, status }, trigger);
  return result.ok ? result.value : [result.error.reason ?? "", result.error.message];
}

describe("transition: the contract's table, one row per rule", () => {
  it.each<[OperationStatus, Trigger, OperationStatus]>([
    ["queued", { type: "claim" }, "running"],
    ["running", { type: "outcome", outcome: "ussd_ok" }, "awaiting_evidence"],
    ["running", { type: "outcome", outcome: "ussd_unconfirmed" }, "awaiting_evidence"],
    ["running", { type: "outcome", outcome: "ussd_failed" }, "failed"],
    ["running", { type: "outcome", outcome: "sim_absent" }, "failed"],
    ["running", { type: "outcome", outcome: "name_mismatch" }, "failed"],
    ["running", { type: "outcome", outcome: "ussd_timeout" }, "no_evidence"],
    ["running", { type: "outcome", outcome: "no_service" }, "no_evidence"],
    ["queued", { type: "proof", within_late_window: false }, "confirmed"],
    ["running", { type: "proof", within_late_window: false }, "confirmed"],
    ["awaiting_evidence", { type: "proof", within_late_window: false }, "confirmed"],
    ["awaiting_manual_dial", { type: "proof", within_late_window: false }, "confirmed"],
    ["no_evidence", { type: "proof", within_late_window: true }, "confirmed"],
    // Confirmed on word, its text late: proven, still confirmed.
    ["confirmed", { type: "proof", within_late_window: true, has_evidence: false }, "confirmed"],
    ["awaiting_evidence", { type: "divergent_proof" }, "awaiting_evidence"],
    ["confirmed", { type: "divergent_proof" }, "confirmed"],
    ["queued", { type: "cancel" }, "rejected"],
    ["running", { type: "cancel" }, "rejected"],
    ["awaiting_manual_dial", { type: "cancel_matching" }, "rejected"],
    ["awaiting_manual_dial", { type: "edit_matching" }, "awaiting_manual_dial"],
    ["queued", { type: "attach", has_evidence: false }, "confirmed"],
    ["running", { type: "attach", has_evidence: false }, "confirmed"],
    ["awaiting_evidence", { type: "attach", has_evidence: false }, "confirmed"],
    ["awaiting_manual_dial", { type: "attach", has_evidence: false }, "confirmed"],
    ["no_evidence", { type: "attach", has_evidence: false }, "confirmed"],
    ["confirmed", { type: "attach", has_evidence: false }, "confirmed"],
    ["no_evidence", { type: "settle", outcome: "arrived" }, "confirmed"],
    ["no_evidence", { type: "settle", outcome: "did_not_arrive" }, "failed"],
    ["no_evidence", { type: "arbitrate", decision: "confirmed" }, "confirmed"],
    ["no_evidence", { type: "arbitrate", decision: "failed" }, "failed"],
    ["awaiting_evidence", { type: "sweep" }, "no_evidence"],
    ["running", { type: "running_timeout" }, "no_evidence"],
    ["queued", { type: "dispatch_fault" }, "failed"],
    ["queued", { type: "device_deleted" }, "failed"],
    ["running", { type: "device_deleted" }, "no_evidence"],
  ])("moves %s on %j to %s", (from, trigger, to) => {
    expect(next(from, trigger)).toEqual(to);
  });
});

describe("transition: refusals", () => {
  it.each<[string, OperationStatus, Trigger, string, string]>([
    [
      "refuses to cancel a confirmed operation",
      "confirmed",
      { type: "cancel" },
      "operation_not_cancellable",
      `Operation ${ID} is confirmed and cannot be cancelled`,
    ],
    [
      "refuses to cancel an operation awaiting evidence",
      "awaiting_evidence",
      { type: "cancel" },
      "operation_not_cancellable",
      `Operation ${ID} is awaiting_evidence and cannot be cancelled`,
    ],
    [
      "refuses to cancel a matching operation through the operation cancel",
      "awaiting_manual_dial",
      { type: "cancel" },
      "operation_not_cancellable",
      `Operation ${ID} is awaiting_manual_dial and cannot be cancelled`,
    ],
    [
      "refuses to cancel a matching operation that was matched",
      "confirmed",
      { type: "cancel_matching" },
      "operation_not_cancellable",
      `Operation ${ID} is confirmed and cannot be cancelled`,
    ],
    [
      "refuses to edit a matching operation that was matched",
      "confirmed",
      { type: "edit_matching" },
      "operation_not_editable",
      `Operation ${ID} is confirmed; only an operation awaiting manual dial can be edited`,
    ],
    [
      "refuses a second claim of a running operation",
      "running",
      { type: "claim" },
      "invalid_transition",
      `Operation ${ID} is running; claim does not apply`,
    ],
    [
      "refuses a device claim of a matching operation",
      "awaiting_manual_dial",
      { type: "claim" },
      "invalid_transition",
      `Operation ${ID} is awaiting_manual_dial; claim does not apply`,
    ],
    [
      "refuses a device outcome for a queued operation",
      "queued",
      { type: "outcome", outcome: "ussd_ok" },
      "operation_not_running",
      `Operation ${ID} is queued, not running`,
    ],
    [
      "refuses a late SMS once the late window has closed",
      "no_evidence",
      { type: "proof", within_late_window: false },
      "invalid_transition",
      `Operation ${ID} is no_evidence; proof does not apply`,
    ],
    [
      "refuses the text of an operation confirmed on word once the late window has closed",
      "confirmed",
      { type: "proof", within_late_window: false, has_evidence: false },
      "invalid_transition",
      `Operation ${ID} is confirmed; proof does not apply`,
    ],
    [
      "refuses a second confirmation by SMS",
      "confirmed",
      { type: "proof", within_late_window: true, has_evidence: true },
      "invalid_transition",
      `Operation ${ID} is confirmed; proof does not apply`,
    ],
    [
      "refuses a second confirmation by SMS (evidence unknown)",
      "confirmed",
      { type: "proof", within_late_window: true },
      "invalid_transition",
      `Operation ${ID} is confirmed; proof does not apply`,
    ],
    [
      "refuses to attach to an operation already proven by a message",
      "confirmed",
      { type: "attach", has_evidence: true },
      "operation_not_attachable",
      `Operation ${ID} is already confirmed by evidence`,
    ],
    [
      "refuses to attach to a failed operation",
      "failed",
      { type: "attach", has_evidence: false },
      "operation_not_attachable",
      `Operation ${ID} is failed; evidence cannot be attached`,
    ],
    [
      "refuses to attach to a rejected operation",
      "rejected",
      { type: "attach", has_evidence: false },
      "operation_not_attachable",
      `Operation ${ID} is rejected; evidence cannot be attached`,
    ],
    [
      "refuses to settle an operation not in no_evidence",
      "awaiting_evidence",
      { type: "settle", outcome: "arrived" },
      "operation_not_settleable",
      `Operation ${ID} is awaiting_evidence; only a no_evidence operation can be settled`,
    ],
    [
      "refuses to arbitrate an operation not in no_evidence",
      "confirmed",
      { type: "arbitrate", decision: "failed" },
      "operation_not_arbitrable",
      `Operation ${ID} is confirmed; only a no_evidence operation can be arbitrated`,
    ],
    [
      "refuses to sweep an operation no longer awaiting evidence",
      "confirmed",
      { type: "sweep" },
      "invalid_transition",
      `Operation ${ID} is confirmed; sweep does not apply`,
    ],
    [
      "refuses to time out an operation its handset already reported",
      "awaiting_evidence",
      { type: "running_timeout" },
      "invalid_transition",
      `Operation ${ID} is awaiting_evidence; running_timeout does not apply`,
    ],
    [
      "refuses a dispatch fault on an operation a handset already runs",
      "running",
      { type: "dispatch_fault" },
      "invalid_transition",
      `Operation ${ID} is running; dispatch_fault does not apply`,
    ],
    [
      "leaves an operation that finished dialling alone when its device is deleted",
      "awaiting_evidence",
      { type: "device_deleted" },
      "invalid_transition",
      `Operation ${ID} is awaiting_evidence; device_deleted does not apply`,
    ],
  ])("%s", (_rule, from, trigger, code, detail) => {
    expect(next(from, trigger)).toEqual([code, detail]);
  });

  it("puts operation_id and operation_status in the context of operation_not_cancellable (409)", () => {
    const result = transition({ operation_id: ID, status: "failed" }, { type: "cancel" });
    expect(result.ok ? null : [result.error.status, result.error.context]).toEqual([
      "conflict",
      { reason: "operation_not_cancellable", operation_id: ID, operation_status: "failed" },
    ]);
  });

  it("answers arbitration of the wrong status with 422, the route listing no 409", () => {
    const result = transition({ operation_id: ID, status: "running" }, { type: "arbitrate", decision: "confirmed" });
    expect(result.ok ? null : result.error.status).toBe("refused");
  });
});

describe("statuses", () => {
  it.each<[OperationStatus, boolean]>([
    ["queued", false],
    ["running", false],
    ["awaiting_evidence", false],
    ["awaiting_manual_dial", false],
    ["confirmed", true],
    ["failed", true],
    ["no_evidence", true],
    ["rejected", true],
  ])("%s is terminal: %s", (status, terminal) => {
    expect(isTerminal(status)).toBe(terminal);
  });

  it("knows the eight statuses", () => {
    expect(OPERATION_STATUSES).toHaveLength(8);
  });

  it.each([
    ["aggregated", "queued"],
    ["assisted", "queued"],
    ["matching", "awaiting_manual_dial"],
  ] as const)("creates an %s operation %s", (origin, status) => {
    expect(initialStatus(origin)).toBe(status);
  });
});

describe("classifyOutcomeReport", () => {
  it.each<[string, OperationStatus, DeviceOutcome | null, DeviceOutcome, string | [string, string]]>([
    ["applies a first report to a running operation", "running", null, "ussd_ok", "apply"],
    ["replays the same outcome reported again", "awaiting_evidence", "ussd_ok", "ussd_ok", "replay"],
    ["replays the same outcome after the SMS confirmed", "confirmed", "ussd_ok", "ussd_ok", "replay"],
    ["records a first report that arrives after the SMS confirmed", "confirmed", null, "ussd_ok", "record"],
    ["records a first report for an operation cancelled mid-dial", "rejected", null, "ussd_ok", "record"],
    ["records a first report that arrives after the running timeout", "no_evidence", null, "ussd_ok", "record"],
    [
      "refuses a different outcome from the recorded one",
      "failed",
      "ussd_failed",
      "ussd_ok",
      ["outcome_conflict", `Operation ${ID} already reported ussd_failed; cannot report ussd_ok`],
    ],
    [
      "refuses a report for an operation never claimed",
      "queued",
      null,
      "ussd_ok",
      ["operation_not_running", `Operation ${ID} is queued, not running`],
    ],
    [
      "refuses a report for a matching operation",
      "awaiting_manual_dial",
      null,
      "ussd_ok",
      ["operation_not_running", `Operation ${ID} is awaiting_manual_dial, not running`],
    ],
  ])("%s", (_rule, status, recorded, reported, expected) => {
    const result = classifyOutcomeReport({ operation_id: ID, status, outcome: recorded }, reported);
    expect(result.ok ? result.value : [result.error.reason, result.error.message]).toEqual(expected);
  });
});

describe("failureReasonFor", () => {
  it.each<[string, DeviceOutcome, string | null, string | null, string | null]>([
    ["keeps the device's failure_detail", "ussd_failed", "Solde insuffisant", "screen", "Solde insuffisant"],
    ["keeps failure_detail even for name_mismatch", "name_mismatch", "JEAN vs PAUL", "screen", "JEAN vs PAUL"],
    [
      "falls back to the screen text for name_mismatch",
      "name_mismatch",
      null,
      "Confirmez ... PAUL DURAND",
      "Confirmez ... PAUL DURAND",
    ],
    ["falls back to the outcome for name_mismatch without screen text", "name_mismatch", null, null, "name_mismatch"],
    ["falls back to the outcome for other failures", "ussd_failed", null, "Erreur", "ussd_failed"],
    ["falls back to the outcome for a timeout", "ussd_timeout", null, null, "ussd_timeout"],
    ["treats a blank detail as absent", "sim_absent", "  ", null, "sim_absent"],
    ["falls back to the outcome for ussd_ok", "ussd_ok", null, "Depot reussi", "ussd_ok"],
    ["falls back to the outcome for ussd_unconfirmed", "ussd_unconfirmed", null, null, "ussd_unconfirmed"],
    ["keeps a detail sent with ussd_unconfirmed", "ussd_unconfirmed", "no closing screen", null, "no closing screen"],
  ])("%s", (_rule, outcome, detail, response, expected) => {
    expect(failureReasonFor(outcome, detail, response)).toBe(expected);
  });
});

describe("retryFlags", () => {
  it.each<[OperationStatus, boolean, boolean, boolean | null]>([
    ["failed", false, true, false],
    ["rejected", false, true, false],
    ["no_evidence", false, true, true],
    ["confirmed", false, false, null],
    ["queued", false, false, null],
    ["running", false, false, null],
    ["awaiting_evidence", false, false, null],
    ["awaiting_manual_dial", false, false, null],
    ["failed", true, false, null],
    ["no_evidence", true, false, null],
  ])("%s with a retry already made: %s -> allowed %s, confirmation %s", (status, hasRetry, allowed, confirmation) => {
    expect(retryFlags(status, hasRetry)).toEqual({
      retry_allowed: allowed,
      retry_requires_confirmation: confirmation,
    });
  });

  it("refuses the retry of one an operator's text contradicts, or of a retry withdrawn because its parent went", () => {
    const none = { retry_allowed: false, retry_requires_confirmation: null };
    expect(retryFlags("failed", false, { contradicting_message_id: "m-1" })).toEqual(none);
    expect(retryFlags("rejected", false, { failure_reason: "parent_went_through" })).toEqual(none);
    expect(retryFlags("rejected", false, { failure_reason: "cancelled" }).retry_allowed).toBe(true);
  });
});

describe("transition: totality", () => {
  const triggers: Trigger[] = [
    { type: "claim" },
    ...(
      [
        "ussd_ok",
        "ussd_unconfirmed",
        "ussd_failed",
        "ussd_timeout",
        "no_service",
        "sim_absent",
        "name_mismatch",
      ] as const
    ).map((outcome): Trigger => ({ type: "outcome", outcome })),
    { type: "proof", within_late_window: true },
    { type: "proof", within_late_window: false },
    { type: "divergent_proof" },
    { type: "cancel" },
    { type: "cancel_matching" },
    { type: "edit_matching" },
    { type: "attach", has_evidence: true },
    { type: "attach", has_evidence: false },
    { type: "settle", outcome: "arrived" },
    { type: "settle", outcome: "did_not_arrive" },
    { type: "arbitrate", decision: "confirmed" },
    { type: "arbitrate", decision: "failed" },
    { type: "sweep" },
    { type: "running_timeout" },
    { type: "dispatch_fault" },
    { type: "device_deleted" },
  ];

  it("answers every status and trigger with a status or a refusal, never a throw", () => {
    for (const status of OPERATION_STATUSES) {
      for (const trigger of triggers) {
        const result = transition({ operation_id: ID, status }, trigger);
        if (result.ok) expect(OPERATION_STATUSES).toContain(result.value);
        else expect(["conflict", "refused"]).toContain(result.error.status);
      }
    }
  });

  it("never moves failed or rejected, except that a divergent SMS leaves them as they are", () => {
    for (const status of ["failed", "rejected"] as const) {
      const moves = triggers.filter((trigger) => {
        const result = transition({ operation_id: ID, status }, trigger);
        return result.ok && result.value !== status;
      });
      expect(moves).toEqual([]);
    }
  });
});
