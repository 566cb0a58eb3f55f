import { describe, expect, it } from "vitest";
import type { Result } from "./errors.ts";
import { selectSim, type SelectionRequest, type SimCandidate } from "./selection.ts";

const NOW = new Date("2026-11-22T12:00:00Z");
const HOUR = 60 * 60 * 1000;
const ago = (ms: number) => new Date(NOW.getTime() - ms);

function sim(sim_id: string, overrides: Partial<SimCandidate> = {}): SimCandidate {
  return {
    sim_id,
    operator: sim_id.startsWith("a") ? "operator_a" : "operator_b",
    status: "active",
    device_id: `dev-${sim_id}`,
    device_status: "active",
    balance_mirror: 100_000,
    balance_updated_at: ago(HOUR),
    in_flight: 0,
    last_finished_at: ago(HOUR),
    ...overrides,
  };
}

const request = (overrides: Partial<SelectionRequest> = {}): SelectionRequest => ({
  operator: "operator_b",
  op_type: "deposit",
  amount: 5000,
  now: NOW,
  ...overrides,
});

/** The chosen SIM's id, or the refusal's code and exact detail. */
function outcome(result: Result<SimCandidate>): string | [string, string] {
  return result.ok ? result.value.sim_id : [result.error.reason ?? "", result.error.message];
}

describe("automatic SIM selection", () => {
  it.each<[string, SimCandidate[], Partial<SelectionRequest>, string | [string, string]]>([
    ["selects the only eligible SIM", [sim("b1")], {}, "b1"],
    ["ignores SIMs of the other operator", [sim("a1"), sim("b1", { in_flight: 3 })], {}, "b1"],
    ["refuses when the operator has no SIM", [sim("a1")], {}, ["no_active_sim", "No active operator_b SIM available"]],
    [
      "refuses when every SIM of the operator is frozen or retired",
      [sim("b1", { status: "frozen" }), sim("b2", { status: "retired" })],
      {},
      ["no_active_sim", "No active operator_b SIM available"],
    ],
    [
      "refuses when every active SIM is out of a handset",
      [sim("b1", { device_id: null, device_status: null }), sim("b2", { status: "frozen" })],
      {},
      ["no_assigned_sim", "No active operator_b SIM is assigned to a device"],
    ],
    [
      "refuses when every assigned SIM sits in a frozen handset",
      [sim("b1", { device_status: "frozen" }), sim("b2", { device_id: null, device_status: null })],
      {},
      ["no_active_sim", "No active operator_b SIM available"],
    ],
    [
      "skips a SIM in a frozen handset for one in an active handset",
      [sim("b1", { device_status: "frozen" }), sim("b2", { in_flight: 5 })],
      {},
      "b2",
    ],
    [
      "refuses when no eligible SIM was ever measured",
      [sim("b1", { balance_mirror: null, balance_updated_at: null })],
      {},
      ["no_measured_balance", "No operator_b SIM has a measured balance"],
    ],
    [
      "skips an unmeasured SIM for a measured one",
      [sim("b1", { balance_mirror: null, balance_updated_at: null }), sim("b2", { in_flight: 2 })],
      {},
      "b2",
    ],
    [
      "refuses stale readings, naming the most recent one in local time",
      [sim("b1", { balance_updated_at: ago(30 * HOUR) }), sim("b2", { balance_updated_at: ago(24 * HOUR + 1000) })],
      {},
      ["stale_balance", "SIM b2 balance was last measured at 2026-11-21T12:59:59+01:00"],
    ],
    ["accepts a reading exactly 24 hours old", [sim("b1", { balance_updated_at: ago(24 * HOUR) })], {}, "b1"],
    [
      "skips a stale SIM for a fresh one",
      [sim("b1", { balance_updated_at: ago(25 * HOUR) }), sim("b2", { in_flight: 4 })],
      {},
      "b2",
    ],
    [
      "honours a shorter staleness window when given",
      [sim("b1", { balance_updated_at: ago(2 * HOUR) })],
      { staleness_ms: HOUR },
      ["stale_balance", "SIM b1 balance was last measured at 2026-11-22T11:00:00+01:00"],
    ],
    [
      "prefers a SIM that covers the amount over a less busy one that does not",
      [sim("b1", { balance_mirror: 4999 }), sim("b2", { balance_mirror: 5000, in_flight: 3 })],
      {},
      "b2",
    ],
    [
      "refuses when no SIM covers the amount, naming the largest balance",
      [sim("b1", { balance_mirror: 1200, balance_updated_at: ago(0) }), sim("b2", { balance_mirror: 800 })],
      {},
      [
        "insufficient_balance",
        "Insufficient balance on SIM b1: requested 5000, available 1200 (measured 2026-11-22T13:00:00+01:00)",
      ],
    ],
    [
      "counts the debits already queued or running on a SIM against its measured balance",
      [sim("b1", { balance_mirror: 10_000, reserved: 8_000 }), sim("b2", { balance_mirror: 9_000, in_flight: 4 })],
      { amount: 8_000 },
      "b2",
    ],
    [
      "refuses when what is left after the reserved debits does not cover, naming the most available",
      [
        sim("b1", { balance_mirror: 10_000, reserved: 8_000, balance_updated_at: ago(0) }),
        sim("b2", { balance_mirror: 9_000, reserved: 6_000 }),
      ],
      { amount: 8_000 },
      [
        "insufficient_balance",
        "Insufficient balance on SIM b2: requested 8000, available 3000 (measured 2026-11-22T12:00:00+01:00)",
      ],
    ],
    [
      "applies the coverage rule to a float deposit",
      [sim("b1", { balance_mirror: 10 })],
      { op_type: "float_deposit", amount: 11 },
      [
        "insufficient_balance",
        "Insufficient balance on SIM b1: requested 11, available 10 (measured 2026-11-22T12:00:00+01:00)",
      ],
    ],
    [
      "does not ask a withdrawal to be covered (it credits the SIM)",
      [sim("b1", { balance_mirror: 0 })],
      { op_type: "withdrawal" },
      "b1",
    ],
    [
      "asks a mini statement for a fresh measured balance",
      [sim("b1", { balance_mirror: null, balance_updated_at: null })],
      { op_type: "mini_statement", amount: 1 },
      ["no_measured_balance", "No operator_b SIM has a measured balance"],
    ],
    [
      "does not ask a mini statement to be covered",
      [sim("b1", { balance_mirror: 0 })],
      { op_type: "mini_statement", amount: 1 },
      "b1",
    ],
    [
      "lets a balance check run on an unmeasured SIM",
      [sim("b1", { balance_mirror: null, balance_updated_at: null })],
      { op_type: "balance", amount: 1 },
      "b1",
    ],
    [
      "lets a balance check run on a stale SIM",
      [sim("b1", { balance_updated_at: ago(100 * HOUR) })],
      { op_type: "balance", amount: 1 },
      "b1",
    ],
    [
      "still refuses a balance check without an active handset",
      [sim("b1", { device_status: "frozen" })],
      { op_type: "balance", amount: 1 },
      ["no_active_sim", "No active operator_b SIM available"],
    ],
    [
      "breaks ties by fewest in-flight operations",
      [sim("b1", { in_flight: 2 }), sim("b2", { in_flight: 1 })],
      {},
      "b2",
    ],
    [
      "breaks ties by the SIM idle longest",
      [sim("b1", { last_finished_at: ago(HOUR) }), sim("b2", { last_finished_at: ago(2 * HOUR) })],
      {},
      "b2",
    ],
    [
      "prefers a never-used SIM to any idle one",
      [sim("b1", { last_finished_at: ago(100 * HOUR) }), sim("b2", { last_finished_at: null })],
      {},
      "b2",
    ],
    ["breaks remaining ties by sim_id", [sim("b2"), sim("b10"), sim("b1")], {}, "b1"],
  ])("%s", (_rule, candidates, overrides, expected) => {
    expect(outcome(selectSim(candidates, request(overrides)))).toEqual(expected);
  });

  it("puts requested amount, available balance and measurement time in the context of an insufficient balance", () => {
    const result = selectSim([sim("b1", { balance_mirror: 1200 })], request());
    expect(result.ok ? null : result.error.context).toEqual({
      reason: "insufficient_balance",
      sim_id: "b1",
      requested: 5000,
      available: 1200,
      measured_balance: 1200,
      reserved: 0,
      measured_at: "2026-11-22T11:00:00.000Z",
    });
  });
});

describe("named SIM", () => {
  it.each<[string, SimCandidate[], Partial<SelectionRequest>, string | [string, string]]>([
    [
      "uses the named SIM even when another is less busy",
      [sim("b1"), sim("b2", { in_flight: 9 })],
      { sim_id: "b2" },
      "b2",
    ],
    ["refuses a SIM that does not exist", [sim("b1")], { sim_id: "b9" }, ["sim_not_found", "SIM b9 does not exist"]],
    [
      "refuses a SIM of the other operator",
      [sim("a1")],
      { sim_id: "a1" },
      ["sim_operator_mismatch", "SIM a1 belongs to operator_a, but the operation declares operator_b"],
    ],
    ["refuses a frozen SIM", [sim("b1", { status: "frozen" })], { sim_id: "b1" }, ["sim_frozen", "SIM b1 is frozen"]],
    [
      "refuses a retired SIM",
      [sim("b1", { status: "retired" })],
      { sim_id: "b1" },
      ["sim_retired", "SIM b1 is retired"],
    ],
    [
      "refuses a SIM in no handset",
      [sim("b1", { device_id: null, device_status: null })],
      { sim_id: "b1" },
      ["sim_not_assigned", "SIM b1 is not assigned to a device"],
    ],
    [
      "refuses a SIM whose handset is frozen",
      [sim("b1", { device_status: "frozen" })],
      { sim_id: "b1" },
      ["device_frozen", "Device dev-b1 holding SIM b1 is frozen"],
    ],
    [
      "refuses a SIM never measured",
      [sim("b1", { balance_mirror: null, balance_updated_at: null })],
      { sim_id: "b1" },
      ["sim_unmeasured", "SIM b1 has no measured balance"],
    ],
    [
      "refuses a stale reading",
      [sim("b1", { balance_updated_at: new Date("2026-11-20T08:30:00Z") })],
      { sim_id: "b1" },
      ["stale_balance", "SIM b1 balance was last measured at 2026-11-20T09:30:00+01:00"],
    ],
    [
      "refuses a SIM that cannot cover the amount, even when another could",
      [sim("b1", { balance_mirror: 100 }), sim("b2")],
      { sim_id: "b1" },
      [
        "insufficient_balance",
        "Insufficient balance on SIM b1: requested 5000, available 100 (measured 2026-11-22T12:00:00+01:00)",
      ],
    ],
    [
      "runs a balance check on a named unmeasured SIM",
      [sim("b1", { balance_mirror: null, balance_updated_at: null })],
      { sim_id: "b1", op_type: "balance", amount: 1 },
      "b1",
    ],
  ])("%s", (_rule, candidates, overrides, expected) => {
    expect(outcome(selectSim(candidates, request(overrides)))).toEqual(expected);
  });

  it("answers a frozen handset with 422 (on create, 423 is the breaker alone)", () => {
    const result = selectSim([sim("b1", { device_status: "frozen" })], request({ sim_id: "b1" }));
    expect(result.ok ? null : [result.error.status, result.error.reason]).toEqual(["refused", "device_frozen"]);
  });
});
