import { describe, expect, it } from "vitest";
import { Code } from "@connectrpc/connect";
import { DomainError as KitDomainError, errorBodyFromConnect, toConnectError } from "@transferops/kit";
import { DomainError, fail, ok, unwrap } from "./errors.ts";
import { checkCircuitBreaker, CREATE_OPERATION_PRECEDENCE, REASON_CODES, REASONS, refusal } from "./reasons.ts";

describe("DomainError", () => {
  it("carries the status's default code, the reason in context, and the detail text as message", () => {
    const error = new DomainError("refused", "SIM s1 is frozen", { reason: "sim_frozen", context: { sim_id: "s1" } });
    expect(error).toBeInstanceOf(Error);
    expect(error.name).toBe("DomainError");
    expect([error.code, error.status, error.message, error.detail]).toEqual([
      "refused",
      "refused",
      "SIM s1 is frozen",
      "SIM s1 is frozen",
    ]);
    expect(error.context).toEqual({ reason: "sim_frozen", sim_id: "s1" });
  });

  it("keeps a code the contract names as the code", () => {
    const error = new DomainError("conflict", "Already confirmed", { reason: "operation_not_cancellable" });
    expect([error.code, error.context.reason]).toEqual(["operation_not_cancellable", "operation_not_cancellable"]);
  });

  it("defaults the context to an empty object without a reason", () => {
    expect(new DomainError("internal", "m").context).toEqual({});
  });
});

describe("Result", () => {
  it("unwraps a success to its value", () => {
    expect(unwrap(ok(42))).toBe(42);
  });

  it("throws the very refusal a failure carries when unwrapped", () => {
    const error = refusal("no_grant", "nope");
    expect(() => unwrap(fail(error))).toThrow(error);
  });
});

describe("reasons", () => {
  it.each([
    ["request_id_reserved", "forbidden"],
    ["circuit_breaker", "locked"],
    ["invalid_request", "invalid"],
    ["origin_matching_refused", "refused"],
    ["merchant_code_required", "refused"],
    ["invalid_msisdn", "refused"],
    ["operator_undetermined", "refused"],
    ["operator_mismatch", "refused"],
    ["agent_unknown", "refused"],
    ["agent_inactive", "forbidden"],
    ["parent_not_found", "not_found"],
    ["retry_contradicted", "conflict"],
    ["retry_not_allowed", "refused"],
    ["no_grant", "forbidden"],
    ["not_in_grant_type", "forbidden"],
    ["over_max_amount", "forbidden"],
    ["not_in_grant_sim", "forbidden"],
    ["sim_not_found", "refused"],
    ["sim_operator_mismatch", "refused"],
    ["sim_frozen", "refused"],
    ["sim_retired", "refused"],
    ["sim_not_assigned", "refused"],
    ["device_frozen", "refused"],
    ["no_active_sim", "refused"],
    ["no_assigned_sim", "refused"],
    ["no_measured_balance", "refused"],
    ["sim_unmeasured", "refused"],
    ["stale_balance", "refused"],
    ["insufficient_balance", "refused"],
    ["operation_not_found", "not_found"],
    ["caller_not_allowed", "forbidden"],
    ["request_id_taken", "conflict"],
    ["request_id_reused", "conflict"],
    ["not_in_scope", "forbidden"],
    ["operation_not_cancellable", "conflict"],
    ["operation_not_editable", "conflict"],
    ["operation_not_settleable", "conflict"],
    ["operation_not_arbitrable", "refused"],
    ["operation_not_attachable", "conflict"],
    ["operation_not_running", "conflict"],
    ["outcome_conflict", "conflict"],
    ["invalid_transition", "conflict"],
    ["device_busy", "conflict"],
    ["evidence_sim_mismatch", "refused"],
    ["evidence_unknown_sender", "refused"],
    ["evidence_kind_cannot_prove", "refused"],
    ["evidence_amount_mismatch", "refused"],
    ["evidence_number_mismatch", "refused"],
    ["operation_never_dialled", "refused"],
    ["evidence_already_used", "conflict"],
    ["ussd_steps_unavailable", "internal"],
  ] as const)("maps %s to status %s", (code, status) => {
    expect(REASONS[code].status).toBe(status);
    expect(refusal(code, "detail").status).toBe(status);
  });

  it("is a closed set of stable snake_case codes", () => {
    expect(REASON_CODES).toHaveLength(Object.keys(REASONS).length);
    expect(REASON_CODES).toHaveLength(53);
    for (const code of REASON_CODES) expect(code).toMatch(/^[a-z]+(_[a-z]+)*$/);
  });

  it("lists the create-operation gates from the reserved request_id and the circuit breaker to the balance", () => {
    expect(CREATE_OPERATION_PRECEDENCE.slice(0, 2)).toEqual(["request_id_reserved", "circuit_breaker"]);
    expect(CREATE_OPERATION_PRECEDENCE.at(-1)).toBe("insufficient_balance");
    expect(CREATE_OPERATION_PRECEDENCE).not.toContain("operation_not_cancellable");
  });
});

describe("one error type", () => {
  it("is the kit's DomainError, which the server interceptor maps to a Connect error with its detail", () => {
    const error = refusal("operation_not_cancellable", "Operation o1 is confirmed and cannot be cancelled", {
      operation_id: "o1",
      operation_status: "confirmed",
    });
    expect(error).toBeInstanceOf(KitDomainError);
    const connect = toConnectError(error);
    expect(connect.code).toBe(Code.AlreadyExists);
    expect(errorBodyFromConnect(connect)).toEqual({
      status: 409,
      body: {
        detail: "Operation o1 is confirmed and cannot be cancelled",
        code: "operation_not_cancellable",
        context: { reason: "operation_not_cancellable", operation_id: "o1", operation_status: "confirmed" },
      },
    });
  });

  it("travels the circuit breaker as 423 with detail circuit_breaker", () => {
    const { status, body } = errorBodyFromConnect(toConnectError(checkCircuitBreaker(true)!));
    expect([status, body.detail, body.code, body.context.reason]).toEqual([
      423,
      "circuit_breaker",
      "locked",
      "circuit_breaker",
    ]);
  });
});

describe("circuit breaker", () => {
  it("refuses with 423 and the exact detail circuit_breaker while active", () => {
    const error = checkCircuitBreaker(true);
    expect(error).toMatchObject({
      code: "locked",
      reason: "circuit_breaker",
      status: "locked",
      message: "circuit_breaker",
    });
  });

  it("lets the request through while inactive", () => {
    expect(checkCircuitBreaker(false)).toBeNull();
  });
});
