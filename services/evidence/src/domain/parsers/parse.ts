// Entry point: decide the kind of an operator SMS and read its fields.

import { type NumberFormat, NUMBER_FORMATS, readMoney, readMsisdn, readName, readRef, type Reading } from "./fields.ts";
import { detectLanguage, normalizeText, type NormalizedText } from "./normalize.ts";
import { OPERATOR_A_RULES } from "./operator-a.rules.ts";
import { OPERATOR_B_RULES } from "./operator-b.rules.ts";
import { promoCut } from "./promo.ts";
import { LABELLED_FIELDS, SHARED_FIRST, SHARED_LAST, UNRECOGNISED } from "./shared.rules.ts";
import {
  FIELD_NAMES,
  type FieldName,
  type MessageKind,
  type Operator,
  type ParsedMessage,
  type Rule,
} from "./types.ts";

/**
 * Longer texts are not SMS (a concatenated SMS tops out near 1,600 characters); refusing them
 * keeps the lazy patterns' cost bounded on hostile input.
 */
export const MAX_TEXT_LENGTH = 4000;

const EMPTY: ParsedMessage = Object.freeze({
  kind: null,
  amount: null,
  fee: null,
  commission: null,
  balance_after: null,
  operator_ref: null,
  counterparty_msisdn: null,
  counterparty_name: null,
  direction: null,
  language: null,
  rule: null,
});

/** The rule id of a text no wording recognised (kind null; labelled values read). */
export const UNRECOGNISED_RULE = UNRECOGNISED.id;

const RULES: Readonly<Record<Operator, readonly Rule[]>> = {
  operator_a: checkRules([...SHARED_FIRST, ...OPERATOR_A_RULES.map(atAnySentence), ...SHARED_LAST, UNRECOGNISED]),
  operator_b: checkRules([...SHARED_FIRST, ...OPERATOR_B_RULES.map(atAnySentence), ...SHARED_LAST, UNRECOGNISED]),
};

/**
 * A wording written to start a text ("^Depot recu ...") also starts after a promotion glued
 * before it, with or without punctuation between ("... Dial *126# Depot recu 3250F de ...").
 * Its fields are read from the start of the match, so the promotion is left out.
 */
function atAnySentence(rule: Rule): Rule {
  if (!rule.match.source.startsWith("^")) return rule;
  const source = String.raw`(?<![^\s.!?|:])` + rule.match.source.slice(1);
  return { ...rule, match: new RegExp(source, rule.match.flags) };
}

/** The rules applied to an operator's texts, in evaluation order (for diagnostics and tests). */
export function rulesFor(operator: Operator): readonly Rule[] {
  return RULES[operator];
}

export function parseMessage(operator: Operator, text: string): ParsedMessage {
  if (text.length > MAX_TEXT_LENGTH) return { ...EMPTY, rule: "too_long" };
  const norm = normalizeText(text);
  if (norm.text === "") return { ...EMPTY };
  for (const rule of RULES[operator]) {
    const m = rule.match.exec(norm.folded);
    if (m) return applyRule(rule, m.index, m.index + m[0].length, norm, NUMBER_FORMATS[operator]);
  }
  return { ...EMPTY };
}

/**
 * What a text would give if no wording recognised it: the labelled values only, kind null
 * (diagnostics: measures what auto-confirming unrecognised texts would risk).
 */
export function parseAsUnrecognised(operator: Operator, text: string): ParsedMessage {
  if (text.length > MAX_TEXT_LENGTH) return { ...EMPTY, rule: "too_long" };
  const norm = normalizeText(text);
  return applyRule(UNRECOGNISED, 0, 0, norm, NUMBER_FORMATS[operator]);
}

/**
 * Only a DEP can confirm a transfer. An unrecognised text (kind null) is a possible deposit
 * that waits for a person: nothing in it proves it is one.
 */
export function canConfirm(kind: MessageKind | null): boolean {
  return kind === "DEP";
}

/** Only a balance reply confirms a balance check. */
export function canConfirmBalance(kind: MessageKind | null): boolean {
  return kind === "BAL";
}

const MOVEMENTS: ReadonlySet<MessageKind> = new Set<MessageKind>([
  "UV_OUT",
  "UV_IN",
  "FLOAT_OUT",
  "FLOAT_IN",
  "UV_WITH",
  "FLOAT_WITH",
  "AIRTIME",
  "COM_SWEEP",
  "REV",
]);

/** Money moved that no operation asked for: listed as a movement, never matched. */
export function isMovement(kind: MessageKind | null): boolean {
  return kind !== null && MOVEMENTS.has(kind);
}

// ---------------------------------------------------------------------------------------

function applyRule(
  rule: Rule,
  matchStart: number,
  matchEnd: number,
  norm: NormalizedText,
  format: NumberFormat,
): ParsedMessage {
  const base: ParsedMessage = {
    ...EMPTY,
    kind: rule.kind,
    direction: rule.direction ?? null,
    language: rule.language ?? detectLanguage(norm.folded),
    rule: rule.id,
  };
  if (!rule.fields) return base;
  // Promotions glued before the wording are left out by starting at the match; those glued
  // after are cut at their first sentence.
  const body = { start: matchStart, end: promoCut(norm.folded, matchEnd) };
  const readings = readFields(rule, norm, body, format);
  // A wording whose main value is an unfilled slot proves nothing: it is a template.
  if (readings[primaryField(rule)].state === "hole")
    return { ...base, kind: "TPL", direction: null, rule: `${rule.id}/unfilled` };
  const out: ParsedMessage = { ...base };
  for (const name of FIELD_NAMES) setField(out, name, readings[name]);
  return out;
}

/** The value a wording exists to carry: the balance of a balance reply, else the amount. */
function primaryField(rule: Rule): FieldName {
  return rule.kind === "BAL" ? "balance_after" : "amount";
}

function setField(out: ParsedMessage, name: FieldName, reading: Reading<number | string>): void {
  const v = reading.state === "value" ? reading.value : null;
  if (name === "amount" || name === "fee" || name === "commission" || name === "balance_after")
    out[name] = typeof v === "number" ? v : null;
  else out[name] = typeof v === "string" ? v : null;
}

type Readings = Record<FieldName, Reading<number | string>>;

function readFields(
  rule: Rule,
  norm: NormalizedText,
  body: { start: number; end: number },
  format: NumberFormat,
): Readings {
  const folded = norm.folded.slice(body.start, body.end);
  const text = norm.text.slice(body.start, body.end);
  const readings = {} as Readings;
  for (const name of FIELD_NAMES) {
    const re = rule.fields?.[name];
    const read = readerFor(name, format);
    // A field the wording reads but finds under none of its labels: the operator printed it
    // under another of its labels ("N° de transaction" for "ID transaction").
    const fallback = LABELLED_FIELDS[name];
    readings[name] = re
      ? (readAll(re, folded, text, read) ?? (fallback && readAll(fallback, folded, text, read)) ?? UNREADABLE)
      : UNREADABLE;
  }
  return readings;
}

function readerFor(name: FieldName, format: NumberFormat): (raw: string) => Reading<number | string> {
  switch (name) {
    case "amount":
    case "fee":
    case "commission":
    case "balance_after":
      return (raw) => readMoney(raw, format);
    case "operator_ref":
      return readRef;
    case "counterparty_msisdn":
      return readMsisdn;
    case "counterparty_name":
      return readName;
  }
}

/**
 * Every occurrence of the pattern must read the same value. Two different values (a sender's
 * message that repeats a label, say) or one unreadable occurrence make the field unreadable:
 * picking one would be a guess. The value is cut from the un-folded text so names keep their
 * accents.
 */
function readAll(
  re: RegExp,
  folded: string,
  text: string,
  read: (raw: string) => Reading<number | string>,
): Reading<number | string> | null {
  const found: Reading<number | string>[] = [];
  for (const m of folded.matchAll(re)) {
    const span = m.indices?.groups?.v;
    if (span) found.push(read(text.slice(span[0], span[1])));
  }
  return found.length === 0 ? null : combine(found);
}

const UNREADABLE: Reading<never> = { state: "unreadable" };

function combine(found: readonly Reading<number | string>[]): Reading<number | string> {
  if (found.some((r) => r.state === "unreadable")) return UNREADABLE;
  const values = found.flatMap((r) => (r.state === "value" ? [r.value] : []));
  if (values.length === 0) return { state: "hole" };
  if (values.length < found.length) return { state: "unreadable" }; // a value and a hole disagree
  return new Set(values).size === 1 ? { state: "value", value: values[0] } : { state: "unreadable" };
}

/**
 * Fails fast at load when a rule is malformed, so that a new wording with a missing `v`
 * group or a global `match` cannot silently read nothing.
 */
function checkRules(rules: readonly Rule[]): readonly Rule[] {
  const ids = new Set<string>();
  for (const rule of rules) {
    if (ids.has(rule.id)) throw new Error(`duplicate parser rule id ${rule.id}`);
    ids.add(rule.id);
    if (rule.match.global || rule.match.sticky) throw new Error(`rule ${rule.id}: match must not be global or sticky`);
    for (const [name, re] of Object.entries(rule.fields ?? {})) {
      if (!re.global || !re.hasIndices || !re.source.includes("(?<v>"))
        throw new Error(`rule ${rule.id}: field ${name} needs flags "gd" and a (?<v>...) group`);
    }
  }
  return rules;
}
