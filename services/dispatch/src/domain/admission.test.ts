import { describe, expect, it } from "vitest";
import { admitMatchingOperation, admitOperation, type AdmissionFacts, type OperationRequest } from "./admission.ts";
import type { Result } from "./errors.ts";
import type { AccessGrant } from "./grant.ts";
import type { SimCandidate } from "./selection.ts";

const NOW = new Date("2026-11-22T12:00:00Z");

function sim(sim_id: string, overrides: Partial<SimCandidate> = {}): SimCandidate {
  return {
    sim_id,
    operator: sim_id.startsWith("a") ? "operator_a" : "operator_b",
    status: "active",
    device_id: `dev-${sim_id}`,
    device_status: "active",
    balance_mirror: 100_000,
    balance_updated_at: new Date(NOW.getTime() - 60_000),
    in_flight: 0,
    last_finished_at: null,
    ...overrides,
  };
}

const GRANT: AccessGrant = {
  allowed_sim_ids: ["b1", "a1"],
  allowed_op_types: ["deposit", "balance"],
  max_amount: 50_000,
};
const AGENT = { role: "agent", grant: GRANT } as const;

const request = (overrides: Partial<OperationRequest> = {}): OperationRequest => ({
  caller: "session",
  agent: AGENT,
  operator: "operator_b",
  op_type: "deposit",
  amount: 5000,
  msisdn: "690000001",
  ...overrides,
});

const facts = (overrides: Partial<AdmissionFacts> = {}): AdmissionFacts => ({
  circuit_breaker_active: false,
  candidates: [sim("b1"), sim("b2"), sim("a1")],
  now: NOW,
  ...overrides,
});

function outcome(result: Result<{ sim: SimCandidate }>): string | [string, string] {
  return result.ok ? result.value.sim.sim_id : [result.error.reason ?? "", result.error.message];
}

describe("admitOperation: precedence of the create-operation gates", () => {
  it.each<[string, Partial<OperationRequest>, Partial<AdmissionFacts>, string | [string, string]]>([
    ["admits a deposit on a granted SIM", {}, {}, "b1"],
    [
      "answers the circuit breaker before any other rule",
      { amount: 0, msisdn: "660000000", agent: { role: "agent", grant: null } },
      { circuit_breaker_active: true },
      ["circuit_breaker", "circuit_breaker"],
    ],
    [
      "refuses an amount of 0 before the operator",
      { amount: 0, msisdn: "660000000" },
      {},
      ["invalid_request", "montant must be a whole number of FCFA above 0, got 0"],
    ],
    [
      "refuses origin matching on the create route",
      { caller: "api_key", origin: "matching" },
      {},
      ["origin_matching_refused", "origin matching is set only by creating a matching operation"],
    ],
    [
      "refuses a missing merchant code before the operator",
      { op_type: "withdrawal", msisdn: "660000000" },
      {},
      ["merchant_code_required", "merchant_code is required for withdrawal on operator_b"],
    ],
    [
      "refuses an operator mismatch before the grant",
      { msisdn: "670000001", agent: { role: "agent", grant: null } },
      {},
      ["operator_mismatch", "Operator mismatch: 670000001 is operator_a, but the operation declares operator_b"],
    ],
    [
      "refuses an unknown owning agent after the operator and before the grant",
      { caller: "api_key", agent: { role: "agent", grant: null, agent_id: "ag-9", exists: false } },
      {},
      ["agent_unknown", "Agent ag-9 does not exist"],
    ],
    [
      "refuses an inactive owning agent before the grant",
      { caller: "api_key", agent: { role: "agent", grant: null, agent_id: "ag-9", is_active: false } },
      {},
      ["agent_inactive", "Agent ag-9 is inactive"],
    ],
    [
      "refuses a replay of an operation that does not exist, before the grant",
      { parent_operation_id: "p-1", parent: null, agent: { role: "agent", grant: null } },
      {},
      ["parent_not_found", "Parent operation p-1 does not exist"],
    ],
    [
      "refuses a replay of a confirmed operation",
      { parent_operation_id: "p-1", parent: { operation_id: "p-1", status: "confirmed", has_retry: false } },
      {},
      ["retry_not_allowed", "Operation p-1 is confirmed; a retry is not allowed"],
    ],
    [
      "refuses a second replay of one operation",
      { parent_operation_id: "p-1", parent: { operation_id: "p-1", status: "failed", has_retry: true } },
      {},
      ["retry_not_allowed", "Operation p-1 already has a retry"],
    ],
    [
      "admits a replay of a failed operation",
      { parent_operation_id: "p-1", parent: { operation_id: "p-1", status: "failed", has_retry: false } },
      {},
      "b1",
    ],
    [
      "admits a replay of a no_evidence operation (the caller confirmed it)",
      { parent_operation_id: "p-1", parent: { operation_id: "p-1", status: "no_evidence", has_retry: false } },
      {},
      "b1",
    ],
    [
      "refuses an agent without a grant before looking at SIMs",
      { agent: { role: "agent", grant: null } },
      { candidates: [] },
      ["no_grant", "Access profile missing: an agent without an access grant can run no operation"],
    ],
    [
      "refuses a named SIM outside the grant with 403 even when it does not exist",
      { sim_id: "b9" },
      {},
      ["not_in_grant_sim", "Access profile does not allow SIM b9"],
    ],
    [
      "refuses with 403 when the grant holds no SIM of the operator",
      { agent: { role: "agent", grant: { ...GRANT, allowed_sim_ids: ["a1"] } } },
      {},
      ["not_in_grant_sim", "Access profile grants no operator_b SIM"],
    ],
    [
      "answers selection's 422 when granted SIMs of the operator exist but none is eligible",
      {},
      { candidates: [sim("b1", { status: "frozen" }), sim("b2")] },
      ["no_active_sim", "No active operator_b SIM available"],
    ],
    ["never selects an ungranted SIM for an agent", {}, { candidates: [sim("b1", { in_flight: 4 }), sim("b2")] }, "b1"],
    [
      "lets an admin use any SIM but not skip the balance rules",
      { agent: { role: "admin", grant: null }, amount: 200_000 },
      { candidates: [sim("b1"), sim("b2", { balance_mirror: 150_000 })] },
      [
        "insufficient_balance",
        "Insufficient balance on SIM b2: requested 200000, available 150000 (measured 2026-11-22T12:59:00+01:00)",
      ],
    ],
    [
      "skips the operator check for a balance check",
      { op_type: "balance", amount: 1, msisdn: "000" },
      { candidates: [sim("b1", { balance_mirror: null, balance_updated_at: null })] },
      "b1",
    ],
  ])("%s", (_rule, requestOverrides, factOverrides, expected) => {
    expect(outcome(admitOperation(request(requestOverrides), facts(factOverrides)))).toEqual(expected);
  });

  it("returns the origin, local destination and queued status of an admitted operation", () => {
    const result = admitOperation(request({ caller: "api_key", msisdn: "+237 690 000 001" }), facts());
    expect(result.ok && { ...result.value, sim: result.value.sim.sim_id }).toEqual({
      sim: "b1",
      origin: "aggregated",
      msisdn_dest: "690000001",
      status: "queued",
    });
  });
});

describe("admitMatchingOperation", () => {
  it.each<[string, string, Partial<AdmissionFacts>, string | [string, string]]>([
    ["derives the operator from the beneficiary number", "670000001", {}, "a1"],
    [
      "refuses an undetermined prefix",
      "662000000",
      {},
      ["operator_undetermined", "Cannot determine the operator for 662000000"],
    ],
    ["ignores the circuit breaker: a person dials", "690000001", { circuit_breaker_active: true }, "b1"],
    [
      "applies a deposit's balance rules",
      "690000001",
      { candidates: [sim("b1", { balance_mirror: 10 })] },
      [
        "insufficient_balance",
        "Insufficient balance on SIM b1: requested 5000, available 10 (measured 2026-11-22T12:59:00+01:00)",
      ],
    ],
  ])("%s", (_rule, msisdn, factOverrides, expected) => {
    const result = admitMatchingOperation(
      { agent: AGENT, beneficiary_msisdn: msisdn, amount: 5000 },
      facts(factOverrides),
    );
    expect(outcome(result)).toEqual(expected);
  });

  it("creates the operation awaiting manual dial with origin matching", () => {
    const result = admitMatchingOperation({ agent: AGENT, beneficiary_msisdn: "690000001", amount: 5000 }, facts());
    expect(result.ok && [result.value.origin, result.value.status]).toEqual(["matching", "awaiting_manual_dial"]);
  });
});
