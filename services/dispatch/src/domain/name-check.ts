// Name verification, as the handset runs it before sending the PIN when
// `partner_verified` is false (and as the handset simulator reproduces it):
//   1. both names uppercased and stripped of diacritics;
//   2. every word of the shorter name must appear in the longer (word sets);
//   3. a name that cannot be read from the screen is a mismatch.
//
// Choices where the contract is silent:
// - Words are runs of letters and digits; hyphens, apostrophes, dots and any other
//   punctuation separate words, so "JEAN-PIERRE" matches "Jean Pierre".
// - "Shorter" means fewer distinct words; with equal counts both sets must be equal.
// - The ligatures Œ and Æ (French names) are spelled out as OE and AE, since
//   Unicode decomposition does not split them.
// - An empty expected name is also a mismatch: there is nothing to verify against,
//   and sending the PIN unverified is the failure this check exists to prevent.
// - The screen text is given as the name extracted from it; finding the name inside
//   the operator's sentence is the handset's job.

export type NameCheck =
  | { readonly match: true }
  | {
      readonly match: false;
      readonly reason: "screen_unreadable" | "expected_missing" | "words_missing";
      /** Words of the shorter name absent from the longer, normalised. */
      readonly missing: readonly string[];
    };

const LIGATURES: Readonly<Record<string, string>> = { Œ: "OE", Æ: "AE" };

/** The set of normalised words of a name: uppercased, without diacritics, split on anything not a letter or digit. */
export function nameWords(name: string): Set<string> {
  const plain = name
    .toUpperCase()
    .normalize("NFD")
    .replace(/\p{M}/gu, "")
    .replace(/[ŒÆ]/g, (ligature) => LIGATURES[ligature] ?? ligature);
  return new Set(plain.split(/[^\p{L}\p{N}]+/u).filter((word) => word !== ""));
}

export function checkName(expected: string | null | undefined, onScreen: string | null | undefined): NameCheck {
  const screenWords = nameWords(onScreen ?? "");
  if (screenWords.size === 0) return { match: false, reason: "screen_unreadable", missing: [] };
  const expectedWords = nameWords(expected ?? "");
  if (expectedWords.size === 0) return { match: false, reason: "expected_missing", missing: [] };
  const [shorter, longer] =
    expectedWords.size <= screenWords.size ? [expectedWords, screenWords] : [screenWords, expectedWords];
  const missing = [...shorter].filter((word) => !longer.has(word));
  return missing.length === 0 ? { match: true } : { match: false, reason: "words_missing", missing };
}

export function namesMatch(expected: string | null | undefined, onScreen: string | null | undefined): boolean {
  return checkName(expected, onScreen).match;
}
