// Text normalisation done once before any rule runs.

export interface NormalizedText {
  /** NFC, every whitespace run (newlines, tabs, no-break spaces) collapsed to one space. */
  text: string;
  /**
   * `text` with accents removed and typographic apostrophes made ASCII, character for
   * character, so that an index into `folded` is the same index into `text`. Rules match on
   * `folded` (one pattern covers "reçu"/"recu", "effectué"/"effectue"); values such as names
   * are cut from `text` so that they keep their accents.
   */
  folded: string;
}

// Zero-width characters are removed rather than turned into spaces: inside a number they
// would otherwise split "10<ZWSP>000" into two numbers.
const ZERO_WIDTH = /[\u200b-\u200d\u2060\ufeff]/g;
const WHITESPACE_RUN = /\s+/g;
const APOSTROPHES = /[\u2018\u2019\u02bc\u00b4`]/g;
const COMBINING_MARK = /\p{M}/gu;

export function normalizeText(raw: string): NormalizedText {
  const text = raw.normalize("NFC").replace(ZERO_WIDTH, "").replace(WHITESPACE_RUN, " ").trim();
  return { text, folded: foldAccents(text) };
}

/** Length-preserving: each UTF-16 unit maps to exactly one unit. */
export function foldAccents(text: string): string {
  let out = "";
  for (const unit of text.split("")) out += foldUnit(unit);
  return out.replace(APOSTROPHES, "'");
}

function foldUnit(unit: string): string {
  const base = unit.normalize("NFD").replace(COMBINING_MARK, "");
  return base.length === 1 ? base : unit;
}

// Function words frequent in operator texts, space-separated to keep the lists readable.
const FRENCH_WORDS = new Set(
  "le la les de des du votre vous et est pour sur avec a au une un chez par vers nouveau solde montant frais reussi".split(
    " ",
  ),
);
const ENGLISH_WORDS = new Set(
  "the your you of to and is for on with has have been from new balance amount fee fees at by successfully please".split(
    " ",
  ),
);

/**
 * Language of a text that a bilingual rule recognised: whichever of French or English has
 * more function words. A tie gives null rather than a guess.
 */
export function detectLanguage(folded: string): "fr" | "en" | null {
  let fr = 0;
  let en = 0;
  for (const word of folded.toLowerCase().split(/[^a-z']+/)) {
    if (FRENCH_WORDS.has(word)) fr += 1;
    if (ENGLISH_WORDS.has(word)) en += 1;
  }
  if (fr === en) return null;
  return fr > en ? "fr" : "en";
}
