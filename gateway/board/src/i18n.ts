// Every string of the board, in English and French, one catalogue per page beside a common
// one and the refusal reasons' (catalogue/): each types its French by its English keys, so a
// key missing from one language (or one it adds) does not compile, and `t()` only takes keys
// that exist.
import * as common from "./catalogue/common.ts";
import * as reasons from "./catalogue/reasons.ts";
import * as signIn from "./catalogue/sign-in.ts";
import * as analytics from "./catalogue/analytics.ts";
import * as money from "./catalogue/money.ts";
import * as operations from "./catalogue/operations.ts";
import * as people from "./catalogue/people.ts";
import * as fleet from "./catalogue/fleet.ts";
import * as sims from "./catalogue/sims.ts";
import * as messages from "./catalogue/messages.ts";
import * as handsets from "./catalogue/handsets.ts";
import * as alerts from "./catalogue/alerts.ts";
import * as transactions from "./catalogue/transactions.ts";
import * as teach from "./catalogue/teach.ts";
import * as webhooks from "./catalogue/webhooks.ts";
import * as arbitration from "./catalogue/arbitration.ts";
import * as audit from "./catalogue/audit.ts";
import * as matching from "./catalogue/matching.ts";
import * as wording from "./catalogue/wording.ts";

const en = {
  ...common.en,
  ...reasons.en,
  ...signIn.en,
  ...analytics.en,
  ...money.en,
  ...operations.en,
  ...people.en,
  ...fleet.en,
  ...sims.en,
  ...messages.en,
  ...handsets.en,
  ...alerts.en,
  ...transactions.en,
  ...teach.en,
  ...webhooks.en,
  ...arbitration.en,
  ...audit.en,
  ...matching.en,
  ...wording.en,
};

export type Key = keyof typeof en;
export type Catalogue = Record<Key, string>;

const fr: Catalogue = {
  ...common.fr,
  ...reasons.fr,
  ...signIn.fr,
  ...analytics.fr,
  ...money.fr,
  ...operations.fr,
  ...people.fr,
  ...fleet.fr,
  ...sims.fr,
  ...messages.fr,
  ...handsets.fr,
  ...alerts.fr,
  ...transactions.fr,
  ...teach.fr,
  ...webhooks.fr,
  ...arbitration.fr,
  ...audit.fr,
  ...matching.fr,
  ...wording.fr,
};

export type Lang = "fr" | "en";
const catalogues: Record<Lang, Catalogue> = { en, fr };
const LANG_KEY = "board.lang";

function initialLang(): Lang {
  const saved = localStorage.getItem(LANG_KEY);
  if (saved === "fr" || saved === "en") return saved;
  return navigator.language.toLowerCase().startsWith("en") ? "en" : "fr";
}

let current: Lang = initialLang();
document.documentElement.lang = current;

export const lang = (): Lang => current;

/** Remembers the choice (this browser, every tab); the caller re-renders. */
export function setLang(l: Lang): void {
  current = l;
  localStorage.setItem(LANG_KEY, l);
  document.documentElement.lang = l;
}

/** The string of `key` in the current language, `{name}` placeholders filled from `vars`. */
export function t(key: Key, vars: Record<string, string | number> = {}): string {
  return catalogues[current][key].replace(/\{(\w+)\}/g, (_, name: string) => String(vars[name] ?? `{${name}}`));
}

/** A key built from data (a status, a reason), if the catalogues have it. */
export function known(key: string): key is Key {
  return key in en;
}
