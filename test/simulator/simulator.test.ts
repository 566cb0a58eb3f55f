import { describe, expect, it } from "vitest";
import { buildUssdSteps, type OpType } from "../../services/dispatch/src/domain/index.ts";
import { SimulatedHandset, type DispatchPayload, type FailureMode } from "./handset.ts";
import { depositFee, SimulatedOperator, type OperatorName } from "./operator.ts";

const SIM_A = { id: "sim-a", msisdn: "670100100", operator: "operator_a" as const };
const SIM_B = { id: "sim-b", msisdn: "690100100", operator: "operator_b" as const };
const PIN = "4826";

function setup() {
  const operator = new SimulatedOperator();
  operator.registerSim(SIM_A.msisdn, "operator_a", { pin: PIN, balance: 100_000 });
  operator.registerSim(SIM_B.msisdn, "operator_b", { pin: PIN, balance: 100_000 });
  operator.registerCustomer("670555555", "Jean Dupont");
  operator.registerCustomer("690555555", "Marie-Claire Ngo");
  const handset = new SimulatedHandset({
    baseUrl: "http://unused.invalid",
    token: "unused",
    operator,
    sims: new Map([
      [SIM_A.id, { msisdn: SIM_A.msisdn, operator: SIM_A.operator }],
      [SIM_B.id, { msisdn: SIM_B.msisdn, operator: SIM_B.operator }],
    ]),
  });
  return { operator, handset };
}

/** The payload dispatch would send, built with dispatch's own templates. */
function payload(
  operator: OperatorName,
  opType: OpType,
  o: {
    amount?: number;
    msisdn?: string;
    dest?: string | null;
    verified?: boolean;
    pin?: string;
    merchant?: string;
  } = {},
): DispatchPayload {
  const steps = buildUssdSteps(operator, opType, {
    amount: o.amount ?? 5000,
    msisdn: o.msisdn ?? (operator === "operator_a" ? "670555555" : "690555555"),
    pin: o.pin ?? PIN,
    merchant_code: o.merchant ?? "M123",
  });
  return {
    operation_id: `op-${Math.random()}`,
    sim_id: operator === "operator_a" ? SIM_A.id : SIM_B.id,
    subscription_slot: 0,
    ussd_string: steps.ussd_string,
    ussd_steps: steps.steps,
    expected_sender: "x",
    timeout_seconds: 90,
    montant: o.amount ?? 5000,
    op_type: opType,
    partner_verified: o.verified ?? true,
    dest_name: o.dest === undefined ? "Jean Dupont" : o.dest,
    msisdn_dest: o.msisdn ?? (operator === "operator_a" ? "670555555" : "690555555"),
    operator,
  };
}

describe("simulated operator against dispatch's USSD templates", () => {
  it.each<[OperatorName, string, string]>([
    ["operator_a", SIM_A.msisdn, "670555555"],
    ["operator_b", SIM_B.msisdn, "690555555"],
  ])("moves a deposit on %s with the right PIN, fee charged to the SIM", async (operator, sim, customer) => {
    const { operator: op, handset } = setup();
    const result = await handset.dial(payload(operator, "deposit", { amount: 5000, msisdn: customer }));
    expect(result.outcome).toBe("ussd_ok");
    expect(op.balanceOf(sim)).toBe(100_000 - 5000 - depositFee(5000));
    expect(op.balanceOf(customer)).toBe(5000);
    expect(result.receipt).toMatchObject({
      kind: "deposit",
      amount: 5000,
      balance_after: op.balanceOf(sim),
      counterparty_msisdn: customer,
    });
  });

  it.each<OperatorName>(["operator_a", "operator_b"])(
    "reads the balance on %s (operator_b in one dial string)",
    async (operator) => {
      const { handset } = setup();
      const p = payload(operator, "balance", { amount: 1 });
      expect(p.ussd_steps.length).toBe(operator === "operator_b" ? 1 : 4);
      const result = await handset.dial(p);
      expect([result.outcome, result.receipt?.amount, result.receipt?.kind]).toEqual(["ussd_ok", 100_000, "balance"]);
    },
  );

  it("refuses a wrong PIN: ussd_failed, nothing moves", async () => {
    const { operator: op, handset } = setup();
    const result = await handset.dial(payload("operator_b", "deposit", { pin: "0000" }));
    expect([result.outcome, result.ussd_response]).toEqual(["ussd_failed", "Code secret incorrect."]);
    expect(op.balanceOf(SIM_B.msisdn)).toBe(100_000);
  });

  it("refuses a deposit the SIM cannot cover", async () => {
    const { operator: op, handset } = setup();
    op.setBalance(SIM_B.msisdn, 100);
    const result = await handset.dial(payload("operator_b", "deposit", { amount: 5000 }));
    expect(result.outcome).toBe("ussd_failed");
    expect(op.balanceOf(SIM_B.msisdn)).toBe(100);
  });

  it("runs withdrawal, float and mini-statement menus of both operators to their end", async () => {
    const { handset } = setup();
    for (const operator of ["operator_a", "operator_b"] as const) {
      for (const type of ["float_deposit", "mini_statement"] as const) {
        expect([
          operator,
          type,
          (await handset.dial(payload(operator, type, { amount: type === "mini_statement" ? 1 : 1000 }))).outcome,
        ]).toEqual([operator, type, "ussd_ok"]);
      }
    }
  });
});

describe("name verification on the handset", () => {
  it("sends the PIN when the displayed name holds every word of the expected one", async () => {
    const { operator: op, handset } = setup();
    const result = await handset.dial(payload("operator_b", "deposit", { verified: false, dest: "marie claire" }));
    expect(result.outcome).toBe("ussd_ok");
    expect(op.balanceOf("690555555")).toBe(5000);
  });

  it("reports name_mismatch and never sends the PIN when the names differ", async () => {
    const { operator: op, handset } = setup();
    const result = await handset.dial(payload("operator_b", "deposit", { verified: false, dest: "Paul Biya" }));
    expect(result.outcome).toBe("name_mismatch");
    expect(result.ussd_response).toContain("Marie-Claire Ngo");
    expect(op.balanceOf(SIM_B.msisdn)).toBe(100_000);
  });

  it("treats a recipient shown by number only as a mismatch", async () => {
    const { handset } = setup();
    const result = await handset.dial(payload("operator_a", "deposit", { verified: false, msisdn: "670999999" }));
    expect(result.outcome).toBe("name_mismatch");
  });
});

describe("failures on demand", () => {
  it.each<[FailureMode, string, boolean]>([
    [{ outcome: "no_service" }, "no_service", false],
    [{ outcome: "sim_absent" }, "sim_absent", false],
    [{ outcome: "ussd_failed" }, "ussd_failed", false],
    [{ outcome: "ussd_timeout" }, "ussd_timeout", false],
    [{ outcome: "ussd_timeout", afterPin: true }, "ussd_timeout", true],
    [{ outcome: "ussd_unconfirmed" }, "ussd_unconfirmed", true],
    [{ outcome: "name_mismatch" }, "name_mismatch", false],
  ])("fails with %j: reports %s, money moved: %s", async (mode, outcome, moved) => {
    const { operator: op, handset } = setup();
    const p = payload("operator_b", "deposit");
    handset.failNext(p.operation_id, mode);
    const result = await handset.dial(p);
    expect(result.outcome).toBe(outcome);
    expect(op.balanceOf("690555555") === 5000).toBe(moved);
  });
});
