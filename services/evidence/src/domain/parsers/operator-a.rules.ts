// operator_a (MTN MoMo style) wordings, most specific first.
//
// MTN names the counterparty as "NAME (MSISDN)"; the number may be masked ("[PHONE:...]")
// in anonymised copies, which leaves the field null. Sources of each wording: the samples
// (testdata/samples.jsonl) and, where marked "corpus", genuine SMS published in
// github:kadian-arch/stop-arnaque-237 data/details/genuine_messages.jsonl.

import { AMT, labelled, MONEY, MSISDN, NOT_EXTERNAL, pattern, PHONE, REF, skeleton } from "./fields.ts";
import type { FieldPatterns, Language, MessageKind, Rule } from "./types.ts";

const DATE = String.raw`\d{4}-\d{2}-\d{2}`;
/** A name up to the parenthesis that holds its number. */
const NAME = String.raw`(?<v>[^()]+?)`;

// Labels MTN uses across wordings. Each is anchored to its label, so a number elsewhere in
// the text (a promotion, the sender's account number) is never read.
const BALANCE = labelled(
  String.raw`(?:votre )?nouveau solde(?: est)?(?: de)?|your new balance(?: is)?|new account balance|new balance|solde courant|\bsolde`,
  MONEY,
);
// "loyalty fee was 0" is a separate charge, not the transfer fee.
const FEE = labelled(String.raw`les frais s'elevaient a|(?<!loyalty )\bfees?(?: paid| was)?|\bfrais`, MONEY);
// "ID de transaction externe" / "External Transaction Id" / "External id" are the partner's
// numbers: the lookbehinds and the mandatory digit in REF keep them out.
const OPERATOR_REF = labelled(
  String.raw`${NOT_EXTERNAL}(?:financial )?transaction id|${NOT_EXTERNAL}id de (?:la )?transaction|identifiant de transaction financiere|trans\w*ction ref`,
  REF,
);
const COMMON: FieldPatterns = { balance_after: BALANCE, fee: FEE, operator_ref: OPERATOR_REF };
/** The terse family's labels: "Solde:", "Frais:", and the numeric "ID:" (see its rules). */
const TERSE: FieldPatterns = {
  balance_after: labelled(String.raw`\bSolde`, MONEY),
  // "ID:10932256987Frais:0F": the label can be glued to the reference before it.
  fee: labelled(String.raw`(?<![A-Za-z])Frais`, MONEY),
  operator_ref: pattern(String.raw`${NOT_EXTERNAL}\bID\s*:\s*(?<v>\d{6,})`),
};

/** MTN's own airtime and bundle accounts: a debit to them is an AIRTIME sale. */
const MTN_AIRTIME = String.raw`(?=MTNC? [^.()]*?(?:airtime|bundles?|forfaits?))`;

/**
 * A merchant debit wording gives two rules: AIRTIME when the merchant is MTN's airtime or
 * bundle account, otherwise a payment that no kind covers (fields are still read).
 */
function merchantDebit(
  wording: string,
  language: Language,
  skeletonFor: (merchant: string) => string,
  fields: FieldPatterns,
): Rule[] {
  const rule = (kind: MessageKind | null, merchant: string, family: string): Rule => ({
    id: `a.${language}.${family}.${wording}`,
    kind,
    language,
    direction: "out",
    match: skeleton(skeletonFor(merchant)),
    fields: { ...COMMON, ...fields },
  });
  return [rule("AIRTIME", MTN_AIRTIME, "airtime"), rule(null, "", "payment")];
}

/**
 * Wordings of the form "<what> <amount> <preposition> NAME (number) ...": one rule each, the
 * amount read after `amountAfter`, the counterparty after `partyAfter`.
 */
function partyMoves(
  wordings: readonly (readonly [MessageKind, Language, "in" | "out", string, string, string])[],
): Rule[] {
  return wordings.map(([kind, language, direction, match, amountAfter, partyAfter]) => ({
    id: `a.${language}.${kind.toLowerCase()}.${amountAfter.split(" ")[0]}`,
    kind,
    language,
    direction,
    match: skeleton(match),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\b${amountAfter} ${MONEY} `),
      counterparty_name: pattern(String.raw`\b${amountAfter} ${AMT} .{0,60}?\b${partyAfter} ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\b${amountAfter} ${AMT} .{0,60}?\b${partyAfter} [^()]+? \(${MSISDN}\)`),
    },
  }));
}

export const OPERATOR_A_RULES: readonly Rule[] = [
  // ---- DEP: agent cash-in to a customer ---------------------------------------------
  {
    // "Cash in of 500 XAF on 2026-09-23 00:14:11 to NAME (2376...) has been successfully
    // completed. Transaction ID:... Your new balance: 228 XAF. Added commission: 5 XAF."
    id: "a.en.dep.cash_in",
    kind: "DEP",
    language: "en",
    direction: "out",
    match: skeleton(String.raw`\bCash in of ${AMT} on .{0,40}? to .{1,120}? has been successfully completed`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bCash in of ${MONEY} on `),
      counterparty_name: pattern(String.raw`\bCash in of ${AMT} on .{0,40}? to ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\bCash in of ${AMT} on .{0,40}? to [^()]+? \(${MSISDN}\)`),
    },
  },
  {
    // corpus (second SMS of the same cash-in): "You have successfully cashed in 5,100 FCFA to
    // 2376... on 2026-09-21 09:53:31. Transasction ref ... New account balance: 778 FCFA"
    id: "a.en.dep.cashed_in",
    kind: "DEP",
    language: "en",
    direction: "out",
    match: skeleton(String.raw`\bYou have successfully cashed in ${AMT} to `),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bcashed in ${MONEY} to `),
      counterparty_msisdn: pattern(String.raw`\bcashed in ${AMT} to ${MSISDN} on `),
    },
  },
  {
    // 2018 agent line: "Vous avez envoye 10000 FCFA a NAME (2376...) le 2018-10-05 09:36:36.
    // ... Votre nouveau solde est de 8225 FCFA. Transaction Id: 402965086". No fee line: the
    // samples read it as the agent's cash-in (DEP).
    id: "a.fr.dep.envoye",
    kind: "DEP",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bVous avez envoye ${AMT} a .{1,120}? \([^()]*\) le ${DATE}`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bavez envoye ${MONEY} a `),
      counterparty_name: pattern(String.raw`\bavez envoye ${AMT} a ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\bavez envoye ${AMT} a [^()]+? \(${MSISDN}\)`),
    },
  },

  // ---- Agent float, commission, reversal, mini statement ------------------------------------
  // No public text of these kinds was found: these rules follow MTN's receipt wording
  // ("<what> <amount> ... NAME (number) ... Your new balance: ... Financial Transaction Id:")
  // and are measured on constructed texts only (testdata/corpus.jsonl, split "constructed").
  ...partyMoves([
    ["FLOAT_OUT", "en", "out", String.raw`\bYou have transferred float of ${AMT} to `, "transferred float of", "to"],
    ["FLOAT_OUT", "fr", "out", String.raw`\bVous avez transfere du float de ${AMT} a `, "transfere du float de", "a"],
    ["FLOAT_IN", "en", "in", String.raw`\bYou have received float of ${AMT} from `, "received float of", "from"],
    ["FLOAT_IN", "fr", "in", String.raw`\bVous avez recu du float de ${AMT} de `, "recu du float de", "de"],
    ["FLOAT_WITH", "en", "out", String.raw`\bYou have withdrawn float of ${AMT} at `, "withdrawn float of", "at"],
    [
      "FLOAT_WITH",
      "fr",
      "out",
      String.raw`\bVous avez effectue un retrait de float de ${AMT} chez `,
      "retrait de float de",
      "chez",
    ],
    // "reversal of X XAF ... approved" is the wording a public report on Cameroon MoMo SMS names.
    [
      "REV",
      "en",
      "in",
      String.raw`\bThe reversal of ${AMT} for transaction \d+ to .{1,120}? has been approved`,
      "reversal of",
      "to",
    ],
    [
      "REV",
      "fr",
      "in",
      String.raw`\bL'annulation de ${AMT} pour la transaction \d+ vers .{1,120}? a ete approuvee`,
      "annulation de",
      "vers",
    ],
  ]),
  {
    // A commission credited to the wallet: amount and balance are read so that the balance
    // chain counts it (COM never confirms anything).
    id: "a.en.com.received",
    kind: "COM",
    language: "en",
    direction: "in",
    match: skeleton(String.raw`\bYou have received a commission of ${AMT} for `),
    fields: { ...COMMON, amount: pattern(String.raw`\bcommission of ${MONEY} for `) },
  },
  {
    id: "a.fr.com.recu",
    kind: "COM",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bVous avez recu une commission de ${AMT} pour `),
    fields: { ...COMMON, amount: pattern(String.raw`\bcommission de ${MONEY} pour `) },
  },
  {
    // Commission moved to the main account: the main account's balance is reported, so "in".
    id: "a.en.com_sweep.transferred",
    kind: "COM_SWEEP",
    language: "en",
    direction: "in",
    match: skeleton(String.raw`\bYou have transferred ${AMT} from your commission account to your main account`),
    fields: { ...COMMON, amount: pattern(String.raw`\btransferred ${MONEY} from your commission account`) },
  },
  {
    id: "a.fr.com_sweep.transfere",
    kind: "COM_SWEEP",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bVous avez transfere ${AMT} de votre compte commission vers votre compte principal`),
    fields: { ...COMMON, amount: pattern(String.raw`\btransfere ${MONEY} de votre compte commission`) },
  },
  {
    // Mini statement: several amounts, none of them this message's; nothing is read.
    id: "a.en.rec.last_transactions",
    kind: "OPERATOR_A_REC",
    language: "en",
    match: skeleton(String.raw`^Your last \d+ transactions\s*:`),
  },
  {
    id: "a.fr.rec.dernieres_transactions",
    kind: "OPERATOR_A_REC",
    language: "fr",
    match: skeleton(String.raw`^Vos \d+ dernieres transactions\s*:`),
  },

  // ---- UV_OUT: transfer sent ------------------------------------------------------------
  {
    // "You have transferred 50000 XAF to NAME (2376...) from your mobile money account
    // 93368555 at ... FEES 0 FCFA. Your new balance: 6330 XAF. ..." The account number is
    // ours, never the counterparty.
    id: "a.en.uv_out.transferred",
    kind: "UV_OUT",
    language: "en",
    direction: "out",
    match: skeleton(String.raw`\bYou have transferred ${AMT} to .{1,120}? from your mobile money account`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\btransferred ${MONEY} to `),
      counterparty_name: pattern(String.raw`\btransferred ${AMT} to ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\btransferred ${AMT} to [^()]+? \(${MSISDN}\)`),
    },
  },
  {
    // "Transfert effectue pour  39000 FCFA  a NAME (229...) le 2024-02-07 16:23:16. Frais:
    // 100 FCFA. Nouveau solde: 987 FCFA, Reference: Paiement. ID de la transaction: ..."
    id: "a.fr.uv_out.transfert_effectue",
    kind: "UV_OUT",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bTransfert effectue pour ${AMT} a .{1,120}? \([^()]*\) le ${DATE}`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bpour ${MONEY} a `),
      counterparty_name: pattern(String.raw`\bpour ${AMT} a ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\bpour ${AMT} a [^()]+? \(${MSISDN}\)`),
    },
  },

  {
    // corpus (lonla01/flutter_cashflow_redesign): "Transfert de 3054 FCFA effectue avec succes a
    // NAME (237...) le <date>. FRAIS 10 FCFA. transaction Id: 18387577522. Reference: <sender's
    // text>. Nouveau solde est: 314756 FCFA."
    id: "a.fr.uv_out.transfert_de_effectue",
    kind: "UV_OUT",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bTransfert de ${AMT} effectue avec succes a .{1,120}? \([^()]*\) le ${DATE}`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bTransfert de ${MONEY} effectue avec succes a `),
      counterparty_name: pattern(String.raw`\beffectue avec succes a ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\beffectue avec succes a [^()]+? \(${MSISDN}\)`),
    },
  },

  // ---- UV_IN: transfer received ---------------------------------------------------------
  {
    // "Vous avez recu [un transfert de] 2000 FCFA de NAME (2376...) le ... / sur votre
    // compte mobile money a ...". "Reference:" / "Message de l'expediteur:" are the sender's
    // free text, not the operator reference. Corpus (2018): a company without a number, "Vous
    // avez recu 5000 FCFA de VEO SA sur votre compte Mobile Money 2018-01-29 ...".
    id: "a.fr.uv_in.recu",
    kind: "UV_IN",
    language: "fr",
    direction: "in",
    match: skeleton(
      String.raw`\bVous avez recu (?:un transfert de )?${AMT} de .{1,120}? (?:\([^()]*\)|sur votre compte mobile money)`,
    ),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bavez recu (?:un transfert de )?${MONEY} de `),
      counterparty_name: pattern(
        String.raw`\bavez recu (?:un transfert de )?${AMT} de ${NAME} (?:\(|sur votre compte mobile money)`,
      ),
      // corpus: the number can be followed by the name again ("(237679963987 HONORINE ...)").
      counterparty_msisdn: pattern(
        String.raw`\bavez recu (?:un transfert de )?${AMT} de [^()]+? \(${MSISDN}(?: [^()]*)?\)`,
      ),
    },
  },
  {
    // "You have received 7500 XAF from NAME (2376...) on your mobile money account at ..."
    // and (corpus) "You have received 5000 XAF of NAME (2376... NAME) on your Mobile Money
    // <date> account." Whether it is float or UV depends on who sent it, which the text does
    // not say: it is read as UV_IN (see the README).
    id: "a.en.uv_in.received",
    kind: "UV_IN",
    language: "en",
    direction: "in",
    match: skeleton(String.raw`\bYou have received ${AMT} (?:from|of) .{1,120}? \([^()]*\) on your mobile money`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\breceived ${MONEY} (?:from|of) `),
      counterparty_name: pattern(String.raw`\breceived ${AMT} (?:from|of) ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\breceived ${AMT} (?:from|of) [^()]+? \(${MSISDN}(?: [^()]*)?\)`),
    },
  },

  // ---- The terse wording family (MTN Benin, 2025): "<What> <amount>F <a|de> NAME (number)
  // <date> ... Solde:<balance>F ... ID:<reference>". "Ref:" is the sender's free text; the
  // operator's reference is the numeric ID, read up to the first non-digit (it can be glued
  // to "Frais:").
  {
    // corpus: "Transfert 10000F de AEIG BULK (2290151774272) 2025-11-25 19:36:20
    // Ref:AEIGPmtForfaitComm Solde:14607F ID:11012760098"
    id: "a.fr.uv_in.terse",
    kind: "UV_IN",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`^Transfert ${AMT} de [^()]{1,120}?\(${PHONE}\b[^()]*\) ?${DATE}`),
    fields: {
      ...TERSE,
      amount: pattern(String.raw`^Transfert ${MONEY} de `),
      counterparty_name: pattern(String.raw`^Transfert ${AMT} de ${NAME} ?\(`),
      counterparty_msisdn: pattern(String.raw`^Transfert ${AMT} de [^()]+?\(${MSISDN}\b`),
    },
  },
  {
    // corpus, the credited wallet's copy of a cash-in: "Depot recu 3250F de NAME (229... - )
    // le <date> Solde:4222F ID:10932256987Frais:0F." Read like operator_b's credited copy (DEP, in).
    id: "a.fr.dep.recu_terse",
    kind: "DEP",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`^Depot recu ${AMT} de [^()]{1,120}?\(${PHONE}\b`),
    fields: {
      ...TERSE,
      amount: pattern(String.raw`^Depot recu ${MONEY} de `),
      counterparty_name: pattern(String.raw`^Depot recu ${AMT} de ${NAME} ?\(`),
      counterparty_msisdn: pattern(String.raw`^Depot recu ${AMT} de [^()]+?\(${MSISDN}\b`),
    },
  },
  // corpus: "Paiement 500F a MTN BUNDLES 2025-11-15 22:21:49 Frais:0F Solde:4572F ID:..." (AIRTIME)
  // and "Paiement 2900F a NAME (229...) <date> Frais:0F Solde:5022F ID:..." (a payment).
  ...merchantDebit("terse", "fr", (m) => String.raw`^Paiement ${AMT} a ${m}[^()]{1,120}?(?:\(${PHONE}\) )?${DATE}`, {
    ...TERSE,
    amount: pattern(String.raw`^Paiement ${MONEY} a `),
    counterparty_name: pattern(String.raw`^Paiement ${AMT} a (?<v>[^()]+?) ?(?:\(|${DATE})`),
    counterparty_msisdn: pattern(String.raw`^Paiement ${AMT} a [^()]+?\(${MSISDN}\)`),
  }),

  // ---- UV_WITH: withdrawals -------------------------------------------------------------
  {
    // Agent side: "Cash out initiated by NAME (2376...) on <date> is successfully completed.
    // You can payout the amount: 550 XAF in cash to the customer. Transaction ID: ...|
    // Message: Your new balance: 550 XAF. Added commission: 5 XAF." The agent receives the
    // customer's e-value: direction in. The commission is not a fee. No "\b" before "Cash":
    // a promotion is glued to it in real texts ("double your commissionCash out ...").
    id: "a.en.with.cash_out_agent",
    kind: "UV_WITH",
    language: "en",
    direction: "in",
    match: skeleton(String.raw`Cash ?out initiated by .{1,120}? is successfully completed`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bpayout the amount\s*:?\s*${MONEY}`),
      counterparty_name: pattern(String.raw`Cash ?out initiated by ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`Cash ?out initiated by [^()]+? \(${MSISDN}\)`),
    },
  },
  {
    // corpus, customer side: "You NAME (2376...) have via agent: NAME (2376...), withdrawn
    // 18000 XAF from your mobile money account: ... Your new balance: 14278 XAF. Fee paid:
    // 220 XAF. ..."
    id: "a.en.with.via_agent",
    kind: "UV_WITH",
    language: "en",
    direction: "out",
    match: skeleton(String.raw`\bhave via agent\s*:? .{1,120}? withdrawn ${AMT} from your mobile money account`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bwithdrawn ${MONEY} from `),
      counterparty_name: pattern(String.raw`\bvia agent\s*:? ${NAME} \(`),
      counterparty_msisdn: pattern(String.raw`\bvia agent\s*:? [^()]+? \(${MSISDN}\)`),
    },
  },
  {
    // corpus, agent side (2018): "Le retrait de 1000FCFA initie pour NAME le 2018-10-05 08:18:33
    // a ete approuve le 2018-10-05 08:18:33.Nouveau solde: 43225FCFA". The agent initiated the
    // customer's cash-out and receives the e-value: direction in.
    id: "a.fr.with.initie_pour",
    kind: "UV_WITH",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bLe retrait de ${AMT} initie pour .{1,120}? le ${DATE}.{0,20}? a ete approuve`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bLe retrait de ${MONEY} initie pour `),
      counterparty_name: pattern(String.raw`\binitie pour (?<v>.+?) le ${DATE}`),
    },
  },
  {
    // Customer side: "[Vous, NAME (2376...)] avez effectue avec succes le retrait de 2500 FCFA
    // de votre compte mobile money, chez AGENT le 2018-02-02 ... Votre nouveau solde est 425.
    // Frais 0." The match starts at "avez", so the customer's own number is never read.
    id: "a.fr.with.retrait",
    kind: "UV_WITH",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bavez effectue avec succes le retrait de ${AMT} de votre compte`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\ble retrait de ${MONEY} de votre compte`),
      counterparty_name: pattern(String.raw`\bchez (?<v>.+?) le ${DATE}`),
    },
  },
  {
    // Terse form: "Retrait 4000F via AGENT(229... - location) <date> Solde:10482F Frais:125F
    // ID:11013738601".
    id: "a.fr.with.terse",
    kind: "UV_WITH",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bRetrait ${AMT} via `),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bRetrait ${MONEY} via `),
      counterparty_name: pattern(String.raw`\bRetrait ${AMT} via ${NAME} ?\(`),
      counterparty_msisdn: pattern(String.raw`\bRetrait ${AMT} via [^()]+?\(${MSISDN}\b`),
      operator_ref: labelled(String.raw`${NOT_EXTERNAL}\bID`, REF),
    },
  },

  // ---- AIRTIME, then merchant payments (no kind) -----------------------------------------
  {
    // corpus, agent line (2018): "Recharge de 100 FCFA a 237652286653 le 2018-10-05 10:56:08
    // effectue avec succes. Commission: 5Fcfa. Nouveau solde: 8,125FCFA". The wallet moved by
    // the amount only (8225 before, 8125 after on the same line): the commission is paid to
    // another account and is not read.
    id: "a.fr.airtime.recharge_a",
    kind: "AIRTIME",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bRecharge de ${AMT} a ${PHONE} le ${DATE}.{0,20}? effectue avec succes`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bRecharge de ${MONEY} a `),
      counterparty_msisdn: pattern(String.raw`\bRecharge de ${AMT} a ${MSISDN}\b`),
    },
  },
  // "Votre paiement de 200 XAF a MTNC AIRTIME a ete effectue le ..."
  {
    // corpus: a transfer to another network is booked as a payment to "Transfer To non MoMo
    // Account" ("Votre paiement de 17000 XAF a Transfer To non MoMo Account a ete effectue le
    // ... Frais: 378 XAF ..."): money sent, UV_OUT. The receiving number comes in a second SMS.
    id: "a.fr.uv_out.paiement_non_momo",
    kind: "UV_OUT",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bVotre paiement de ${AMT} a Transfer To non MoMo Account a ete effectue`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bVotre paiement de ${MONEY} a `),
      counterparty_name: pattern(String.raw`\bVotre paiement de ${AMT} a (?<v>.+?) a ete effectue`),
    },
  },
  // "Votre paiement de 200 XAF a MTNC AIRTIME a ete effectue le ..."; corpus (2021): "Votre
  // paiement de 100 FCFA pour MTNC AIRTIME a ete effectue le ...".
  ...merchantDebit(
    "paiement",
    "fr",
    (m) => String.raw`\bVotre paiement de ${AMT} (?:a|pour) ${m}.{1,120}? a ete effectue`,
    {
      amount: pattern(String.raw`\bVotre paiement de ${MONEY} (?:a|pour) `),
      counterparty_name: pattern(String.raw`\bVotre paiement de ${AMT} (?:a|pour) (?<v>.+?) a ete effectue`),
    },
  ),
  // "Your payment of 500 XAF to MTN Bundle Boost has been completed at ..."
  ...merchantDebit("payment", "en", (m) => String.raw`\bYour payment of ${AMT} to ${m}.{1,120}? has been completed`, {
    amount: pattern(String.raw`\bYour payment of ${MONEY} to `),
    counterparty_name: pattern(String.raw`\bYour payment of ${AMT} to (?<v>.+?) has been completed`),
  }),
  // "Une transaction de 500 XAF effectuee par MTNC BUNDLES_FORFAITS (MTN_Bundles) sur votre
  // compte d'argent mobile s'est terminee avec succes ... Les frais s'elevaient a 0 XAF ..."
  ...merchantDebit(
    "transaction",
    "fr",
    (m) => String.raw`\bUne transaction de ${AMT} effectuee par ${m}.{1,120}? sur votre compte`,
    {
      amount: pattern(String.raw`\bUne transaction de ${MONEY} effectuee par `),
      counterparty_name: pattern(String.raw`\beffectuee par ${NAME} (?:\(|sur votre compte)`),
    },
  ),
  // corpus: "A transaction of 50 XAF by MTNC BUNDLES_FORFAITS (MTN_Bundles) on your mobile
  // money account successfully completed at ... Fee was 0 XAF, loyalty fee was 0 ..."
  ...merchantDebit(
    "transaction",
    "en",
    (m) => String.raw`\bA transaction of ${AMT} by ${m}.{1,120}? on your mobile money account`,
    {
      amount: pattern(String.raw`\bA transaction of ${MONEY} by `),
      counterparty_name: pattern(String.raw`\bA transaction of ${AMT} by ${NAME} (?:\(|on your)`),
    },
  ),
  {
    // "Paiement effectue pour 10000 FCFA a ONAFRIQ UEMOA OUT le ... Frais 500 FCFA. Solde
    // courant: 19618 FCFA. ... ID de la transaction: 9667597391. External id :12715263493."
    id: "a.fr.payment.effectue",
    kind: null,
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bPaiement effectue pour ${AMT} a `),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bPaiement effectue pour ${MONEY} a `),
      counterparty_name: pattern(String.raw`\bPaiement effectue pour ${AMT} a (?<v>.+?) le ${DATE}`),
    },
  },
  {
    // School-fee receipt: "Paiement reussi de PAYEE Date 06/09/2018 11:24:47 Montant 15000
    // XAF Pay ID 12367. Votre Pay ID est votre preuve de paiement."
    id: "a.fr.payment.reussi",
    kind: null,
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bPaiement reussi de .{1,160}? Date \d{2}/\d{2}/\d{4}`),
    fields: {
      amount: labelled(String.raw`\bMontant`, MONEY),
      operator_ref: labelled(String.raw`\bPay ID`, REF),
      counterparty_name: pattern(String.raw`\bPaiement reussi de (?<v>.+?) Date \d`),
    },
  },
  {
    // "Paiement Successintegral de 1000 a CAISSE EXEMPLE 237600000004. Merci d'utiliser MTN
    // MoMo." The amount has no currency but sits in the operator's own wording.
    id: "a.fr.payment.success_integral",
    kind: null,
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bPaiement Success ?integral de ${AMT} a `),
    fields: {
      amount: pattern(String.raw`\bSuccess ?integral de ${MONEY} a `),
      counterparty_name: pattern(String.raw`\bSuccess ?integral de ${AMT} a (?<v>.+?) \+?\d{8,15}\b`),
      counterparty_msisdn: pattern(String.raw`\bSuccess ?integral de ${AMT} a .+? ${MSISDN}\b`),
    },
  },
  {
    // corpus: "You've received a MOMOKASH loan worth 5300.0FCFA from ORIS Finance. Amount to be
    // refunded is 5698.0FCFA ..." A loan credited: no kind covers it (never a deposit).
    id: "a.en.loan.received",
    kind: null,
    language: "en",
    direction: "in",
    match: skeleton(String.raw`\bYou've received an? \w+ loan worth ${AMT} from `),
    fields: {
      amount: pattern(String.raw`\bloan worth ${MONEY} from `),
      counterparty_name: pattern(String.raw`\bloan worth ${AMT} from (?<v>[^.]+?)\.`),
    },
  },
  {
    // corpus: "ORIS Finance thank you for the repayment of 6126 FCFA from your loan MOMOKASH, ..."
    id: "a.en.loan.repayment",
    kind: null,
    language: "en",
    direction: "out",
    match: skeleton(String.raw`^[^.]{1,60}? thank you for the repayment of ${AMT} from your loan`),
    fields: {
      amount: pattern(String.raw`\brepayment of ${MONEY} from your loan`),
      counterparty_name: pattern(String.raw`^(?<v>[^.]{1,60}?) thank you for the repayment of`),
    },
  },
  {
    // corpus: "You have received an advance of 50XAF on <date> from MMC to repay with Access
    // Fee:1XAF  Fee:0.5% daily,Max Fee:18.5% ..." The percentages are rates, not fees.
    id: "a.en.loan.advance",
    kind: null,
    language: "en",
    direction: "in",
    match: skeleton(String.raw`\bYou have received an advance of ${AMT} on .{0,40}? from \S+ to repay`),
    fields: {
      amount: pattern(String.raw`\badvance of ${MONEY} on `),
      fee: labelled(String.raw`\bAccess Fee`, MONEY),
      counterparty_name: pattern(String.raw`\bfrom (?<v>\S+) to repay`),
    },
  },
  {
    // Automatic repayment of an advance: "The amount 1100 XAF has been repaid from your
    // account FRI:.../MM on ... Financial transaction id: ..."
    id: "a.en.payment.repaid",
    kind: null,
    language: "en",
    direction: "out",
    match: skeleton(String.raw`\bThe amount ${AMT} has been repaid from your account`),
    fields: { ...COMMON, amount: pattern(String.raw`\bThe amount ${MONEY} has been repaid`) },
  },

  // ---- BAL: balance replies ---------------------------------------------------------------
  // The airtime credit ("Solde Credit de communication", "Airtime balance") is not the MoMo
  // balance: each pattern reads only the wallet's own label.
  {
    // "Solde Courant: 0 FCFA ; Solde disponible: 0 FCFA ; Solde Credit de communication: ..."
    id: "a.fr.bal.solde_courant",
    kind: "BAL",
    language: "fr",
    match: skeleton(String.raw`\bSolde courant\s*:\s*${AMT}\s*;\s*Solde disponible`),
    fields: { balance_after: labelled(String.raw`\bSolde courant`, MONEY) },
  },
  {
    // "Current balance: 8910 FCFA ; Available balance: 8910 FCFA ; Airtime balance: 7,943 ..."
    id: "a.en.bal.current",
    kind: "BAL",
    language: "en",
    match: skeleton(String.raw`\bCurrent balance\s*:\s*${AMT}\s*;\s*Available balance`),
    fields: { balance_after: labelled(String.raw`\bCurrent balance`, MONEY) },
  },
  {
    // Roaming reply by SMS (ussd.md): "Mobile Money Balance: 0 FCFA. Airtime balance: 7,943FCFA."
    id: "a.en.bal.mobile_money",
    kind: "BAL",
    language: "en",
    match: skeleton(String.raw`\bMobile Money Balance\s*:\s*${AMT}`),
    fields: { balance_after: labelled(String.raw`\bMobile Money Balance`, MONEY) },
  },
];
