// Promotions glued to transactional texts.
//
// Operators append marketing to receipts ("...Transaction Id: 18191577531. Borrow up to
// 100,000 FCFA in advance...") or prepend it without a separator ("...double your
// commissionCash out initiated by..."). A number in a promotion must never become a field.
// Two defences, both applied:
//   1. field patterns only look from the start of the rule's match (drops prepended promos);
//   2. the body is cut at the first sentence, after the one the match ends in, that carries a
//      promotional cue (drops appended promos). Field patterns are also anchored to labels.
// The cut is deliberately eager: a cue word in a sender's free-text message also cuts, which
// can only turn later fields into null, never into a wrong number.

/**
 * Words and shapes that only promotions use. Runs on accent-folded text. "Bonus" followed by a
 * label's colon and a number ("Bonus UV :2 FCFA") is a balance item, not a promotion.
 */
const PROMO_CUE = new RegExp(
  [
    String.raw`\b(?:gagn(?:e|es|ez|er|ant|ants)|a gagner|win|wins|winners?|earn|bonus(?! ?(?:[a-z]+ ?)?: ?\d)|promos?|promotion|offre|offer|offerte?s?|offered|cadeaux?)\b`,
    String.raw`\b(?:chance|prix casses|profite[rz]?|borrow|emprunte[rz]?|download|telecharge[rz]?)\b`,
    String.raw`\b(?:more info|plus d'infos?|disponible sur|available on)\b`,
    String.raw`\b(?:dial|tape[sz]?|compose[sz]?)\s+(?:tel:)?[*#]\d`,
    String.raw`[-+]\d+\s?%`,
  ].join("|"),
  "gi",
);

/**
 * End (exclusive) of the transactional body: the start of the first promotional sentence
 * that begins after `from`, or the end of the text.
 */
export function promoCut(folded: string, from: number): number {
  for (const cue of folded.slice(from).matchAll(PROMO_CUE)) {
    const start = sentenceStart(folded, from, from + cue.index);
    if (start !== null) return start;
  }
  return folded.length;
}

/** The nearest sentence boundary in (min, at], or null when `at` is in the first sentence. */
function sentenceStart(text: string, min: number, at: number): number | null {
  for (let i = at; i > min; i -= 1) if (isBoundary(text, i)) return i;
  return null;
}

/**
 * A sentence starts at `i` when the previous character ends one ("." "!" "?" or the "|"
 * MTN uses) and `i` is a space, an upper-case letter followed by a lower-case one (the
 * glued ".Prix Cassés"), or a glued word of four capitals (".EXCLUSIVE BONUS"). Decimal points ("2784137.6") and references ("CI220822.1921.C04642",
 * "NAME-CHEAP.COM*") are not boundaries.
 */
function isBoundary(text: string, i: number): boolean {
  if (!".!?|".includes(text[i - 1] ?? "")) return false;
  const here = text[i] ?? "";
  if (here === " ") return true;
  const next = text[i + 1] ?? "";
  // An offer glued in capitals after a receipt's last value ("… 33000 FCFA.EXCLUSIVE BONUS
  // just for you!"): a word of four capitals or more, then a space or punctuation.
  return (/\p{Lu}/u.test(here) && /\p{Ll}/u.test(next)) || /^\p{Lu}{4,}[\s!?,]/u.test(text.slice(i, i + 16));
}

/**
 * The text with every sentence that carries a promotional cue blanked out, length for length
 * (so an index into the result is an index into the text). For texts no wording recognised:
 * their promotions may come before, after or between the receipt's sentences.
 */
export function blankPromotions(folded: string): { keep: (s: string) => string } {
  const ranges: [number, number][] = [];
  let start = 0;
  for (let i = 1; i <= folded.length; i += 1) {
    if (i === folded.length || isBoundary(folded, i)) {
      PROMO_CUE.lastIndex = 0;
      if (PROMO_CUE.test(folded.slice(start, i))) ranges.push([start, i]);
      start = i;
    }
  }
  PROMO_CUE.lastIndex = 0;
  return {
    keep: (s) => ranges.reduce((out, [a, b]) => out.slice(0, a) + " ".repeat(b - a) + out.slice(b), s),
  };
}
