// Test support: realistic drift of labelled operator texts. Each kind of drift rewrites a
// real text the way operators reword theirs (new values, separators, currency tokens, case,
// accents, whitespace, promotions glued on, the operator's other labels, fields in another
// order) and says what the parser must still read from it. Deterministic: the same text and
// kind always give the same variant.

import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { NUMBER_FORMATS, parseAmount } from "../fields.ts";
import type { Direction, FieldName, MessageKind, Operator } from "../types.ts";

export interface Labelled {
  id: string;
  operator: Operator;
  kind: MessageKind | null;
  text: string;
  expected: Record<FieldName, string | number | null> & { direction?: Direction | null };
  source?: string;
  split?: "dev" | "heldout" | "fresh" | "constructed";
  /**
   * "with-rules": a real text collected while the rules were being written for it, put in the
   * development part whatever its hash (read while collecting, it cannot measure generalisation).
   */
  collected?: "with-rules";
  country?: string;
}

/**
 * Whether a real text is held out: its SHA-256 starts with a byte divisible by 3 (about a third),
 * decided by the text alone before any rule is written for it (corpus.test.ts).
 */
export const heldoutByHash = (text: string): boolean =>
  createHash("sha256").update(text, "utf8").digest()[0]! % 3 === 0;

/** A JSON-lines file of this folder. */
export function loadTestdata(file: string): Labelled[] {
  return readFileSync(new URL(`./${file}`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Labelled);
}

export const DRIFT_KINDS = [
  "new_numbers",
  "thousands_separators",
  "currency_tokens",
  "letter_case",
  "accents",
  "whitespace",
  "promo_before",
  "promo_after",
  "label_synonyms",
  "field_order",
  "promo_glued_balance",
  "doubled_spaces",
  "balance_order",
] as const;
export type DriftKind = (typeof DRIFT_KINDS)[number];

/** A drifted text, or null when the drift does not apply to it (nothing to rewrite). */
type Drift = (t: Labelled, rnd: () => number, corpus: readonly Labelled[]) => Labelled | null;

/** Every drifted variant of the texts, one per applicable kind of drift. */
export function drifted(texts: readonly Labelled[]): { drift: DriftKind; text: Labelled }[] {
  const out: { drift: DriftKind; text: Labelled }[] = [];
  for (const t of texts) {
    for (const drift of DRIFT_KINDS) {
      const variant = DRIFTS[drift](t, random(`${t.id}/${drift}`), texts);
      if (variant !== null && variant.text !== t.text)
        out.push({ drift, text: { ...variant, id: `${t.id}~${drift}` } });
    }
  }
  return out;
}

function random(seed: string): () => number {
  let s = createHash("sha256").update(seed).digest().readUInt32LE(0);
  return () => {
    // mulberry32
    s = (s + 0x6d2b79f5) | 0;
    let r = Math.imul(s ^ (s >>> 15), 1 | s);
    r = (r + Math.imul(r ^ (r >>> 7), 61 | r)) ^ r;
    return ((r ^ (r >>> 14)) >>> 0) / 4294967296;
  };
}

const MONEY_FIELDS = ["amount", "fee", "balance_after"] as const;

/**
 * Printed numbers: grouped thousands (a no-break space groups them too: "250 000 FCFA") or plain
 * digits, with an optional decimal part.
 */
const NUMBER_TOKEN = /(?<![\d.,])(?:\d{1,3}(?:([,. \u00a0\u202f])\d{3})+|\d+)(?:\.\d{1,4})?(?![\d]|[.,]\d)/g;

/** Rewrites every printed number that reads as one of the given values, in its own style. */
function rewriteMoney(t: Labelled, print: (token: string, value: number, sep: string | undefined) => string | null) {
  const values = new Set(MONEY_FIELDS.map((f) => t.expected[f]).filter((v): v is number => typeof v === "number"));
  let changed = false;
  const text = t.text.replace(NUMBER_TOKEN, (token: string, sep: string | undefined) => {
    const v = parseAmount(token.replace(/[\u00a0\u202f]/g, " "), NUMBER_FORMATS[t.operator]);
    if (v === null || !values.has(v)) return token;
    const out = print(token, v, sep);
    if (out === null) return token;
    changed = changed || out !== token;
    return out;
  });
  return changed ? text : null;
}

function group(digits: string, sep: string): string {
  return digits.replace(/\B(?=(\d{3})+(?!\d))/g, sep);
}

function reprint(token: string, v: number, sep: string | undefined): string {
  const decimals = /\.\d{1,4}$/.test(token) && sep !== "." ? token.slice(token.lastIndexOf(".")) : "";
  return (sep ? group(String(v), sep) : String(v)) + decimals;
}

const newNumbers: Drift = (t, rnd) => {
  const mapping = new Map<number, number>();
  for (const f of MONEY_FIELDS) {
    const v = t.expected[f];
    if (typeof v === "number" && v > 0 && !mapping.has(v)) {
      const digits = String(v).length;
      const low = digits === 1 ? 1 : 10 ** (digits - 1);
      let n = low + Math.floor(rnd() * (10 ** digits - low));
      if (n === v) n = v + 1;
      mapping.set(v, n);
    }
  }
  // Only a value whose printed number was rewritten changes in the labels.
  const rewritten = new Set<number>();
  let text =
    rewriteMoney(t, (token, v, sep) => {
      if (!mapping.has(v)) return null;
      rewritten.add(v);
      return reprint(token, mapping.get(v)!, sep);
    }) ?? t.text;
  const expected = { ...t.expected };
  for (const f of MONEY_FIELDS) {
    const v = t.expected[f];
    if (typeof v === "number" && rewritten.has(v)) expected[f] = mapping.get(v)!;
  }
  // New references and numbers: same shape, other digits.
  for (const f of ["operator_ref", "counterparty_msisdn"] as const) {
    const v = t.expected[f];
    if (typeof v !== "string" || !text.includes(v)) continue;
    const keep = f === "counterparty_msisdn" ? v.length - 6 : 0;
    const next = v.slice(0, keep) + v.slice(keep).replace(/\d/g, () => String(Math.floor(rnd() * 10)));
    text = text.split(v).join(next);
    expected[f] = next;
  }
  return { ...t, text, expected };
};

const thousandsSeparators: Drift = (t) => {
  // operator_a groups with ",", operator_b with a space; a grouped number loses its marks.
  const sep = t.operator === "operator_a" ? "," : " ";
  const text = rewriteMoney(t, (token, v, was) => (v < 1000 ? null : reprint(token, v, was ? undefined : sep)));
  return text === null ? null : { ...t, text };
};

const CURRENCY_SWAP: Record<string, string> = { FCFA: "XAF", XAF: "FCFA", F: "FCFA", "F CFA": "FCFA", CFA: "FCFA" };

const currencyTokens: Drift = (t) => {
  const text = t.text
    .replace(/(\d) ?(F CFA|FCFA|XAF|CFA|F)(?![A-Za-z])/g, (_m, d: string, c: string) => `${d} ${CURRENCY_SWAP[c]}`)
    .replace(/\b(XAF|FCFA) (?=\d)/g, (_m, c: string) => `${CURRENCY_SWAP[c]} `);
  return { ...t, text };
};

const letterCase: Drift = (t) => ({
  ...t,
  text: t.text.toUpperCase(),
  expected: {
    ...t.expected,
    counterparty_name: upper(t.expected.counterparty_name),
    operator_ref: upper(t.expected.operator_ref),
  },
});

const upper = (v: string | number | null) => (typeof v === "string" ? v.toUpperCase() : v);
const fold = (v: string | number | null) => (typeof v === "string" ? v.normalize("NFD").replace(/\p{M}/gu, "") : v);

const ACCENTED: Record<string, string> = {
  recu: "reçu",
  depot: "dépôt",
  reussi: "réussi",
  reussie: "réussie",
  effectue: "effectué",
  ete: "été",
  detaillees: "détaillées",
  debite: "débité",
  reference: "référence",
  operation: "opération",
  succes: "succès",
  retire: "retiré",
  transfere: "transféré",
  expediteur: "expéditeur",
  initie: "initié",
  approuve: "approuvé",
  telechargez: "téléchargez",
};

const accents: Drift = (t) => {
  if (/\p{M}/u.test(t.text.normalize("NFD")))
    return {
      ...t,
      text: t.text.normalize("NFD").replace(/\p{M}/gu, ""),
      expected: { ...t.expected, counterparty_name: fold(t.expected.counterparty_name) },
    };
  const text = t.text.replace(/\b[A-Za-z]+\b/g, (w) => {
    const a = ACCENTED[w.toLowerCase()];
    if (!a) return w;
    if (w === w.toUpperCase()) return a.toUpperCase();
    return w[0] === w[0].toUpperCase() ? a[0].toUpperCase() + a.slice(1) : a;
  });
  return { ...t, text };
};

const whitespace: Drift = (t) => ({
  ...t,
  text:
    t.text
      .replace(/\. (?=\S)/g, ".\n")
      .replace(/ ?: ?(?=\S)/g, " : ")
      .replace(/, /g, ",  ") + " ",
});

/** Kinds a promotion glued on would change the meaning of: they are promotions or notices themselves. */
const NOT_GLUED: readonly (MessageKind | null)[] = ["MKT", "ADMIN", "TPL", "FAIL"];

/** A real promotion of the same operator, from the corpus (chosen by the text's seed). */
function promotion(t: Labelled, rnd: () => number, corpus: readonly Labelled[]): string | null {
  const promos = corpus.filter((c) => c.operator === t.operator && c.kind === "MKT" && c.id !== t.id);
  if (promos.length === 0 || NOT_GLUED.includes(t.kind)) return null;
  return promos[Math.floor(rnd() * promos.length)].text;
}

const promoBefore: Drift = (t, rnd, corpus) => {
  const promo = promotion(t, rnd, corpus);
  return promo === null ? null : { ...t, text: `${promo} ${t.text}` };
};

const promoAfter: Drift = (t, rnd, corpus) => {
  const promo = promotion(t, rnd, corpus);
  return promo === null ? null : { ...t, text: `${t.text.replace(/\s+$/, "")} ${promo}` };
};

/** Labels one operator prints for the same field in its different messages (from the corpus). */
const SYNONYMS: Record<Operator, readonly (readonly string[])[]> = {
  operator_a: [
    ["Financial Transaction Id", "Transaction Id", "ID de la transaction", "ID de Transaction", "ID transaction"],
    ["Votre nouveau solde", "Nouveau solde"],
    ["Your new balance", "New balance"],
  ],
  operator_b: [
    ["ID transaction", "Transaction ID", "No de transaction", "N° de transaction", "ID de Transaction", "Trans ID"],
    ["Nouveau Solde", "Nouveau solde", "Votre nouveau solde"],
  ],
};

const labelSynonyms: Drift = (t, rnd) => {
  for (const labels of SYNONYMS[t.operator]) {
    const found = labels.find((l) => new RegExp(`\\b${escape(l)}\\b`, "i").test(t.text));
    if (!found) continue;
    const others = labels.filter((l) => l.toLowerCase() !== found.toLowerCase());
    const next = others[Math.floor(rnd() * others.length)];
    return { ...t, text: t.text.replace(new RegExp(`\\b${escape(found)}\\b`, "gi"), next) };
  }
  return null;
};

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** The start of a list item that carries one field. */
const FIELD_ITEM =
  /^(?:montant|frais|fees?|commission|nouveau solde|votre nouveau solde|solde|new balance|your new balance|new account balance|id transaction|id de la transaction|transaction id|financial transaction id|trans\.? id|no de transaction|n° de transaction|reference|ref|cout|bonus|airtime balance|mobile money balance|le solde)\b/i;

/** A list's items (", " / ". " / "; " / line breaks between labelled fields) in reverse order. */
const fieldOrder: Drift = (t) => {
  const parts = t.text.split(/(, |\. |; |\n)/);
  const items = parts.filter((_, i) => i % 2 === 0);
  const seps = parts.filter((_, i) => i % 2 === 1);
  let best: [number, number] | null = null;
  for (let i = 0; i < items.length;) {
    let j = i;
    while (j < items.length && FIELD_ITEM.test(items[j].trim())) j += 1;
    if (j - i >= 2 && (!best || j - i > best[1] - best[0])) best = [i, j];
    i = j > i ? j : i + 1;
  }
  if (!best) return null;
  const [i, j] = best;
  // The run's last item keeps the text's own ending ("." or nothing) at the end of the run.
  const run = items.slice(i, j);
  const end = /[.]$/.exec(run[run.length - 1])?.[0] ?? "";
  const stripped = run.map((s, k) => (k === run.length - 1 && end ? s.slice(0, -end.length) : s)).reverse();
  stripped[stripped.length - 1] += end;
  const reordered = [...items.slice(0, i), ...stripped, ...items.slice(j)];
  const text = reordered.map((s, k) => s + (seps[k] ?? "")).join("");
  return { ...t, text };
};

/** A printed balance after its label ("Nouveau solde: 5031.88 FCFA", "Your new balance:2132 XAF"). */
const BALANCE_PRINTED =
  /\b(?:solde|balance)\b[^.;\d]{0,40}?:?\s*(?:(?:FCFA|XAF|CFA|F) ?)?\d[\d,. ]*\d?(?: ?(?:F ?CFA|FCFA|XAF|CFA|F)(?![A-Za-z]))?\.?/gi;

/**
 * A promotional sentence glued to a balance reply, or right after a receipt's balance, with no
 * space after the full stop ("…Nouveau solde: 5031 FCFA.Profitez de 20.000F…"): operators
 * append their offers to both.
 */
const promoGluedBalance: Drift = (t, rnd, corpus) => {
  const promo = promotion(t, rnd, corpus);
  if (promo === null || typeof t.expected.balance_after !== "number") return null;
  const found = [...t.text.matchAll(BALANCE_PRINTED)].at(-1);
  if (!found) return null;
  // The balance is the receipt's last value: the offer follows it, glued.
  const end = found.index + found[0].length;
  if (/\d/.test(t.text.slice(end))) return null;
  const head = t.text.replace(/\s+$/, "");
  const glue = head.endsWith(".") ? "" : ".";
  return { ...t, text: `${head}${glue}${promo}` };
};

/** Doubled spaces inside a notice, between its words and after its full stops. */
const doubledSpaces: Drift = (t) => {
  if (t.kind !== "ADMIN") return null;
  let n = 0;
  return { ...t, text: t.text.replace(/ (?=\S)/g, () => (++n % 2 === 0 ? "  " : " ")).replace(/\. /g, ".  ") };
};

/** Another purse of the wallet's, as the operator lists it in a balance reply. */
const OTHER_PURSE: Record<Operator, Record<"fr" | "en", string>> = {
  operator_a: { fr: "Solde airtime : 150 FCFA", en: "Airtime balance: 150 FCFA" },
  operator_b: { fr: "Bonus UV : 150 FCFA", en: "Bonus UV: 150 FCFA" },
};

/**
 * A balance reply whose items come in another order: its items reversed, or (a reply of one
 * item) another purse of the wallet listed before it.
 */
const balanceOrder: Drift = (t) => {
  if (t.kind !== "BAL" || typeof t.expected.balance_after !== "number") return null;
  const parts = t.text.split(/( ; |\n|; )/);
  if (parts.length >= 3) {
    const items = parts.filter((_, i) => i % 2 === 0).map((s) => s.replace(/[.\s]+$/, ""));
    const sep = parts[1];
    return { ...t, text: `${items.reverse().join(sep)}.` };
  }
  const language = /\b(?:solde|votre)\b/i.test(t.text) ? "fr" : "en";
  return { ...t, text: `${OTHER_PURSE[t.operator][language]}\n${t.text}` };
};

const DRIFTS: Record<DriftKind, Drift> = {
  new_numbers: newNumbers,
  thousands_separators: thousandsSeparators,
  currency_tokens: currencyTokens,
  letter_case: letterCase,
  accents,
  whitespace,
  promo_before: promoBefore,
  promo_after: promoAfter,
  label_synonyms: labelSynonyms,
  field_order: fieldOrder,
  promo_glued_balance: promoGluedBalance,
  doubled_spaces: doubledSpaces,
  balance_order: balanceOrder,
};
