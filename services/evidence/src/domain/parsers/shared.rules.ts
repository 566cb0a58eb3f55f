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
 * Words of failure or refusal, in either language, on accent-folded text: the operation failed,
 * the balance or a limit did not allow it, the PIN was wrong, the service was unavailable. No
 * word of a reversal ("annule", "cancelled": a REV moves money back) and no apology alone ("Sorry,
 * your account balance is 0F!" opens an offer).
 */
export const FAIL_MATCH = skeleton(
  [
    // English: failed, refused, not enough money, a limit, a wrong PIN, no service.
    String.raw`\b(?:has|have|had) failed\b|\b(?:transaction|transfer|payment|operation|deposit|withdrawal|cash ?(?:in|out)|request)s? (?:has |have |was |had )?failed\b`,
    String.raw`\bunsuccessful\b|\binsufficient\b|\bnot enough (?:money|funds|balance|credit)\b|\bcould not be (?:completed|processed|performed)\b`,
    String.raw`\b(?:unable|not able) to (?:complete|process|perform|carry out)\b|\b(?:was|has been|is) (?:declined|rejected|refused|not completed)\b`,
    String.raw`\b(?:limit|maximum|threshold) (?:has been |was )?(?:reached|exceeded)\b|\bexceeds? (?:the |your )?(?:\w+ )?(?:limit|maximum)\b`,
    // A maximum named, then reached, a few words apart, either language ("le nombre maximum de
    // transactions autorise par jour est atteint", "the maximum number of transactions ... reached").
    String.raw`\bmaximum (?:[\w']+ ){0,6}(?:est |a ete |has been |was |is )?(?:atteinte?|depassee?|reached|exceeded)\b`,
    String.raw`\b(?:wrong|invalid|incorrect) (?:pin|secret code|password)\b|\b(?:pin|secret code) (?:is |was )?(?:wrong|invalid|incorrect)\b|\btoo many (?:\w+ )?(?:attempts|tries)\b`,
    String.raw`\bservice (?:is )?(?:temporarily |currently |momentarily )?unavailable\b|\btemporarily unavailable\b`,
    String.raw`\b(?:cannot|can ?not|could not) be (?:completed|processed|performed)\b|\bnot (?:sufficient|allowed|authori[sz]ed) (?:to|for)\b`,
    // French: echec, refus, solde ou fonds insuffisants, plafond, code errone, service indisponible.
    String.raw`\b(?:a|ont|avez) echoue\b|\bechou(?:e|ee|es|ees)\b|\bechec\b|\binsuffisante?s?\b|\bpas assez d'argent\b`,
    String.raw`\bn'a pas (?:pu )?(?:ete )?(?:abouti|effectuee?|traitee?)|\bn'a pas pu\b|\bnon (?:abouti|effectue|aboutie|effectuee)\b|\bimpossible d'effectuer\b`,
    String.raw`\b(?:a ete|est) (?:refusee?|rejetee?)\b|\b(?:plafond|limite) (?:\w+ )?(?:atteinte?|depassee?)\b|\bdepasse (?:le |votre )?(?:plafond|limite|montant maximum)\b`,
    String.raw`\bcode (?:secret|pin) (?:saisi )?(?:est )?(?:incorrect|invalide|errone)\b|\btrop de tentatives\b`,
    String.raw`\bpas (?:suffisamment|assez) (?:d'argent|de fonds|de solde|de credit)\b|\b(?:transaction|operation|transfert|paiement|depot|retrait) impossible\b`,
    String.raw`\bimpossible de (?:traiter|finaliser|effectuer|realiser|valider)\b|\bn'(?:etes|est) pas autorisee? a\b`,
    String.raw`\bservice (?:est )?(?:momentanement |temporairement |actuellement )?indisponible\b|\b(?:momentanement|temporairement) indisponible\b`,
  ].join("|"),
);

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
    match: FAIL_MATCH,
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
        // The holder's PIN or a debt to settle: service notices, never offers.
        String.raw`\byour (?:momo |mobile money )?pin\b|\bvotre (?:code (?:pin|secret)|pin)\b|\byou have a debt of\b|\bvous avez une dette\b`,
        // A warning against false news or scams about the service: a notice, even when it speaks
        // of transactions ("de fausses informations ... circulent. Veuillez les ignorer").
        String.raw`\bfausses? (?:informations?|rumeurs?|nouvelles?)\b|\bfalse (?:information|news|rumou?rs?)\b|\brumeurs?\b|\brumou?rs?\b`,
        // A security measure announced ("Pour plus de securite, confirmez chaque premier transfert ...").
        String.raw`\b(?:pour|par) (?:plus de |votre |mesure de )?securite\b|\bfor (?:your |more |added )?security\b`,
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
        // A code to dial, its star left out or not ("Dial 28036#"), or after "on", "au", "via".
        String.raw`\b(?:dial|tape[sz]?|compose[sz]?)\s+(?:tel:)?(?:[*#]\d|\d+[*#])|[-+]\d+\s?%|\b(?:on|au|sur|via)\s+(?:tel:)?\*\d+(?:\*\d+)*#`,
        // An invitation to get a product, or to an app ("Get yours for 2,500F via … or via the App").
        String.raw`\bget yours\b|\b(?:via|on|with|sur|avec) (?:the |l')?(?:new )?(?:momo ?)?app\b`,
        // An offer's price per period ("250U/ mois", "150U/30jrs", "250F/sem") or a bundle in the
        // operators' notation ("500U=1.2GB/30D").
        String.raw`\b\d+ ?(?:u|f|fcfa)? ?\/ ?(?:\d+ ?)?(?:j|jrs?|jours?|sem(?:aine)?s?|mois|days?|weeks?|months?)\b|\b\d+ ?u ?= ?\d`,
        // An invitation: subscribe, buy a bundle, discover, join, don't miss, reply to get it,
        // click here; MTN's "njoh" (free).
        String.raw`\b(?:subscribe|subscribing|discover|stay tuned|don'?t miss|let'?s talk|njo+h)\b|\bjoin (?:\w+ ){0,3}live\b|\b(?:details|click|apply(?: \w+){0,3}) here\b`,
        String.raw`\bturn on your (?:mobile )?data\b|\b(?:buy|purchase|get back) (?:a|an|any|the|your) (?:\w+ )?bundle\b`,
        String.raw`\b(?:abonne-toi|abonnez-vous|souscri(?:re|s|vez)|decouvre[rz]?|viens|t'attend|ne rate[sz]? pas|cliquez? ici|telecharge[rz]?)\b|\breponds? (?:ok|\d)\b|\b(?:on|sur) (?:facebook|tiktok|instagram|youtube)\b`,
      ].join("|"),
    ),
  },
];

/**
 * A text that no wording, cue or word of a notice recognised and that prints no value of a
 * transaction (parse.ts decides): a notice of the operator. Reads nothing.
 */
export const NOTICE: Rule = { id: "shared.admin.notice", kind: "ADMIN", language: null, match: /^/ };

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
    String.raw`\b(?:(?:votre )?nouveau solde(?: est)?(?: de)?|(?:your )?new balance(?: is)?|(?:le )?solde(?: (?:de votre compte|du compte|de votre|disponible|principal|courant|actuel|orange money|mobile money|momo|om))*(?: est)?(?: (?:maintenant|actuellement))?(?: de)?|(?:your )?(?:(?:mobile money|momo|account|wallet|current|available) )*${NOT_ANOTHER_PURSE}balance(?: (?:is|of))?(?: now)?)`,
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
