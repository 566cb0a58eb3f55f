// A wording rule proposed from one example text: the values the parser knows how to read
// (amounts with their currency, the operators' reference shapes, phone numbers, names after
// their usual words, balances and fees after their labels) become slots of a template in the
// admin wording rules' own format (wording-rules.ts); dates and other numbers become `{date}`
// and `{any}`; the rest is the wording's literal text. The person who teaches the wording
// gives the kind and the direction and corrects any slot; the proposal is only a draft.
//
// Each slot is checked against the example before it is proposed: the draft is compiled and
// read on its own example, and a slot whose reading is not the value it covers is proposed as
// `{any}` instead (a wrong value is never proposed, at worst a missing one).

import { CURRENCY, NUMBER, PLACEHOLDER, PHONE, readMoney, readMsisdn, readName, readRef } from "./fields.ts";
import { NUMBER_FORMATS } from "./fields.ts";
import { detectLanguage, normalizeText } from "./normalize.ts";
import { parseMessage } from "./parse.ts";
import { blankPromotions } from "./promo.ts";
import type { Direction, Language, MessageKind, Operator, ParsedMessage } from "./types.ts";
import {
  compileWordingRule,
  MAX_TEMPLATE_LENGTH,
  templateProblems,
  type TemplateProblem,
  type TemplateSlot,
} from "./wording-rules.ts";

export interface ProposalInput {
  operator: Operator;
  text: string;
  kind: MessageKind | null;
  direction: Direction | null;
}

/** A slot of the proposal and the piece of the example it covers. */
export interface ProposedSlot {
  slot: TemplateSlot;
  /** Start and end (exclusive) in `example`. */
  start: number;
  end: number;
  value: string;
}

export interface Proposal {
  /** The example as the parser sees it (whitespace collapsed): the spans index into it. */
  example: string;
  template: string;
  language: Language;
  slots: ProposedSlot[];
  /** What keeps the draft from being saved as it is (e.g. a deposit whose number was not found). */
  problems: TemplateProblem[];
  /** The draft read on its own example, as the parser would read it once active. */
  reading: ParsedMessage | null;
}

/**
 * Kinds whose wordings read no value (notices, offers, templates, mini statements, and refusals:
 * no money moved, and the built-in refusal rule reads nothing either).
 */
const READS_NOTHING: readonly (MessageKind | null)[] = [
  "MKT",
  "ADMIN",
  "TPL",
  "FAIL",
  "OPERATOR_A_REC",
  "OPERATOR_B_REC",
];
/** Kinds whose amount is a commission: there the commission's label introduces the amount. */
const COMMISSION_KINDS: readonly (MessageKind | null)[] = ["COM", "COM_SWEEP"];

/** Reference labels of either operator (an external id is the partner's, never read). */
const REF_LABEL = String.raw`(?<!external\s)(?<!externe\s)\b(?:(?:financial )?transaction id|trans(?:action)?\.? id|transasction ref|txn\.? id|transact id|reference|id (?:de )?(?:la )?(?:transaction|tranfert|transfert)|id trans(?:action)?|n(?:o|°|um(?:ero)?)\.? (?:de )?transaction|transaction (?:no|number|ref(?:erence)?)|pay id|ref|id)`;
const LABELLED_REF = new RegExp(
  String.raw`${REF_LABEL}\s*:?\s*(?<v>[A-Za-z0-9]*\d[A-Za-z0-9]*(?:\.[A-Za-z0-9]*\d[A-Za-z0-9]*)*|${PLACEHOLDER})`,
  "gid",
);
/** Orange's reference shape, labelled or not: "CI220822.1921.C04642". */
const REF_SHAPE = /\b[A-Z]{2}\d{6}\.\d{4}\.[A-Z0-9]+\b/dg;
const PHONE_TOKEN = new RegExp(String.raw`(?<![\w.])${PHONE}|\[PHONE[^\]\s]{0,40}\]`, "gid");
const MONEY_TOKEN = new RegExp(
  String.raw`(?<![\w.,])(?:${CURRENCY} ?${NUMBER}|${NUMBER} ?${CURRENCY})(?![\w])(?![,.]?\d)`,
  "gid",
);
/** A labelled number printed without its currency ("Solde:482", "Frais 175"). */
const LABELLED_NUMBER = new RegExp(
  String.raw`\b(?:montant(?: de (?:la )?transaction| transaction)?|amount|transaction amount|frais|fees?(?: paid)?|cout|solde(?: [a-z]+){0,4}|(?:new |current |available )?balance)(?: (?:est|is|de|of))*\s*:?\s*(?<v>${NUMBER})(?![\w,.]?\d)`,
  "gid",
);
const DATE =
  /\b\d{1,4}[-/]\d{1,2}[-/]\d{1,4}(?:[ T]\d{1,2}[:h]\d{2}(?::\d{2})?)?|\b\d{1,2}:\d{2}(?::\d{2})?\b|DATETIME\}?/dg;
const OTHER_NUMBER = new RegExp(
  String.raw`(?<![\w.,])(?:${CURRENCY} ?)?${NUMBER}(?![,.]?\d)(?: ?${CURRENCY})?(?![\w])|${PLACEHOLDER}`,
  "gid",
);

const FEE_LABEL = /(?:\b|(?<=\d))(?:frais|fees?(?: paid| was)?|cout|charges?|access fee)\b[^.;:,\d]{0,12}:?\s*$/i;
const BALANCE_LABEL = /(?<!airtime |gift |bonus |loan |commission |data )\b(?:solde|balance)\b[^.;\d]{0,40}:?\s*$/i;
/** Labels of money that is neither the amount, the fee nor the balance (but a commission's own amount). */
const OTHER_MONEY_WORDS = String.raw`net|taxe?|discount|remise|reduction|bonus|points?|refunded|rembourse[rz]?|airtime balance|gift balance|max(?:imum)? fee`;
const otherMoneyLabel = (words: string) => new RegExp(String.raw`\b(?:${words})\b[^.;\d]{0,30}:?\s*$`, "i");
const OTHER_MONEY_LABEL = otherMoneyLabel(`commission|${OTHER_MONEY_WORDS}`);
const OTHER_MONEY_LABEL_OF_COMMISSION = otherMoneyLabel(OTHER_MONEY_WORDS);

/**
 * Words that end a name printed without brackets: the sentence's own words are lower-case
 * ("a ete", "le 2025-…"), a name's are not ("LYCEE TECHNIQUE DE NYLON"). A full stop ends it
 * too, but the one of an initial or a title followed by more of the name in capitals ("A. TOURE",
 * "J.P. MBARGA", "AMINATOU Epse. SALI"; the text is folded).
 */
const NAME_END =
  /\s+(?:le|la|on|at|a|to|vers|from|de|par|avec|has|have|is|est|reussie?|effectuee?|dans|sur|pour|with|for|en|Date)\b|\.(?!(?<=(?:^|[\s.'-])[A-Z]\.|\b(?:Mr?|Mme|Mlle|Dr|Ste?|Ets|Epse?|Vve|[JS]r|Cie)\.)\s?[A-Z][A-Z.])|[,;:|(]|\s\d|$/;
/**
 * A character of a name: anything but brackets and digits, and digits glued to the rest of a
 * word ("LA VENDEUSE P2M", "NYLON-1er"); a number standing alone is a value, never a name.
 */
const NAME_CHAR = String.raw`(?:[^()\d]|(?<=[^\s\d()]\d*)\d)`;

interface Token {
  slot: TemplateSlot;
  start: number;
  end: number;
}

const overlaps = (a: Token, start: number, end: number) => a.start < end && start < a.end;

/** The region a wording is taught from: promotions before and after left out. */
function region(folded: string, kind: MessageKind | null): [number, number] {
  if (READS_NOTHING.includes(kind)) return [0, folded.length];
  const kept = blankPromotions(folded).keep(folded);
  const start = kept.search(/\S/);
  const end = kept.trimEnd().length;
  return start === -1 ? [0, folded.length] : [start, end];
}

/** Every value of the example as a candidate slot, strongest readings first. */
function findTokens(text: string, folded: string, from: number, to: number, input: ProposalInput): Token[] {
  const tokens: Token[] = [];
  const free = (start: number, end: number) =>
    start >= from && end <= to && !tokens.some((t) => overlaps(t, start, end));
  const add = (slot: TemplateSlot, start: number, end: number) => {
    if (end > start && free(start, end)) tokens.push({ slot, start, end });
  };
  const reads = !READS_NOTHING.includes(input.kind);
  const readsMovement = reads && input.kind !== "BAL";
  const otherMoney = COMMISSION_KINDS.includes(input.kind) ? OTHER_MONEY_LABEL_OF_COMMISSION : OTHER_MONEY_LABEL;

  // References: under a label (the strongest label first: "Ref" is a sender's text at MTN), or
  // in Orange's shape.
  if (readsMovement) {
    const refs = [...folded.matchAll(LABELLED_REF)]
      .map((m) => ({ label: m[0].slice(0, m.indices!.groups!.v[0] - m.index).trim(), span: m.indices!.groups!.v }))
      .filter((r) => r.span[0] >= from && r.span[1] <= to);
    const strong =
      refs.find((r) => !/^(?:ref(?:erence)?|id)\b/i.test(r.label)) ??
      refs.find((r) => /^id\b/i.test(r.label)) ??
      (input.operator === "operator_b" ? refs.find((r) => /^ref(?:erence)?\b/i.test(r.label)) : undefined);
    const shaped = [...text.matchAll(REF_SHAPE)].find((m) => m.index >= from && m.index < to);
    // A reference glued to the next label ("ID:10932256987Frais:0F") ends at its digits.
    if (strong)
      add(
        "ref",
        strong.span[0],
        strong.span[1] - (/(?<=\d)[A-Z][a-z]+$/.exec(text.slice(strong.span[0], strong.span[1]))?.[0].length ?? 0),
      );
    else if (shaped) add("ref", shaped.index, shaped.index + shaped[0].length);
  }
  // Dates first: their digits are neither money nor a number.
  for (const m of folded.matchAll(DATE)) add("date", m.index, m.index + m[0].length);
  // Money: fees and balances after their labels, the amount the first money no label claims.
  if (reads) {
    const money = [
      ...[...folded.matchAll(MONEY_TOKEN)].map((m) => [m.index, m.index + m[0].length] as const),
      ...[...folded.matchAll(LABELLED_NUMBER)].map((m) => m.indices!.groups!.v),
    ].sort((a, b) => a[0] - b[0]);
    for (const [start, end] of money) {
      if (!free(start, end)) continue;
      const before = folded.slice(Math.max(from, start - 45), start);
      const sentence = before.slice(before.search(/[^.;!?|]*$/));
      const has = (s: TemplateSlot) => tokens.some((t) => t.slot === s);
      let slot: TemplateSlot = "number";
      if (otherMoney.test(sentence)) slot = "number";
      else if (FEE_LABEL.test(sentence)) slot = readsMovement && !has("fee") ? "fee" : "number";
      else if (BALANCE_LABEL.test(sentence)) slot = has("balance") ? "number" : "balance";
      else if (readsMovement && !has("amount")) slot = "amount";
      add(slot, start, end);
    }
  }
  // The counterparty's number and name, by the way the money moved.
  if (readsMovement) counterparty(text, folded, from, to, input, tokens, add);
  // Whatever else is a value: masks, codes, other numbers.
  for (const m of folded.matchAll(OTHER_NUMBER))
    add(/^\d/.test(m[0]) ? "number" : "any", m.index, m.index + m[0].length);
  return tokens.sort((a, b) => a.start - b.start);
}

/** The words that introduce the other party, by direction: whom money went to, or came from. */
const TOWARD =
  /\b(?:to|vers|a|au|at|chez|aupres de(?: l'?)? ?agent|pour|by|via agent|par le|paiement(?: reussi)? de|other msisdn)\s*:?\s*(?:le\s+|numero\s+)?$/i;
const FROM =
  /\b(?:de|du|from|par|venant de|initiated by|initie pour|by|of|sur|other msisdn)\s*:?\s*(?:le\s+|numero\s+)?$/i;
/** The wallet's own holder ("Vous, NAME (number) avez", "You NAME (number) have"). */
const OWN = /\b(?:[Vv]ous\s*,\s*[^()]{1,60}|You\s+(?:\[NAME\]|\p{Lu}[^()]{0,60}))\(\s*$/u;

function counterparty(
  text: string,
  folded: string,
  from: number,
  to: number,
  input: ProposalInput,
  tokens: Token[],
  add: (slot: TemplateSlot, start: number, end: number) => void,
): void {
  // A deposit's other party is its customer: the number it went to, or (the credited wallet's
  // copy) the one it came from; a reversal's, the one the returned transfer went to; otherwise
  // the direction says which.
  const cues =
    input.kind === "DEP" || input.kind === "REV" ? [TOWARD, FROM] : input.direction === "in" ? [FROM] : [TOWARD];
  for (const cue of cues) if (counterpartyBy(cue, text, folded, from, to, tokens, add)) return;
}

function counterpartyBy(
  cue: RegExp,
  text: string,
  folded: string,
  from: number,
  to: number,
  tokens: Token[],
  add: (slot: TemplateSlot, start: number, end: number) => void,
): boolean {
  const lead = (start: number) => folded.slice(Math.max(from, start - 140), start);
  // A number right after the direction's word, or in brackets after a name that follows it.
  const phones = [...folded.matchAll(PHONE_TOKEN)]
    .map((m) => ({ start: m.index, end: m.index + m[0].length }))
    .filter((p) => p.start >= from && p.end <= to && !tokens.some((t) => overlaps(t, p.start, p.end)))
    .filter((p) => !OWN.test(lead(p.start)))
    .filter((p) => {
      const before = lead(p.start);
      if (cue.test(before)) return true;
      const bracket = /^(?<pre>.*?)\s*[^()\s][^()]{0,120}\(\s*$/s.exec(before);
      return bracket !== null && /\(\s*$/.test(before) && bracketCue(before, cue);
    });
  const best = phones[0];
  if (best) add("phone", best.start, best.end);
  // The name: in front of the number's brackets ("NAME (number)"), after the number ("number
  // NAME"), or after the direction's word when no number is printed.
  const name = best ? nameAround(text, folded, from, to, best) : null;
  const found = name ?? nameAfterCue(text, folded, from, to, cue, tokens);
  if (found && !tokens.some((t) => overlaps(t, found[0], found[1]))) add("name", found[0], found[1]);
  return best !== undefined || found !== null;
}

/** "… to NAME (" : the direction's word before the name in front of the brackets. */
function bracketCue(before: string, cue: RegExp): boolean {
  const inFront = before.replace(/\s*\(\s*$/, "");
  for (let i = inFront.length - 1; i > Math.max(0, inFront.length - 121); i -= 1) {
    if (inFront[i] === ")" || inFront[i] === "(") return false;
    if (inFront[i - 1] === " " && cue.test(inFront.slice(0, i))) return true;
  }
  return false;
}

function nameAround(
  text: string,
  folded: string,
  from: number,
  to: number,
  phone: { start: number; end: number },
): [number, number] | null {
  const before = folded.slice(Math.max(from, phone.start - 121), phone.start);
  const bracket = new RegExp(String.raw`(?<n>(?:(?![,;:])${NAME_CHAR}){1,120}?)\s*\(\s*$`, "d").exec(before);
  if (bracket) {
    const offset = phone.start - before.length;
    const [start0, e] = bracket.indices!.groups!.n;
    let s = start0;
    const lead = nameBeforeInside(text).exec(folded.slice(offset + s, offset + e));
    if (lead) s += lead.index + lead[0].length;
    const span = trimSpan(text, offset + s, offset + e);
    if (span && isName(text.slice(span[0], span[1]))) return span;
  }
  const after = folded.slice(phone.end, to);
  const m =
    /^[\s,]+(?!(?:le|la|on|at|a|to|vers|from|de|par|avec|has|have|is|est)\b)(?<n>[^\d()]{1,120}?)(?=\s+(?:to|vers|reussie?|a|le|avec|has|on|par|from|de)\b|[.,;:|]|\s*$)/d.exec(
      after,
    );
  if (m) {
    const span = trimSpan(text, phone.end + m.indices!.groups!.n[0], phone.end + m.indices!.groups!.n[1]);
    if (span && isName(text.slice(span[0], span[1]))) return span;
  }
  return null;
}

/**
 * The last word of a counterparty's introduction inside a bracketed name's lead ("recus de "):
 * a word of the sentence, so in lower case ("BOUTIQUE DE LA PAIX", "MASTER AGENT DOUALA" are
 * names), but in a text printed all in capitals.
 */
const NAME_BEFORE = String.raw`^.*\b(?:de|du|from|to|vers|a|au|at|par|of|by|chez|agent|pour)\s+(?=\S)`;
const NAME_BEFORE_INSIDE = new RegExp(NAME_BEFORE);
const NAME_BEFORE_INSIDE_CAPITALS = new RegExp(NAME_BEFORE, "i");
const nameBeforeInside = (text: string) => (/\p{Ll}/u.test(text) ? NAME_BEFORE_INSIDE : NAME_BEFORE_INSIDE_CAPITALS);

function nameAfterCue(
  text: string,
  folded: string,
  from: number,
  to: number,
  cue: RegExp,
  tokens: readonly Token[],
): [number, number] | null {
  const words = /\b(?:de|du|from|to|vers|a|au|par|of|by|chez|aupres de(?: l'?)? ?agent|pour)\s+/gi;
  for (const m of folded.slice(from, to).matchAll(words)) {
    const start = from + m.index + m[0].length;
    if (!cue.test(folded.slice(from, start))) continue;
    const rest = folded.slice(start, to);
    const end = NAME_END.exec(rest);
    const span = trimSpan(text, start, start + (end ? end.index : rest.length));
    if (!span || tokens.some((t) => overlaps(t, span[0], span[1]))) continue;
    const name = text.slice(span[0], span[1]);
    // A name starts with a capital or is a mask; a lower-case word is the sentence going on.
    if (isName(name) && (name === "[NAME]" || /^\p{Lu}[\p{L}\d'.&_?-]*(?: [\p{L}\d'.&_?-]+){0,8}$/u.test(name)))
      return span;
  }
  return null;
}

function trimSpan(text: string, start: number, end: number): [number, number] | null {
  while (start < end && /[\s,;:]/.test(text[start])) start += 1;
  while (end > start && /[\s,;:]/.test(text[end - 1])) end -= 1;
  return end > start ? [start, end] : null;
}

const isName = (s: string) =>
  s === "[NAME]" ||
  (readName(s).state === "value" &&
    /\p{L}{2}/u.test(s) &&
    !/(?:^|[\s(])\d/.test(s) &&
    !/\b(?:solde|balance|montant|amount|frais|fees?|ref(?:erence)?|id|transaction)\b/i.test(s));

/** The template of the example with the tokens as slots. */
function template(text: string, from: number, to: number, tokens: readonly Token[]): string {
  let out = "";
  let at = from;
  for (const t of tokens) {
    out += literalOf(text.slice(at, t.start)) + `{${t.slot}}`;
    at = t.end;
  }
  return (out + literalOf(text.slice(at, to))).trim();
}

/** Literal text: a programmer's `{slot}` left in the text is a value, never a slot. */
const literalOf = (s: string) => s.replace(/[{}]/g, " ");

/** What the slot's piece of the example reads as (null: nothing the slot would read). */
function valueOf(slot: TemplateSlot, raw: string, operator: Operator): string | number | null {
  const r =
    slot === "amount" || slot === "fee" || slot === "balance"
      ? readMoney(raw, NUMBER_FORMATS[operator])
      : slot === "ref"
        ? readRef(raw)
        : slot === "phone"
          ? readMsisdn(raw)
          : slot === "name"
            ? readName(raw)
            : null;
  return r?.state === "value" ? r.value : null;
}

const FIELD_OF: Partial<Record<TemplateSlot, keyof ParsedMessage>> = {
  amount: "amount",
  fee: "fee",
  balance: "balance_after",
  ref: "operator_ref",
  phone: "counterparty_msisdn",
  name: "counterparty_name",
};

/** Proposes a template from one example (pure: the caller stores nothing until the person saves). */
export function proposeTemplate(input: ProposalInput): Proposal {
  const norm = normalizeText(input.text);
  const { text, folded } = norm;
  const language = detectLanguage(folded) ?? "fr";
  const [from, end] = region(folded, input.kind);
  let to = end;
  let tokens = findTokens(text, folded, from, to, input);
  // A template has a length limit: a long example is taught from its start, cut at a word.
  if (to - from > MAX_TEMPLATE_LENGTH - 100) {
    const last = tokens.filter((t) => t.slot !== "any" && t.slot !== "date").at(-1);
    to = Math.max(last ? last.end : from, Math.min(to, from + MAX_TEMPLATE_LENGTH - 100));
    to = Math.max(last ? last.end : from, text.lastIndexOf(" ", to) > from ? text.lastIndexOf(" ", to) : to);
    tokens = tokens.filter((t) => t.end <= to);
  }
  // Check each slot on the example: one that reads something else is only `{any}`.
  for (let round = 0; round < 4; round += 1) {
    const tpl = template(text, from, to, tokens);
    const spec = { operator: input.operator, kind: input.kind, language, direction: input.direction, template: tpl };
    if (
      templateProblems(spec).some(
        (p) =>
          p !== "deposit_needs_amount_ref_and_phone" && p !== "balance_needs_balance" && p !== "movement_needs_amount",
      )
    )
      break;
    const reading = readsOwnExample(spec, text);
    const wrong = tokens.filter((t) => {
      const field = FIELD_OF[t.slot];
      return (
        field !== undefined &&
        reading !== null &&
        reading[field] !== valueOf(t.slot, text.slice(t.start, t.end), input.operator)
      );
    });
    if (reading === null || wrong.length === 0) break;
    tokens = tokens.map((t) => (wrong.includes(t) ? { ...t, slot: "any" } : t));
  }
  const tpl = template(text, from, to, tokens);
  const spec = { operator: input.operator, kind: input.kind, language, direction: input.direction, template: tpl };
  const problems = templateProblems(spec);
  return {
    example: text,
    template: tpl,
    language,
    slots: tokens.filter((t) => t.slot !== "any").map((t) => ({ ...t, value: text.slice(t.start, t.end) })),
    problems,
    reading: problems.length === 0 ? readsOwnExample(spec, text) : null,
  };
}

/** The draft read on its example; null when its own problems keep it from compiling. */
function readsOwnExample(
  spec: {
    operator: Operator;
    kind: MessageKind | null;
    language: Language;
    direction: Direction | null;
    template: string;
  },
  text: string,
): ParsedMessage | null {
  const relaxed = { ...spec, kind: spec.kind === "DEP" || spec.kind === "BAL" ? null : spec.kind };
  if (templateProblems(relaxed).length > 0) return null;
  const rule = compileWordingRule(relaxed, "taught.proposal.draft.v0");
  const read = parseMessage(spec.operator, text, [rule]);
  return read.rule === rule.id ? { ...read, kind: spec.kind } : null;
}

/**
 * Where each reading slot of a template (one the person corrected) reads the example: the
 * span of its value in the example (whitespace collapsed), as the compiled rule finds it.
 */
export function slotSpans(
  spec: {
    operator: Operator;
    kind: MessageKind | null;
    language: Language;
    direction: Direction | null;
    template: string;
  },
  text: string,
): ProposedSlot[] {
  const relaxed = { ...spec, kind: spec.kind === "DEP" || spec.kind === "BAL" ? null : spec.kind };
  if (templateProblems(relaxed).length > 0) return [];
  const rule = compileWordingRule(relaxed, "taught.proposal.spans.v0");
  const norm = normalizeText(text);
  const out: ProposedSlot[] = [];
  for (const [slot, field] of Object.entries(FIELD_OF) as [TemplateSlot, keyof ParsedMessage][]) {
    const re = rule.fields?.[field as keyof typeof rule.fields];
    if (!re) continue;
    re.lastIndex = 0;
    const span = re.exec(norm.folded)?.indices?.groups?.v;
    re.lastIndex = 0;
    if (span) out.push({ slot, start: span[0], end: span[1], value: norm.text.slice(span[0], span[1]) });
  }
  return out.sort((a, b) => a.start - b.start);
}
