// Entry point: decide the kind of an operator SMS and read its fields.

import {
  type NumberFormat,
  CURRENCY,
  NUMBER,
  NUMBER_FORMATS,
  PHONE,
  readMoney,
  readMsisdn,
  readName,
  readRef,
  type Reading,
} from "./fields.ts";
import { detectLanguage, normalizeText, type NormalizedText } from "./normalize.ts";
import { OPERATOR_A_RULES } from "./operator-a.rules.ts";
import { OPERATOR_B_RULES } from "./operator-b.rules.ts";
import { blankPromotions, promoCut } from "./promo.ts";
import { kindFromCues, namesAMovement } from "./cues.ts";
import { FAIL_MATCH, LABELLED_FIELDS, NOTICES, NOTICE, REFUSALS, SHARED_FIRST, UNRECOGNISED } from "./shared.rules.ts";
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

/** The built-in wordings of each operator (the shipped defaults). */
const BUILT_IN: Readonly<Record<Operator, readonly Rule[]>> = {
  operator_a: OPERATOR_A_RULES.map(atAnySentence),
  operator_b: OPERATOR_B_RULES.map(atAnySentence),
};
checkRules([...SHARED_FIRST, ...BUILT_IN.operator_a, ...REFUSALS, ...NOTICES, NOTICE, UNRECOGNISED]);
checkRules([...SHARED_FIRST, ...BUILT_IN.operator_b, ...REFUSALS, ...NOTICES, NOTICE, UNRECOGNISED]);

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

/**
 * The rules applied to an operator's texts, in evaluation order (for diagnostics and tests);
 * receipts recognised by their cues come between the refusals and the notices.
 */
export function rulesFor(operator: Operator, taught: readonly Rule[] = []): readonly Rule[] {
  return [...SHARED_FIRST, ...taught, ...BUILT_IN[operator], ...REFUSALS, ...NOTICES, NOTICE, UNRECOGNISED];
}

/**
 * Decides the kind of a text and reads its fields. `taught` are the operator's wording rules
 * activated at run time (wording-rules.ts): tried before the built-in ones, since they were
 * written for wordings the built-in rules did not read.
 */
export function parseMessage(operator: Operator, text: string, taught: readonly Rule[] = []): ParsedMessage {
  if (text.length > MAX_TEXT_LENGTH) return { ...EMPTY, rule: "too_long" };
  const norm = normalizeText(text);
  if (norm.text === "") return { ...EMPTY };
  const format = NUMBER_FORMATS[operator];
  const first = firstMatch([...SHARED_FIRST, ...taught, ...BUILT_IN[operator], ...REFUSALS], norm, format);
  return first ?? byCues(norm, format) ?? notice(norm, format);
}

/**
 * What shows no receipt: an offer or a notice by their words; a notice too when it says
 * something (a sentence of some words) with no word and no value of an operation ("Dear
 * Customer, your phone is eSIM compatible…"); else an unrecognised text (kind null) for a
 * person, with its labelled values. A reworded receipt whose values cannot be read still names
 * an operation or prints a number: it stays unrecognised, counted by the alert on a changed
 * wording.
 */
function notice(norm: NormalizedText, format: NumberFormat): ParsedMessage {
  const byWords = firstMatch(NOTICES, norm, format);
  if (byWords) return byWords;
  if (saysNothingOfAnOperation(norm.folded)) return applyRule(NOTICE, 0, 0, norm, format);
  return firstMatch([UNRECOGNISED], norm, format) ?? { ...EMPTY };
}

/**
 * A text of at least a few words with no value of an operation (an amount in a currency, a
 * labelled amount, reference or balance even masked, an operator reference's shape, a phone
 * number, any other number of three digits or more but a code to dial, a number to call, a date
 * or a time) and
 * no word of one (a verb of a movement, or operation, transaction, payment, balance, amount…).
 */
function saysNothingOfAnOperation(folded: string): boolean {
  const text = folded.toLowerCase();
  if ((text.match(/\p{L}+/gu) ?? []).length < NOTICE_MIN_WORDS) return false;
  const numbers = text.replace(DIALLED, " ");
  // `search` starts at 0 and leaves a global pattern's lastIndex as it was.
  const values = [
    CURRENCY_AMOUNT,
    PHONE_ANYWHERE,
    REF_SHAPES,
    LABELLED_HOLE,
    LABELLED_FIELDS.amount!,
    LABELLED_FIELDS.balance_after!,
    UNRECOGNISED.fields!.operator_ref!,
  ].some((re) => folded.search(re) !== -1);
  return !values && !/\d{3}/.test(numbers) && !OPERATION_WORDS.test(text) && !namesAMovement(text);
}

const NOTICE_MIN_WORDS = 6;
/**
 * Numbers that are no value of an operation: a code to dial or a number to call ("*126*21#",
 * "dial 8449", "appelez le 8010"), a date or a time ("27/03/2026", "2026-09-15", "10:30").
 */
const DIALLED =
  /[*#][\d*#]+|\b(?:call|dial|appele[rz]?|compose[rz]?|tape[rz]?)\s+(?:le\s+)?\d+|\b\d{1,4}[/-]\d{1,2}[/-]\d{1,4}\b|\b\d{1,2}[:h]\d{2}\b/g;
/** Words of an operation that are not the verbs of a movement (cues.ts has those). */
const OPERATION_WORDS =
  /\b(?:operations?|transactions?|paiements?|payments?|achats?|purchases?|solde|balance|montant|amount|debit(?:e|ed)?|factures?|bills?)\b/;
/** A label followed by a mask ("Transaction ID: [TXN_ID]", "Montant: [AMOUNT]"). */
const LABELLED_HOLE =
  /\b(?:montant|amount|solde|balance|ref(?:erence)?|(?:transaction|trans\.?|txn) id|id)\b\s*:?\s*\[/i;

/**
 * The text read as if no wording of its operator were known: refusals, cues, notices
 * (diagnostics: measures how the cues alone fare on wordings no rule was written for).
 */
export function parseWithoutWordings(operator: Operator, text: string): ParsedMessage {
  const norm = normalizeText(text.slice(0, MAX_TEXT_LENGTH));
  const format = NUMBER_FORMATS[operator];
  return firstMatch([...SHARED_FIRST, ...REFUSALS], norm, format) ?? byCues(norm, format) ?? notice(norm, format);
}

function firstMatch(rules: readonly Rule[], norm: NormalizedText, format: NumberFormat): ParsedMessage | null {
  for (const rule of rules) {
    const m = rule.match.exec(norm.folded);
    if (!m) continue;
    // A wording of a receipt or a balance reply never reads a text that says the operation
    // failed or was refused ("Le depot de … a echoue", "insufficient balance"): the refusal
    // decides, whatever the operator's words around it. Promotions are not left out here: a
    // word of failure anywhere outside the sender's message is enough.
    if (rule.kind !== "FAIL" && rule.kind !== "TPL" && rule.fields && refuses(norm)) continue;
    // A balance sentence inside a receipt ("Vous avez recu 260000.0 FCFA ... Le solde de votre
    // compte est de ...") is no balance reply: a BAL wording never reads a text that moves money.
    if (rule.kind === "BAL" && showsMovement(norm, format)) continue;
    return applyRule(rule, m.index, m.index + m[0].length, norm, format);
  }
  return null;
}

/** Words of failure or refusal outside the sender's own message. */
function refuses(norm: NormalizedText): boolean {
  return FAIL_MATCH.test(blankSenderText(norm.folded));
}

/**
 * The text moves money: promotions and the sender's message left out, it prints an amount no
 * balance or fee label introduces, and the verb of an operation.
 */
function showsMovement(norm: NormalizedText, format: NumberFormat): boolean {
  const blank = blankPromotions(norm.folded);
  const folded = blank.keep(norm.folded);
  return verbAmount(folded, blank.keep(norm.text), format) !== null && namesAMovement(blankSenderText(folded));
}

/**
 * A receipt no wording recognised, read from its labelled values with its promotions left
 * out, its kind from its verbs (cues.ts). Null when the text shows no receipt: the notices
 * and promotions then decide.
 */
function byCues(norm: NormalizedText, format: NumberFormat): ParsedMessage | null {
  const blank = blankPromotions(norm.folded);
  const folded = blank.keep(norm.folded);
  const text = blank.keep(norm.text);
  const read = (name: FieldName) =>
    valueOf(readAll(UNRECOGNISED.fields![name]!, folded, text, readerFor(name, format)) ?? UNREADABLE);
  const unlabelled = verbAmount(folded, text, format);
  const amount = read("amount") ?? (unlabelled?.state === "value" ? unlabelled.value : null);
  const balance = read("balance_after");
  const ref = read("operator_ref") ?? shapedRef(folded, text);
  const fee = read("fee");
  // MTN's 11-digit reference has a phone number's shape.
  const phones = [...new Set([...folded.matchAll(PHONE_ANYWHERE)].map((m) => m[0].replace(/^\+/, "")))].filter(
    (n) => n !== ref,
  );
  const payee = [...new Set([...folded.matchAll(PAYEE)].map((m) => m.groups!.v.replace(/^\+/, "")))];
  const sender = [...new Set([...folded.matchAll(SENDER)].map((m) => m.groups!.v.replace(/^\+/, "")))];
  const cue = kindFromCues(blankSenderText(folded), {
    amount: typeof amount === "number" ? amount : null,
    amountPrinted: amount !== null || unlabelled !== null,
    balance_after: typeof balance === "number" ? balance : null,
    operator_ref: typeof ref === "string" ? ref : null,
    phones,
    payee: payee.length === 1 ? payee[0] : null,
    sender: sender.length === 1 ? sender[0] : null,
    promotion: folded !== norm.folded,
  });
  if (!cue.receipt) return null;
  return {
    ...EMPTY,
    kind: cue.kind,
    amount: typeof amount === "number" ? amount : null,
    fee: typeof fee === "number" ? fee : null,
    balance_after: typeof balance === "number" ? balance : null,
    operator_ref: typeof ref === "string" ? ref : null,
    counterparty_msisdn: cue.counterparty,
    direction: cue.direction,
    language: detectLanguage(norm.folded),
    // A receipt of no kind is the contract's possible deposit: an orphan for a person.
    rule: cue.kind === null ? UNRECOGNISED.id : `cues.${cue.kind.toLowerCase()}`,
  };
}

/**
 * The free text a sender or an agent typed ("Message from sender: Withdraw from Betpawa."),
 * up to the end of its sentence: not the operator's words, so its verbs do not count (its
 * labelled values are read as before: the operator's own label may follow an empty message).
 */
const SENDER_TEXT =
  /\b(?:message (?:from (?:the )?(?:sender|agent)|to (?:the )?receiver|de l'expediteur|du destinataire|de l'agent)|message|motif|reason) ?:(?<v>.*?)(?=\. |\||$)/dgi;

function blankSenderText(folded: string): string {
  return folded.replace(
    SENDER_TEXT,
    (all: string, v: string) => all.slice(0, all.length - v.length) + " ".repeat(v.length),
  );
}

const PHONE_ANYWHERE = new RegExp(String.raw`(?<![\w.])${PHONE}`, "g");
/** The number money went to: after "vers", "to", "au", "a", "pour" (and "le", "numero"). */
const PAYEE = new RegExp(String.raw`\b(?:vers|to|au|a|pour)\s+(?:le\s+)?(?:numero\s+)?(?<v>${PHONE})`, "gi");
/**
 * The number money came from: after "de", "du", "from", "venant de" — a phone number or an
 * agent's code of six or seven digits.
 */
const SENDER = new RegExp(
  String.raw`\b(?:de|du|from)\s+(?:le\s+)?(?:numero\s+)?(?<v>${PHONE}|\d{6,7}(?![\dA-Za-z.,]))`,
  "gi",
);
/** An amount with its currency: "recu 2000 FCFA", "transferred XAF 5,000". */
const CURRENCY_AMOUNT = new RegExp(
  String.raw`(?<![\w.,])(?:${CURRENCY} ?${NUMBER}|${NUMBER} ?${CURRENCY})(?![\w])`,
  "gi",
);
/**
 * Labels whose amount is not the operation's: balances, fees, commissions, net totals, taxes,
 * bonus and loyalty purses.
 */
const NOT_THE_AMOUNT =
  /(?:solde|balance|frais|fees?|commission|net|charges|cout|taxe|worth|discount|remise|bonus|points?|fidelite)[^.,;:]{0,30}:?\s*$/i;

/**
 * A receipt's amount where no label names it: the first amount with a currency that no
 * balance, fee or commission label introduces ("Vous avez recu 2000 FCFA de ...").
 */
function verbAmount(folded: string, text: string, format: NumberFormat): Reading<number> | null {
  // Values a balance or fee label introduces, however long the label ("Solde de votre compte
  // principal est de 45 000 FCFA").
  const labelledValues = [LABELLED_FIELDS.balance_after!, LABELLED_FIELDS.fee!].flatMap((re) =>
    [...folded.matchAll(re)].map((m) => m.indices!.groups!.v[0]),
  );
  for (const m of folded.matchAll(CURRENCY_AMOUNT)) {
    if (labelledValues.includes(m.index)) continue;
    if (NOT_THE_AMOUNT.test(folded.slice(Math.max(0, m.index - 40), m.index))) continue;
    return readMoney(text.slice(m.index, m.index + m[0].length), format);
  }
  return null;
}

/** The operators' reference shapes: Orange's "CI220822.1921.C04642", MTN's "ID:10932256987". */
const REF_SHAPES = /\b[A-Z]{2}\d{6}\.\d{4}\.[A-Z0-9]+\b|(?<=\bID\s?:\s?)\d{8,12}\b/g;

function shapedRef(folded: string, text: string): string | null {
  const found = [...new Set([...folded.matchAll(REF_SHAPES)].map((m) => text.slice(m.index, m.index + m[0].length)))];
  return found.length === 1 ? found[0] : null;
}
const valueOf = (r: Reading<number | string>) => (r.state === "value" ? r.value : null);

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

/**
 * The kinds that move money no operation asked for, in the order the movements list's query
 * (and the index of Migration0008HistoryIndexes) spells them.
 */
export const MOVEMENT_KINDS: readonly MessageKind[] = [
  "UV_OUT",
  "UV_IN",
  "FLOAT_OUT",
  "FLOAT_IN",
  "UV_WITH",
  "FLOAT_WITH",
  "AIRTIME",
  "COM_SWEEP",
  "REV",
];
const MOVEMENTS: ReadonlySet<MessageKind> = new Set(MOVEMENT_KINDS);

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
export function checkRules(rules: readonly Rule[]): readonly Rule[] {
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
