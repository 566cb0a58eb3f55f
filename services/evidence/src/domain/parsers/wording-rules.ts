// Wording rules taught at run time: an operator's new wording described as a template of its
// text, compiled to the same `Rule` the built-in wordings are, and tried against stored
// messages before it is activated.
//
// A template is the text with its values replaced by slots, e.g.
//   "Depot recu {amount} de {name} ({phone} - ) le {any} Solde:{balance} ID:{ref}Frais:{fee}."
// Literal text is matched as written (case, accents and whitespace forgiven, as for the built-in
// rules); each slot is one of the parser's own value patterns. An administrator never writes a
// regular expression: a template cannot be catastrophic to match, and cannot read a value
// anywhere but in its slot.

import { AMT, MONEY, MSISDN, PHONE, PLACEHOLDER, REF } from "./fields.ts";
import { foldAccents } from "./normalize.ts";
import { checkRules, parseMessage } from "./parse.ts";
import {
  MESSAGE_KINDS,
  type Direction,
  type FieldName,
  type Language,
  type MessageKind,
  type Operator,
  type ParsedMessage,
  type Rule,
} from "./types.ts";

export interface WordingRuleSpec {
  operator: Operator;
  kind: MessageKind | null;
  language: Language;
  direction: Direction | null;
  template: string;
}

const DATE = String.raw`(?:\d{1,4}[-/]\d{1,2}[-/]\d{1,4}(?:[ T]\d{1,2}[:h]\d{2}(?::\d{2})?)?|\d{1,2}:\d{2}(?::\d{2})?|DATETIME\}?)`;

/** A character of a name: anything but brackets, and a digit only glued to a word's other characters. */
const NAME = String.raw`(?:[^()\d]|(?<=[^\s\d()]\d*)\d)`;

/** The slots of a template and the field each one reads (`any` reads nothing). */
const SLOTS = {
  amount: { field: "amount", capture: MONEY, plain: AMT },
  fee: { field: "fee", capture: MONEY, plain: AMT },
  balance: { field: "balance_after", capture: MONEY, plain: AMT },
  ref: { field: "operator_ref", capture: REF, plain: REF.replace("(?<v>", "(?:") },
  // A masked number ("[PHONE:671-abcdef]") is still the wording's number: matched, read as null.
  phone: { field: "counterparty_msisdn", capture: MSISDN, plain: String.raw`(?:${PHONE}|${PLACEHOLDER})` },
  // A name: no brackets, and no digits but those glued to a word ("LA VENDEUSE P2M", "NYLON-1er").
  name: { field: "counterparty_name", capture: String.raw`(?<v>${NAME}{1,120}?)`, plain: String.raw`${NAME}{1,120}?` },
  any: { field: null, capture: String.raw`.{0,80}?`, plain: String.raw`.{0,80}?` },
  // A date or a time as operators print them ("2025-11-12 20:48:52", "06/09/2018 12:11:22"):
  // reads nothing, but unlike `{any}` it cannot swallow the words around it.
  date: { field: null, capture: DATE, plain: DATE },
  // Any other number, with or without a currency (a commission, a code, a tax): reads nothing.
  number: { field: null, capture: AMT, plain: AMT },
} as const;
type Slot = keyof typeof SLOTS;
/** A slot of a template: `{amount}`, `{fee}`, `{balance}`, `{ref}`, `{phone}`, `{name}`, `{date}`, `{number}`, `{any}`. */
export type TemplateSlot = Slot;
/** Slots that read nothing, and so may appear more than once. */
const REPEATABLE: readonly string[] = ["any", "date", "number"];

export const MAX_TEMPLATE_LENGTH = 600;

/** Why a template is refused (context.reason of the admin routes). */
export const TEMPLATE_PROBLEMS = [
  "template_too_long",
  "unknown_slot",
  "repeated_slot",
  "no_literal_text",
  "unknown_kind",
  "deposit_needs_amount_ref_and_phone",
  "balance_needs_balance",
  "movement_needs_amount",
] as const;
export type TemplateProblem = (typeof TEMPLATE_PROBLEMS)[number];

const SLOT = /\{([a-z_]+)\}/g;

/** The template's problems; empty when it can be compiled. */
export function templateProblems(spec: WordingRuleSpec): TemplateProblem[] {
  const problems: TemplateProblem[] = [];
  if (spec.template.length > MAX_TEMPLATE_LENGTH) problems.push("template_too_long");
  if (spec.kind !== null && !MESSAGE_KINDS.includes(spec.kind)) problems.push("unknown_kind");
  const slots = [...spec.template.matchAll(SLOT)].map((m) => m[1]);
  if (slots.some((s) => !(s in SLOTS))) problems.push("unknown_slot");
  const reading = slots.filter((s) => !REPEATABLE.includes(s));
  if (new Set(reading).size !== reading.length) problems.push("repeated_slot");
  // The wording's own words are what recognise it; a template of slots alone would read anything.
  if (!/\p{L}{3}/u.test(spec.template.replace(SLOT, " "))) problems.push("no_literal_text");
  // The same bar as for the cues: a taught DEP must carry what the divergence check needs.
  const has = (s: Slot) => slots.includes(s);
  if (spec.kind === "DEP" && !(has("amount") && has("ref") && has("phone")))
    problems.push("deposit_needs_amount_ref_and_phone");
  if (spec.kind === "BAL" && !has("balance")) problems.push("balance_needs_balance");
  if (spec.kind !== null && spec.kind !== "BAL" && spec.kind !== "DEP" && isMoneyKind(spec.kind) && !has("amount"))
    problems.push("movement_needs_amount");
  return problems;
}

function isMoneyKind(kind: MessageKind): boolean {
  return !["ADMIN", "MKT", "TPL", "FAIL", "OPERATOR_A_REC", "OPERATOR_B_REC", "COM"].includes(kind);
}

/** Literal text as a pattern on the folded text: whitespace forgiven, everything else escaped. */
function literal(text: string): string {
  return foldAccents(text)
    .trim()
    .split(/\s+/)
    .map((word) => word.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
    .join(String.raw`\s*`);
}

/**
 * The template as a rule; `id` is `taught.<operator>.<rule id>.v<version>`. Throws when the
 * template has problems (call templateProblems first).
 */
export function compileWordingRule(spec: WordingRuleSpec, id: string): Rule {
  const problems = templateProblems(spec);
  if (problems.length > 0) throw new Error(`wording rule ${id}: ${problems.join(", ")}`);
  const parts = spec.template.split(SLOT); // literal, slot, literal, slot, ...
  const source = (capture: Slot | null) =>
    parts
      .map((part, i) => {
        if (i % 2 === 0) return part.trim() === "" ? String.raw`\s*` : String.raw`\s*${literal(part)}\s*`;
        const slot = SLOTS[part as Slot];
        return part === capture ? slot.capture : slot.plain;
      })
      .join("");
  const fields: Partial<Record<FieldName, RegExp>> = {};
  for (const [name, slot] of Object.entries(SLOTS) as [Slot, (typeof SLOTS)[Slot]][]) {
    if (slot.field !== null && parts.some((p, i) => i % 2 === 1 && p === name))
      fields[slot.field] = new RegExp(source(name), "gid");
  }
  const rule: Rule = {
    id,
    kind: spec.kind,
    language: spec.language,
    direction: spec.direction,
    match: new RegExp(source(null), "i"),
    fields,
  };
  checkRules([rule]);
  return rule;
}

/** The reading stored with a message (what it is read as today). */
export interface StoredReading {
  kind: MessageKind | null;
  rule: string | null;
  direction: Direction | null;
  amount: number | null;
  fee: number | null;
  balance_after: number | null;
  operator_ref: string | null;
  counterparty_msisdn: string | null;
}

/** A stored message as the trial sees it. */
export interface StoredText extends StoredReading {
  id: string;
  operator: Operator;
  raw_text: string;
  outcome: string;
}

export interface TrialRead {
  message_id: string;
  outcome: string;
  before: StoredReading;
  after: ParsedMessage;
  /** Nothing was proved by it: an activation reads it again (the others keep their reading). */
  rereadable: boolean;
  /** Read today as money received, it would be read as a kind that confirms (refused). */
  money_received_as_proof: boolean;
}

/** Outcomes a taught rule may read again: nothing was proved by them. */
export const REREADABLE_OUTCOMES: readonly string[] = ["orphan", "stored", "not_correlated"];

/** The kinds a text proves an operation with: a deposit (a transfer), a balance reply (a balance check). */
export const CONFIRMING_KINDS: readonly MessageKind[] = ["DEP", "BAL"];
export const isConfirmingKind = (kind: MessageKind | null): boolean => kind !== null && CONFIRMING_KINDS.includes(kind);

/**
 * A text read today as money received: the wallet was credited (a transfer or float received,
 * or any other money-moving reading into the wallet). Read as a DEP, such a text would confirm
 * an outgoing deposit with a customer's incoming transfer, and set the SIM's balance.
 */
export function isMoneyReceived(r: Pick<StoredReading, "kind" | "direction">): boolean {
  if (r.kind === null || isConfirmingKind(r.kind)) return false;
  return r.kind === "UV_IN" || r.kind === "FLOAT_IN" || (r.direction === "in" && isMoneyKind(r.kind));
}

/** Whether the rule's reading differs from the stored one: another kind, direction or value. */
function readsDifferently(before: StoredReading, after: ParsedMessage): boolean {
  return (
    before.kind !== after.kind ||
    before.direction !== after.direction ||
    before.amount !== after.amount ||
    before.fee !== after.fee ||
    before.balance_after !== after.balance_after ||
    before.operator_ref !== after.operator_ref ||
    before.counterparty_msisdn !== after.counterparty_msisdn
  );
}

/**
 * Every stored text of the operator the rule would read differently from today, whatever
 * reads it today (a built-in rule, another taught one, none) and whatever became of it: a
 * taught rule is consulted before the built-in ones, so the new texts in that wording would be
 * read its way. Of those, an activation reads again only the ones nothing proved (`rereadable`):
 * a rule never changes what already happened. `money_received_as_proof` marks a text read
 * today as money received that the rule would read as a confirming kind (refused).
 */
export function tryWordingRule(rule: Rule, operator: Operator, messages: readonly StoredText[]): TrialRead[] {
  const reads: TrialRead[] = [];
  for (const m of messages) {
    if (m.operator !== operator) continue;
    const after = parseMessage(operator, m.raw_text, [rule]);
    if (after.rule !== rule.id) continue;
    const before: StoredReading = {
      kind: m.kind,
      rule: m.rule,
      direction: m.direction,
      amount: m.amount,
      fee: m.fee,
      balance_after: m.balance_after,
      operator_ref: m.operator_ref,
      counterparty_msisdn: m.counterparty_msisdn,
    };
    if (!readsDifferently(before, after)) continue;
    reads.push({
      message_id: m.id,
      outcome: m.outcome,
      before,
      after,
      rereadable: REREADABLE_OUTCOMES.includes(m.outcome),
      money_received_as_proof: isMoneyReceived(before) && isConfirmingKind(after.kind),
    });
  }
  return reads;
}
