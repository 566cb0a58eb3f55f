// Shared field extractors: the regex pieces rules are built from, and the readers that turn
// a captured piece of text into a field value. Readers never guess: anything they cannot
// read with certainty is "unreadable", and the field becomes null.

import type { Operator } from "./types.ts";

// ---------------------------------------------------------------------------------------
// Regex pieces (regex source strings, composed into rules with String.raw templates)
// ---------------------------------------------------------------------------------------

/**
 * An unfilled template slot or an anonymisation mask: `[NAME]`, `[PHONE:671-abcdef]`,
 * `{amount}`, `{{amount}}`, `%s`, `%1$s`, `${amount}`, `<AMOUNT>`. Value patterns accept
 * placeholders so that a rule still recognises its wording; the reader then reports a "hole".
 */
export const PLACEHOLDER = String.raw`(?:\[[^\]\s]{1,40}\]|\{\{?\s*[A-Za-z_][\w.]*\s*\}\}?|%(?:\d+\$)?[sd]|\$\{\w+\}|<[A-Za-z_]{2,}>)`;

/**
 * Currency glued to or spaced from a number, before or after it ("10500FCFA", "4000F",
 * "FCFA 0", "XAF 5,237", "395 USD", "4000.00GNF"). Foreign currencies (USD, EUR, XOF, and the
 * other francs and currencies of the operators' markets: GNF, CDF, MGA and its "Ar", GHS, RWF,
 * UGX, KES, NGN)
 * are recognised only so that the reader can refuse them. The look-ahead stops "F" from eating the first letter of "Frais".
 */
export const CURRENCY = String.raw`(?:F\s?CFA|FCFA|XAF|XOF|CFA|USD|EUR|US\$|\$|€|GNF|CDF|MGA|Ar|GHS|RWF|UGX|KES|NGN|F)(?![A-Za-z])`;

/**
 * Digits with any grouping or decimal marks; the reader decides what the marks mean. A full stop
 * followed by a space ends a sentence, never a group: "Frais 400. 0 airtime and 0F in your
 * wallet?" is a fee of 400 and the next sentence, not the unreadable "400. 0".
 */
export const NUMBER = String.raw`\d(?:(?:(?!\. )[\d,. ])*\d)?`;

/**
 * A money token. The number is never cut before a separator and a digit: "Votre paiement de
 * 2,800.00 FCFA a ..." must not give "2" to a pattern that wants a comma after the amount.
 */
function moneySource(capture: boolean): string {
  const body = String.raw`(?:${CURRENCY} ?)?(?:${NUMBER}(?![,.]?\d)|${PLACEHOLDER})(?: ?${CURRENCY})?`;
  return capture ? String.raw`(?<v>${body})` : String.raw`(?:${body})`;
}

/** A money amount (or a placeholder where one should be), captured as `v`. */
export const MONEY = moneySource(true);
/** Same as MONEY without the capture: for `match` skeletons and context in name patterns. */
export const AMT = moneySource(false);

/**
 * An operator reference: dot-separated segments that each contain a digit, so that
 * "CI220822.1921.C04642" is read whole while "202074383.Reference" stops at the number and
 * "10994319400.." loses its full stops.
 */
export const REF = String.raw`(?<v>[A-Za-z0-9]*\d[A-Za-z0-9]*(?:\.[A-Za-z0-9]*\d[A-Za-z0-9]*)*|${PLACEHOLDER})`;

/**
 * A phone number as printed: 8 to 15 digits (optional +), or partly hidden by the operator
 * ("237699****12", "69XXXX123": its visible digits still contradict another destination).
 */
export const PHONE = String.raw`\+?(?:\d{8,15}|\d{2,12}[*xX•]{2,9}\d{1,6})(?![\dA-Za-z])`;
/** A phone number (or an anonymisation mask where one was), captured as `v`. */
export const MSISDN = String.raw`(?<v>${PHONE}|${PLACEHOLDER})`;

/**
 * The lookbehinds that keep a label from matching inside "External Transaction Id" or
 * "ID de transaction externe": an external id is the partner's number, not the operator's.
 */
export const NOT_EXTERNAL = String.raw`(?<!external\s)(?<!externe\s)`;

/**
 * A labelled value: the label, an optional colon, then the value. Global + indices so that
 * every occurrence can be compared and names can be cut from the un-folded text.
 */
export function labelled(label: string, value: string): RegExp {
  return new RegExp(String.raw`(?:${label})\s*:?\s*${value}`, "gid");
}

/** A rule-specific pattern (global, case-insensitive, with indices). */
export function pattern(source: string): RegExp {
  return new RegExp(source, "gid");
}

/** A `match` skeleton (not global: exec always starts at 0). */
export function skeleton(source: string): RegExp {
  return new RegExp(source, "i");
}

// ---------------------------------------------------------------------------------------
// Readers
// ---------------------------------------------------------------------------------------

/** A value, a placeholder where the value should be, or text that cannot be read safely. */
export type Reading<T> =
  { readonly state: "value"; readonly value: T } | { readonly state: "hole" } | { readonly state: "unreadable" };

const HOLE: Reading<never> = { state: "hole" };
const UNREADABLE: Reading<never> = { state: "unreadable" };
const value = <T>(v: T): Reading<T> => ({ state: "value", value: v });

/** A placeholder where a money amount should be, with or without its currency ("{amount} FCFA"). */
const MONEY_HOLE = new RegExp(String.raw`^(?:${CURRENCY} ?)?${PLACEHOLDER}(?: ?${CURRENCY})?$`, "i");
const CONTAINS_PLACEHOLDER = new RegExp(PLACEHOLDER, "i");

/**
 * How an operator writes numbers, derived from the samples:
 * - operator_a (MTN style) groups thousands with "," ("7,943", "100,000", "XAF 50,000"), and
 *   in French promos with "." ("20.000F"); a space is accepted too. It never shows decimals
 *   in an amount, so "1.000" can only be one thousand. "1.5" / "1,000.50" are read as
 *   decimals and truncated.
 * - operator_b (Orange style) uses "." as its decimal point ("2784137.6", "20022.43",
 *   "3000.00"), always with one or two decimals. A "." followed by exactly three digits
 *   ("1.000", "420.104") could be a thousands group or a decimal part, so it is unreadable.
 *   A space or "," followed by groups of three is read as thousands.
 */
export interface NumberFormat {
  /** Characters that may separate groups of exactly three digits. */
  readonly groupSeparators: readonly string[];
  /** Longest run of digits after "." that is read as a decimal part (then truncated). */
  readonly maxFractionDigits: number;
}

export const NUMBER_FORMATS: Readonly<Record<Operator, NumberFormat>> = {
  operator_a: { groupSeparators: [",", " ", "."], maxFractionDigits: 2 },
  operator_b: { groupSeparators: [",", " "], maxFractionDigits: 2 },
};

/** Beyond this the number is not money we would ever see, and not exactly representable. */
const MAX_DIGITS = 15;

/**
 * Reads the integer FCFA part of a printed number, or null when the marks are ambiguous.
 * Decimals are truncated, never rounded: a balance of 2784137.6 proves 2784137 FCFA, not
 * 2784138 that the wallet never held.
 */
export function parseAmount(raw: string, format: NumberFormat): number | null {
  const s = raw.trim();
  const patterns = compiled(format);
  const integerPart = /^\d+$/.test(s) ? s : (patterns.decimal.exec(s)?.[1] ?? groupedInteger(s, patterns));
  if (integerPart === null || integerPart.length > MAX_DIGITS) return null;
  return Number.parseInt(integerPart, 10);
}

interface CompiledFormat {
  /** "2784137.6": digits, the decimal point, one to maxFractionDigits digits. */
  readonly decimal: RegExp;
  /** "1,000,000" / "1 000" / "1.000" (as the format allows), each with its separator. */
  readonly grouped: readonly { readonly sep: string; readonly re: RegExp }[];
}

const COMPILED = new WeakMap<NumberFormat, CompiledFormat>();

function compiled(format: NumberFormat): CompiledFormat {
  let patterns = COMPILED.get(format);
  if (!patterns) {
    const fractionDigits = `\\d{1,${format.maxFractionDigits}}`;
    patterns = {
      decimal: new RegExp(`^(\\d+)\\.${fractionDigits}$`),
      grouped: format.groupSeparators.map((sep) => {
        const esc = sep === "." ? "\\." : sep;
        // A "." used for grouping cannot also be the decimal point.
        const fraction = sep === "." ? "" : `(?:\\.${fractionDigits})?`;
        return { sep, re: new RegExp(`^(\\d{1,3}(?:${esc}\\d{3})+)${fraction}$`) };
      }),
    };
    COMPILED.set(format, patterns);
  }
  return patterns;
}

function groupedInteger(s: string, patterns: CompiledFormat): string | null {
  for (const { sep, re } of patterns.grouped) {
    const m = re.exec(s);
    if (m) return m[1].split(sep).join("");
  }
  return null;
}

// "F CFA" is compared with its space removed. XOF (the West African franc) is not XAF.
const LOCAL_CURRENCIES = new Set(["FCFA", "XAF", "CFA", "F"]);
const MONEY_PARTS = new RegExp(String.raw`^(?:(${CURRENCY}) ?)?(${NUMBER})(?: ?(${CURRENCY}))?$`, "i");

/**
 * A captured money token. A currency other than FCFA/XAF makes the value unreadable: the
 * fields are integer FCFA, and 395 USD is not 395 FCFA. No currency at all is accepted
 * because every money pattern is anchored to a label or to the operator's own wording.
 */
export function readMoney(raw: string, format: NumberFormat): Reading<number> {
  const token = raw.trim();
  if (MONEY_HOLE.test(token)) return HOLE;
  const parts = MONEY_PARTS.exec(token);
  if (!parts) return UNREADABLE;
  const currencies = [parts[1], parts[3]].filter((c): c is string => c !== undefined);
  if (currencies.some((c) => !LOCAL_CURRENCIES.has(c.toUpperCase().replace(/\s/g, "")))) return UNREADABLE;
  const amount = parseAmount(parts[2], format);
  return amount === null ? UNREADABLE : value(amount);
}

export function readRef(raw: string): Reading<string> {
  const token = raw.trim();
  if (CONTAINS_PLACEHOLDER.test(token)) return HOLE;
  return /\d/.test(token) ? value(token) : UNREADABLE;
}

/** The number as printed, without a leading "+": no country code is added or removed. */
export function readMsisdn(raw: string): Reading<string> {
  const token = raw.trim();
  if (CONTAINS_PLACEHOLDER.test(token)) return HOLE;
  return new RegExp(`^${PHONE}$`).test(token) ? value(token.replace(/^\+/, "")) : UNREADABLE;
}

const MAX_NAME_LENGTH = 120;

export function readName(raw: string): Reading<string> {
  const name = raw.replace(/\s+/g, " ").replace(/^[\s,;:]+|[\s,;:]+$/g, "");
  if (CONTAINS_PLACEHOLDER.test(name) || /[{}[\]]/.test(name)) return HOLE;
  if (name.length === 0 || name.length > MAX_NAME_LENGTH || !/\p{L}/u.test(name)) return UNREADABLE;
  return value(name);
}
