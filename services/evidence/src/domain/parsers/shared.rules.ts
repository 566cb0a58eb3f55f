// Rules that apply to both operators. They carry no fields: a template, a refusal, a notice
// or a promotion never proves money, so no number is read from them. UNRECOGNISED (last)
// reads the labelled values of a text nothing else recognised, for a person to see.

import { labelled, MONEY, NOT_EXTERNAL, REF, skeleton } from "./fields.ts";
import type { FieldPatterns, Rule } from "./types.ts";

/** Evaluated before the operator's own rules. */
export const SHARED_FIRST: readonly Rule[] = [
  {
    // Template debris: upper-case slot names glued to values, nothing else
    // ("AMOUNT10,000 MSISDN_SENDER237678738594 REASON-"). Case-sensitive on purpose: the
    // slot names are upper-case, words of a real sentence are not all so. Tokens are
    // space-separated so that a long capital word cannot be split in exponentially many ways.
    id: "shared.tpl.debris",
    kind: "TPL",
    language: null,
    match: /^(?=.*\b[A-Z][A-Z_]{2,}[\d-])[A-Z][A-Z_]{2,}[^\sa-z]*(?: [A-Z][A-Z_]{2,}[^\sa-z]*)+$/,
  },
];

/**
 * Evaluated after the operator's own rules: they classify what no wording recognised. The
 * refusals come before the receipts recognised by their cues (cues.ts), the notices and
 * promotions after them (a new receipt wording with a promotional word stays a receipt).
 */
export const REFUSALS: readonly Rule[] = [
  {
    // A programmer's placeholder left in a text no wording recognised ("{montant}", "%s").
    // Masks such as "[NAME]" are not enough: the anonymised genuine samples are full of them.
    id: "shared.tpl.placeholder",
    kind: "TPL",
    language: null,
    match: /\{\{?\s*[A-Za-z_][\w.]*\s*\}\}?|%(?:\d+\$)?[sd](?![A-Za-z])|\$\{\w+\}|<[A-Z][A-Z_]+>|\b[A-Z_]{4,}\}/,
  },
  {
    id: "shared.fail",
    kind: "FAIL",
    language: null,
    match: skeleton(
      [
        String.raw`\b(?:has|have|had) failed\b|\btransaction failed\b|\bunsuccessful\b`,
        String.raw`\binsufficient (?:funds|balance)\b|\bcould not be (?:completed|processed)\b`,
        String.raw`\b(?:was|has been) (?:declined|rejected)\b|\b(?:wrong|invalid|incorrect) (?:pin|secret code)\b`,
        String.raw`\b(?:a|ont|avez) echoue\b|\bechou(?:e|ee)\b|\bechec\b|\bsolde insuffisant\b|\bfonds insuffisants\b`,
        String.raw`\bn'a pas (?:pu )?(?:ete )?(?:abouti|effectue)|\bcode (?:secret|pin) (?:incorrect|invalide|errone)\b`,
      ].join("|"),
    ),
  },
];

export const NOTICES: readonly Rule[] = [
  {
    id: "shared.admin",
    kind: "ADMIN",
    language: null,
    match: skeleton(
      [
        String.raw`\b(?:confidential|verification|secret|otp) code\b|\bdo not share\b|^warning\b`,
        String.raw`\btransfer (?:error|mistake)\b|\bmaintenance\b|\bhave (?:now )?been restored\b`,
        String.raw`\bcode (?:confidentiel|secret|de verification)\b|\bne (?:le |la )?partagez\b|^attention\b`,
        String.raw`\berreur de (?:transfert|frappe)\b|\ble code de \+?\d{8,15} est\b`,
        String.raw`\byou can check your last \d+ transactions\b|\byou can (?:now )?check (?:the )?details of\b`,
        String.raw`\breset your (?:momo |mobile money )?pin\b|\breinitialise[rz]? votre (?:code )?pin\b`,
      ].join("|"),
    ),
  },
  {
    id: "shared.mkt",
    kind: "MKT",
    language: null,
    match: skeleton(
      [
        String.raw`\b(?:win|wins|winners?|earn|bonus|promos?|promotion|offer|gift|chance|prizes?|free|discount|cashback)\b`,
        String.raw`\b(?:gagn\w*|offre|offert|cadeaux?|gratuit\w*|profite[rz]?|remise|reduction|prix casses)\b`,
        String.raw`\b(?:dial|tape[sz]?|compose[sz]?)\s+(?:tel:)?[*#]\d|[-+]\d+\s?%`,
        // An invitation to get a product, or to an app ("Get yours for 2,500F via … or via the App").
        String.raw`\bget yours\b|\b(?:via|on|with|sur|avec) (?:the |l')?(?:new )?(?:momo ?)?app\b`,
      ].join("|"),
    ),
  },
];

/** Another purse's balance ("Airtime balance", "MoMo Gift Balance"), never the wallet's. */
const NOT_ANOTHER_PURSE = String.raw`(?<!(?:airtime|gift|bonus|loan|commission|data|sms|internet|points?)\s{1,2})`;

/** Labels that name the operator's reference in either operator's messages, in any language. */
const REF_LABELS = String.raw`${NOT_EXTERNAL}\b(?:(?:financial )?transaction id|trans(?:action)?\.? id|id (?:de )?(?:la )?transaction|id trans(?:action)?|txn id|n(?:o|°|um(?:ero)?)\.? (?:de )?transaction|transaction (?:no|number|ref(?:erence)?))`;

/**
 * Fields as labelled values, whatever the wording around them. A rule's own pattern for a
 * field that finds no occurrence falls back to these (the operator printed the value under
 * another of its labels); a text no rule recognises is read with them alone. "Montant Net"
 * (amount and fee together) and "Reference" (a sender's free text in MTN's wordings) are
 * not among them.
 */
export const LABELLED_FIELDS: FieldPatterns = {
  amount: labelled(
    String.raw`\b(?:montant(?: de (?:la )?transaction)?|transaction amount|amount)(?! net)(?! du credit)`,
    MONEY,
  ),
  fee: labelled(String.raw`\b(?:frais|fees?|charges)`, MONEY),
  balance_after: labelled(
    String.raw`\b(?:(?:votre )?nouveau solde(?: est)?(?: de)?|(?:your )?new balance(?: is)?|(?:le )?solde(?: (?:de votre compte|du compte|de votre|disponible|principal|courant))*(?: est)?(?: de)?|${NOT_ANOTHER_PURSE}balance)`,
    MONEY,
  ),
  operator_ref: labelled(REF_LABELS, REF),
};

/**
 * What no rule recognised: kind null, a possible deposit for a person to look at. Only
 * labelled values are read (a bare number could be anything), so the person sees the amount,
 * the balance and the reference the text states. Such a text never confirms anything.
 */
export const UNRECOGNISED: Rule = {
  id: "unrecognised",
  kind: null,
  language: null,
  match: /^/,
  fields: {
    ...LABELLED_FIELDS,
    operator_ref: labelled(String.raw`${REF_LABELS}|\bref(?:erence)?\b`, REF),
  },
};
