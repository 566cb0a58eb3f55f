// Builds the USSD steps a handset executes from the menu templates in
// ussd-menus.json (configuration: operators change their menus, the code does not).
//
// Contract: element 0 goes through the dialer, each later element replies to the
// next prompt, the final element is the SIM PIN for deposit and balance operations,
// and a single element opens no dialog (so a single-step template carries the PIN
// inside its dial string). `ussd_string` is the legacy single-string form: the
// dial code with every reply appended as `*reply`, e.g. `#148*2*5000*690000000*1234#`.
//
// The built steps contain the decrypted PIN: only the device dispatch response may
// carry them. The build also returns the same steps with the PIN as `****`; those
// are what the operation record stores as `ussd_string` and what may be logged.
//
// A template or a value that cannot be used is a fault, not a refusal of the
// caller's request, so it is thrown (500, ussd_steps_unavailable). No error text or
// context ever holds a filled value: the PIN must not leak through an error.

import defaultMenusJson from "./ussd-menus.json" with { type: "json" };
import { DomainError } from "./errors.ts";
import { refusal } from "./reasons.ts";
import { isOperator, isOpType, OPERATORS, type Operator, type OpType } from "./vocabulary.ts";

export const PIN_MASK = "****";

const PLACEHOLDERS = ["amount", "msisdn", "pin", "merchant_code"] as const;
type Placeholder = (typeof PLACEHOLDERS)[number];

/** The shape a value must have to be typed into a USSD menu; never `*` or `#`, which would change the dial string. */
const VALUE_PATTERNS: Readonly<Record<Placeholder, RegExp>> = {
  amount: /^[1-9]\d*$/,
  msisdn: /^\d{9}$/,
  pin: /^\d{4,8}$/,
  merchant_code: /^[0-9A-Za-z]+$/,
};

/** The types whose final element is the PIN (contract, Poll for next operation). */
const PIN_LAST_TYPES: readonly OpType[] = ["deposit", "balance"];

export interface UssdTemplate {
  readonly steps: readonly string[];
  readonly verified: boolean;
  readonly note: string;
}

export interface OperatorMenus {
  readonly expected_sender: string;
  readonly templates: Partial<Record<OpType, UssdTemplate>>;
}

export type UssdMenus = Readonly<Record<Operator, OperatorMenus>>;

export interface UssdParams {
  readonly amount?: number | null;
  readonly msisdn?: string | null;
  readonly pin?: string | null;
  readonly merchant_code?: string | null;
}

export interface UssdSteps {
  /** Contains the PIN: device dispatch response only. */
  readonly steps: string[];
  /** Contains the PIN: device dispatch response only. */
  readonly ussd_string: string;
  readonly redacted_steps: string[];
  /** What the operation record stores and returns as `ussd_string`. */
  readonly redacted_ussd_string: string;
  readonly verified: boolean;
}

export interface BuildOptions {
  readonly menus?: UssdMenus;
  /** Refuse templates not yet verified (a production switch; off for simulators and tests). */
  readonly require_verified?: boolean;
}

// ---------------------------------------------------------------------------
// Configuration

/** Validates the menus document once, at load, so a broken edit fails at start-up rather than at a poll. */
export function parseMenus(document: unknown): UssdMenus {
  const operators = field(document, "operators", "menus");
  const menus: Partial<Record<Operator, OperatorMenus>> = {};
  for (const [operator, value] of Object.entries(operators as object)) {
    if (!isOperator(operator)) throw menuFault(`unknown operator '${operator}'`);
    menus[operator] = parseOperatorMenus(operator, value);
  }
  for (const operator of OPERATORS) {
    if (menus[operator] === undefined) throw menuFault(`operator '${operator}' is missing`);
  }
  return menus as UssdMenus;
}

function parseOperatorMenus(operator: Operator, value: unknown): OperatorMenus {
  const sender = field(value, "expected_sender", operator);
  if (typeof sender !== "string" || sender === "") throw menuFault(`${operator}.expected_sender must be a string`);
  const templates: Partial<Record<OpType, UssdTemplate>> = {};
  for (const [opType, template] of Object.entries(field(value, "templates", operator) as object)) {
    if (!isOpType(opType)) throw menuFault(`${operator}: unknown operation type '${opType}'`);
    templates[opType] = parseTemplate(`${operator}.${opType}`, opType, template);
  }
  return { expected_sender: sender, templates };
}

function parseTemplate(where: string, opType: OpType, value: unknown): UssdTemplate {
  const steps = field(value, "steps", where);
  const verified = field(value, "verified", where);
  const note = (value as { note?: unknown }).note ?? "";
  if (!Array.isArray(steps) || steps.length === 0 || !steps.every((s) => typeof s === "string" && s !== "")) {
    throw menuFault(`${where}.steps must be a non-empty array of non-empty strings`);
  }
  if (typeof verified !== "boolean" || typeof note !== "string") {
    throw menuFault(`${where}: verified must be a boolean and note a string`);
  }
  for (const name of steps.flatMap(placeholdersIn)) {
    if (!(PLACEHOLDERS as readonly string[]).includes(name)) throw menuFault(`${where}: unknown placeholder {${name}}`);
  }
  if (PIN_LAST_TYPES.includes(opType) && !pinIsLast(steps)) {
    throw menuFault(`${where}: the PIN must be the final step (or inside the only step)`);
  }
  return { steps, verified, note };
}

function pinIsLast(steps: readonly string[]): boolean {
  const last = steps[steps.length - 1] ?? "";
  return steps.length === 1 ? last.includes("{pin}") : last === "{pin}";
}

function field(value: unknown, name: string, where: string): unknown {
  if (typeof value !== "object" || value === null || !(name in value)) throw menuFault(`${where}.${name} is missing`);
  return (value as Record<string, unknown>)[name];
}

function placeholdersIn(step: string): string[] {
  return [...step.matchAll(/\{([^}]*)\}/g)].map((match) => match[1] ?? "");
}

function menuFault(problem: string): DomainError {
  return refusal("ussd_steps_unavailable", `USSD menu configuration is invalid: ${problem}`);
}

export const DEFAULT_MENUS: UssdMenus = parseMenus(defaultMenusJson);

// ---------------------------------------------------------------------------
// Building

export function buildUssdSteps(
  operator: Operator,
  opType: OpType,
  params: UssdParams,
  options: BuildOptions = {},
): UssdSteps {
  const template = (options.menus ?? DEFAULT_MENUS)[operator].templates[opType];
  const where = { operator, op_type: opType };
  if (template === undefined) {
    throw refusal("ussd_steps_unavailable", `No USSD template for ${opType} on ${operator}`, where);
  }
  if (options.require_verified === true && !template.verified) {
    throw refusal("ussd_steps_unavailable", `The USSD template for ${opType} on ${operator} is not verified`, where);
  }
  const values = fillValues(template, params, where);
  const steps = render(template.steps, values);
  const redacted = render(template.steps, { ...values, pin: PIN_MASK });
  return {
    steps,
    ussd_string: joinSteps(steps),
    redacted_steps: redacted,
    redacted_ussd_string: joinSteps(redacted),
    verified: template.verified,
  };
}

function fillValues(
  template: UssdTemplate,
  params: UssdParams,
  where: { operator: Operator; op_type: OpType },
): Partial<Record<Placeholder, string>> {
  const values: Partial<Record<Placeholder, string>> = {};
  for (const name of new Set(template.steps.flatMap(placeholdersIn)) as Set<Placeholder>) {
    const raw = params[name];
    const text = raw == null ? "" : String(raw);
    if (!VALUE_PATTERNS[name].test(text)) {
      // The value itself is left out on purpose: it may be the PIN.
      const problem = raw == null || text === "" ? "is missing" : "has an unusable form";
      throw refusal(
        "ussd_steps_unavailable",
        `USSD value {${name}} ${problem} for ${where.op_type} on ${where.operator}`,
        {
          ...where,
          placeholder: name,
        },
      );
    }
    values[name] = text;
  }
  return values;
}

function render(steps: readonly string[], values: Partial<Record<Placeholder, string>>): string[] {
  return steps.map((step) => step.replace(/\{([^}]*)\}/g, (_, name: Placeholder) => values[name] ?? ""));
}

/** Legacy single-string form: `#148*2#` + replies `5000`, `1234` gives `#148*2*5000*1234#`. */
export function joinSteps(steps: readonly string[]): string {
  const [dial = "", ...replies] = steps;
  if (replies.length === 0) return dial;
  return `${dial.replace(/#$/, "")}*${replies.join("*")}#`;
}

/** Every occurrence of the PIN replaced by `****`: for anything that might be logged. */
export function redactSteps(steps: readonly string[], pin: string): string[] {
  if (pin === "") return [...steps];
  return steps.map((step) => step.split(pin).join(PIN_MASK));
}

/** The SMS sender the handset should expect replies from. Unverified configuration, like the menus. */
export function expectedSenderFor(operator: Operator, menus: UssdMenus = DEFAULT_MENUS): string {
  return menus[operator].expected_sender;
}
