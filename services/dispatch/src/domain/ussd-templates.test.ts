import { describe, expect, it } from "vitest";
import {
  buildUssdSteps,
  DEFAULT_MENUS,
  expectedSenderFor,
  joinSteps,
  parseMenus,
  redactSteps,
  type UssdMenus,
  type UssdParams,
} from "./ussd-templates.ts";
import { OP_TYPES, OPERATORS, type Operator, type OpType } from "./vocabulary.ts";
import { refusalThrownBy } from "../../../../test/support/refusal.ts";

const PARAMS: UssdParams = { amount: 5000, msisdn: "690000001", pin: "4821", merchant_code: "515318" };

const ALL = OPERATORS.flatMap((operator) => OP_TYPES.map((opType) => [operator, opType] as [Operator, OpType]));

describe("the shipped menus", () => {
  it.each(ALL)("build for %s %s", (operator, opType) => {
    const built = buildUssdSteps(operator, opType, PARAMS);
    expect(built.steps.length).toBeGreaterThan(0);
    expect(built.steps.join("")).not.toMatch(/[{}]/);
  });

  it.each<[Operator, OpType]>([
    ["operator_a", "deposit"],
    ["operator_a", "balance"],
    ["operator_b", "deposit"],
  ])("end %s %s with the PIN as the final step", (operator, opType) => {
    expect(buildUssdSteps(operator, opType, PARAMS).steps.at(-1)).toBe("4821");
  });

  it("put the PIN inside the single dial string of the operator_b balance check", () => {
    expect(buildUssdSteps("operator_b", "balance", PARAMS)).toMatchObject({
      steps: ["#148*5*4821#"],
      ussd_string: "#148*5*4821#",
      redacted_steps: ["#148*5*****#"],
    });
  });

  it("open a dialog (several steps) for everything but the operator_b balance check", () => {
    const single = ALL.filter(([operator, opType]) => buildUssdSteps(operator, opType, PARAMS).steps.length === 1);
    expect(single).toEqual([["operator_b", "balance"]]);
  });

  it.each<[Operator, OpType, string[], string]>([
    ["operator_b", "deposit", ["#148*2#", "5000", "690000001", "4821"], "#148*2*5000*690000001*4821#"],
    ["operator_b", "withdrawal", ["#148*3#", "5000", "690000001", "515318"], "#148*3*5000*690000001*515318#"],
    ["operator_a", "balance", ["*126#", "5", "1", "4821"], "*126*5*1*4821#"],
    ["operator_a", "mini_statement", ["*126#", "7", "1", "2", "4821"], "*126*7*1*2*4821#"],
  ])("build %s %s as the steps and legacy string of the menu", (operator, opType, steps, ussdString) => {
    expect(buildUssdSteps(operator, opType, PARAMS)).toMatchObject({ steps, ussd_string: ussdString });
  });

  it("mark the field-verified operator_b deposit verified and the guessed operator_a deposit not", () => {
    expect([
      DEFAULT_MENUS.operator_b.templates.deposit?.verified,
      DEFAULT_MENUS.operator_a.templates.deposit?.verified,
    ]).toEqual([true, false]);
  });

  it("name an expected SMS sender per operator", () => {
    expect(OPERATORS.map((operator) => expectedSenderFor(operator))).toEqual(["MobileMoney", "OrangeMoney"]);
  });
});

describe("buildUssdSteps", () => {
  it("returns the steps with the PIN masked for the operation record and logs", () => {
    const built = buildUssdSteps("operator_b", "deposit", PARAMS);
    expect([built.redacted_steps, built.redacted_ussd_string]).toEqual([
      ["#148*2#", "5000", "690000001", "****"],
      "#148*2*5000*690000001*****#",
    ]);
  });

  it.each<[string, Operator, OpType, UssdParams, UssdMenus | undefined, string, Record<string, unknown>]>([
    [
      "refuses a type with no template",
      "operator_b",
      "deposit",
      PARAMS,
      { ...DEFAULT_MENUS, operator_b: { ...DEFAULT_MENUS.operator_b, templates: {} } },
      "No USSD template for deposit on operator_b",
      { operator: "operator_b", op_type: "deposit" },
    ],
    [
      "refuses a missing merchant code",
      "operator_b",
      "float_deposit",
      { ...PARAMS, merchant_code: null },
      undefined,
      "USSD value {merchant_code} is missing for float_deposit on operator_b",
      { operator: "operator_b", op_type: "float_deposit", placeholder: "merchant_code" },
    ],
    [
      "refuses a missing PIN",
      "operator_a",
      "balance",
      { ...PARAMS, pin: undefined },
      undefined,
      "USSD value {pin} is missing for balance on operator_a",
      { operator: "operator_a", op_type: "balance", placeholder: "pin" },
    ],
    [
      "refuses a PIN that is not 4 to 8 digits, without quoting it",
      "operator_b",
      "deposit",
      { ...PARAMS, pin: "12*#" },
      undefined,
      "USSD value {pin} has an unusable form for deposit on operator_b",
      { operator: "operator_b", op_type: "deposit", placeholder: "pin" },
    ],
    [
      "refuses a destination that is not 9 digits",
      "operator_b",
      "deposit",
      { ...PARAMS, msisdn: "+237690000001" },
      undefined,
      "USSD value {msisdn} has an unusable form for deposit on operator_b",
      { operator: "operator_b", op_type: "deposit", placeholder: "msisdn" },
    ],
    [
      "refuses an amount that is not a whole number above 0",
      "operator_b",
      "deposit",
      { ...PARAMS, amount: 0 },
      undefined,
      "USSD value {amount} has an unusable form for deposit on operator_b",
      { operator: "operator_b", op_type: "deposit", placeholder: "amount" },
    ],
  ])("%s", (_rule, operator, opType, params, menus, detail, context) => {
    const error = refusalThrownBy(() => buildUssdSteps(operator, opType, params, menus === undefined ? {} : { menus }));
    expect([error.code, error.reason, error.status, error.message, error.context]).toEqual([
      "server_error",
      "ussd_steps_unavailable",
      "internal",
      detail,
      { reason: "ussd_steps_unavailable", ...context },
    ]);
    expect(JSON.stringify(error.context) + error.message).not.toContain("4821");
  });

  it("refuses an unverified template when verified templates are required", () => {
    const error = refusalThrownBy(() => buildUssdSteps("operator_a", "deposit", PARAMS, { require_verified: true }));
    expect(error.message).toBe("The USSD template for deposit on operator_a is not verified");
  });

  it("builds a verified template when verified templates are required", () => {
    expect(buildUssdSteps("operator_b", "deposit", PARAMS, { require_verified: true }).verified).toBe(true);
  });

  it("ignores values the template does not use", () => {
    expect(buildUssdSteps("operator_b", "balance", { pin: "4821" }).steps).toEqual(["#148*5*4821#"]);
  });
});

describe("parseMenus", () => {
  const menus = (templates: unknown) => ({
    operators: {
      operator_a: { expected_sender: "A", templates },
      operator_b: { expected_sender: "B", templates: {} },
    },
  });

  it.each<[string, unknown, string]>([
    [
      "refuses a deposit whose last step is not the PIN",
      menus({ deposit: { steps: ["*1#", "{pin}", "{amount}"], verified: false } }),
      "USSD menu configuration is invalid: operator_a.deposit: the PIN must be the final step (or inside the only step)",
    ],
    [
      "refuses a single-step balance check without the PIN",
      menus({ balance: { steps: ["*1#"], verified: false } }),
      "USSD menu configuration is invalid: operator_a.balance: the PIN must be the final step (or inside the only step)",
    ],
    [
      "refuses an unknown placeholder",
      menus({ withdrawal: { steps: ["*1#", "{name}"], verified: false } }),
      "USSD menu configuration is invalid: operator_a.withdrawal: unknown placeholder {name}",
    ],
    [
      "refuses an unknown operation type",
      menus({ airtime: { steps: ["*1#"], verified: false } }),
      "USSD menu configuration is invalid: operator_a: unknown operation type 'airtime'",
    ],
    [
      "refuses empty steps",
      menus({ withdrawal: { steps: [], verified: false } }),
      "USSD menu configuration is invalid: operator_a.withdrawal.steps must be a non-empty array of non-empty strings",
    ],
    [
      "refuses a template without verified",
      menus({ withdrawal: { steps: ["*1#"] } }),
      "USSD menu configuration is invalid: operator_a.withdrawal.verified is missing",
    ],
    [
      "refuses a missing operator",
      { operators: { operator_a: { expected_sender: "A", templates: {} } } },
      "USSD menu configuration is invalid: operator 'operator_b' is missing",
    ],
  ])("%s", (_rule, document, detail) => {
    expect(refusalThrownBy(() => parseMenus(document)).message).toBe(detail);
  });
});

describe("joinSteps", () => {
  it.each<[string[], string]>([
    [["#148*5*1234#"], "#148*5*1234#"],
    [["*126#", "5", "1"], "*126*5*1#"],
    [["#148*2#", "5000"], "#148*2*5000#"],
  ])("joins %j as %s", (steps, joined) => {
    expect(joinSteps(steps)).toBe(joined);
  });
});

describe("redactSteps", () => {
  it.each<[string, string[], string, string[]]>([
    ["masks a PIN reply", ["#148*2#", "5000", "690000001", "4821"], "4821", ["#148*2#", "5000", "690000001", "****"]],
    ["masks a PIN inside a dial string", ["#148*5*4821#"], "4821", ["#148*5*****#"]],
    [
      "masks every occurrence, erring towards hiding",
      ["*126#", "694821000", "4821"],
      "4821",
      ["*126#", "69****000", "****"],
    ],
    ["leaves steps without the PIN as they are", ["*126#", "5"], "4821", ["*126#", "5"]],
  ])("%s", (_rule, steps, pin, expected) => {
    expect(redactSteps(steps, pin)).toEqual(expected);
  });
});
