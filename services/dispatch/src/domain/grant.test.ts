import { describe, expect, it } from "vitest";
import { checkGrant, checkGrantCoversOperator, filterCandidatesByGrant, type AccessGrant } from "./grant.ts";
import type { Operator, OpType, Role } from "./vocabulary.ts";

const GRANT: AccessGrant = {
  allowed_sim_ids: ["b1", "a1"],
  allowed_op_types: ["deposit", "balance"],
  max_amount: 50_000,
};

describe("checkGrant", () => {
  it.each<[string, AccessGrant | null, Role, string | null, OpType, number, string | null, string | null]>([
    ["lets an admin without a grant run anything", null, "admin", "zz", "float_deposit", 10_000_000, null, null],
    ["passes an agent within its grant", GRANT, "agent", "b1", "deposit", 50_000, null, null],
    ["passes before selection, when no SIM is known yet", GRANT, "agent", null, "balance", 1, null, null],
    [
      "refuses an agent without a grant",
      null,
      "agent",
      null,
      "deposit",
      1000,
      "no_grant",
      "Access profile missing: an agent without an access grant can run no operation",
    ],
    [
      "does not let a supervisor bypass the grant",
      null,
      "supervisor",
      "b1",
      "deposit",
      1000,
      "no_grant",
      "Access profile missing: an agent without an access grant can run no operation",
    ],
    [
      "refuses an agent whose grant holds no SIM",
      { ...GRANT, allowed_sim_ids: [] },
      "agent",
      null,
      "deposit",
      1000,
      "no_grant",
      "Access profile grants no SIM: an agent without SIMs can run no operation",
    ],
    [
      "refuses a type outside the grant",
      GRANT,
      "agent",
      "b1",
      "withdrawal",
      1000,
      "not_in_grant_type",
      "Access profile does not allow withdrawal operations",
    ],
    [
      "refuses an amount above max_amount",
      GRANT,
      "agent",
      "b1",
      "deposit",
      50_001,
      "over_max_amount",
      "Access profile limits an operation to 50000 FCFA; requested 50001",
    ],
    [
      "reads a missing max_amount as the default 500000",
      { ...GRANT, max_amount: null },
      "agent",
      "b1",
      "deposit",
      500_001,
      "over_max_amount",
      "Access profile limits an operation to 500000 FCFA; requested 500001",
    ],
    [
      "refuses a SIM outside the grant",
      GRANT,
      "agent",
      "b2",
      "deposit",
      1000,
      "not_in_grant_sim",
      "Access profile does not allow SIM b2",
    ],
    [
      "checks the type before the SIM",
      GRANT,
      "agent",
      "b2",
      "withdrawal",
      1000,
      "not_in_grant_type",
      "Access profile does not allow withdrawal operations",
    ],
  ])("%s", (_rule, grant, role, simId, opType, amount, code, detail) => {
    const error = checkGrant(grant, role, simId, opType, amount);
    if (code === null) {
      expect(error).toBeNull();
    } else {
      expect(error).toMatchObject({ code: "not_allowed", reason: code, status: "forbidden", message: detail });
    }
  });
});

describe("filterCandidatesByGrant", () => {
  const candidates = [{ sim_id: "a1" }, { sim_id: "b1" }, { sim_id: "b2" }];

  it.each<[string, AccessGrant | null, Role, string[]]>([
    ["keeps only granted SIMs for an agent", GRANT, "agent", ["a1", "b1"]],
    ["keeps every SIM for an admin", null, "admin", ["a1", "b1", "b2"]],
    ["keeps nothing for an agent without a grant", null, "agent", []],
    ["keeps only granted SIMs for a supervisor", GRANT, "supervisor", ["a1", "b1"]],
  ])("%s", (_rule, grant, role, expected) => {
    expect(filterCandidatesByGrant(candidates, grant, role).map((sim) => sim.sim_id)).toEqual(expected);
  });
});

describe("checkGrantCoversOperator", () => {
  it.each<[string, { operator: Operator }[], Role, Operator, string | null]>([
    ["passes when a granted SIM is of the operator", [{ operator: "operator_b" }], "agent", "operator_b", null],
    [
      "refuses when no granted SIM is of the operator",
      [{ operator: "operator_a" }],
      "agent",
      "operator_b",
      "Access profile grants no operator_b SIM",
    ],
    ["passes an admin whatever the candidates", [], "admin", "operator_b", null],
  ])("%s", (_rule, granted, role, operator, detail) => {
    const error = checkGrantCoversOperator(granted, role, operator);
    expect(error === null ? null : [error.code, error.reason, error.message]).toEqual(
      detail === null ? null : ["not_allowed", "not_in_grant_sim", detail],
    );
  });
});
