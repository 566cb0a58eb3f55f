// operator_b (Orange Money style) wordings, most specific first.
//
// Orange names each party as "MSISDN NAME" (number first, 9 local digits in Cameroon) and
// details the operation in labelled fields ("Montant transaction :", "ID transaction :",
// "Frais :", "Nouveau Solde :"). Its decimal point is "." (see NUMBER_FORMATS).

import { AMT, labelled, MONEY, MSISDN, NOT_EXTERNAL, pattern, PHONE, REF, skeleton } from "./fields.ts";
import type { Direction, FieldPatterns, Language, MessageKind, Rule } from "./types.ts";

// "Montant Net", "Montant Net du Credit" and "montant net debite" are amount +/- fee or
// commission: the patterns require "Montant" to be followed by its value or by "transaction".
const AMOUNT = labelled(String.raw`\bmontant (?:de )?(?:la )?transaction|\btransaction amount|\bmontant`, MONEY);
const FEE = labelled(String.raw`\bfrais|\bcharges|\bfees?`, MONEY);
// The agent's commission on a cash-in, paid into the same wallet: the receipt's "Montant Net
// Debite" is the amount and fee less it (16000 + 0 - 32 = 15968). Read only where the receipt
// says so; elsewhere "Commission" is the customer's side of the fee table or paid to another
// account.
const COMMISSION = labelled(String.raw`\bcommission`, MONEY);
// "Votre solde est de : 12345.00 FCFA" (Orange Burkina Faso), "Votre solde disponible est de:"
// and "Your available balance is" (Orange DRC).
const BALANCE = labelled(
  String.raw`\bsolde (?:disponible )?est de|nouveau solde|new balance|available balance is|\bsolde`,
  MONEY,
);
// "avec le Code : 358619" is the withdrawal code, not a reference: "code" is not a label.
const OPERATOR_REF = labelled(
  String.raw`${NOT_EXTERNAL}(?:\bid (?:de )?transaction|\bno de transaction|\btxn id|\btransaction id|\bref(?:erence)?|\bid trans|\btrans id|\bid)`,
  REF,
);
const COMMON: FieldPatterns = { amount: AMOUNT, fee: FEE, balance_after: BALANCE, operator_ref: OPERATOR_REF };
/** Orange DRC prints its fee as "Cout:0.0000USD". */
const DRC_FEE = labelled(String.raw`\bcout`, MONEY);
/** A prepaid card's receipt: its balance is the card's, never read as the wallet's. */
const CARD: FieldPatterns = { amount: AMOUNT, fee: FEE, operator_ref: OPERATOR_REF };

/**
 * Wordings "<operation> ... NUMBER NAME[ <after>]. <details>": one rule each, the party read
 * after `before`.
 */
function partyMoves(
  wordings: readonly (readonly [MessageKind, Language, Direction, string, string, string?])[],
): Rule[] {
  return wordings.map(([kind, language, direction, wording, before, after = ""]) => ({
    id: `b.${language}.${kind.toLowerCase()}.${wording}`,
    kind,
    language,
    direction,
    match: skeleton(String.raw`${before}${PHONE}\b`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`${before}${MSISDN}\b`),
      counterparty_name: pattern(String.raw`${before}${PHONE} (?<v>[^.]+?)${after}\.`),
    },
  }));
}

export const OPERATOR_B_RULES: readonly Rule[] = [
  // ---- Agent float, commission, reversal, mini statement ------------------------------------
  // No public text of these kinds was found: these rules follow Orange's receipt wording
  // ("<operation> reussi ... NUMBER NAME. Informations detaillees: Montant: ..., ID transaction:
  // ..., Nouveau Solde: ..." and its English line "Successful <operation> ... Details: ...") and
  // are measured on constructed texts only (testdata/corpus.jsonl, split "constructed").
  ...partyMoves([
    ["FLOAT_OUT", "fr", "out", "vers", String.raw`\bTransfert de float reussi vers `],
    ["FLOAT_OUT", "en", "out", "to", String.raw`\bSuccessful float transfer to `],
    ["FLOAT_IN", "fr", "in", "recu", String.raw`\bTransfert de float recu de `],
    ["FLOAT_IN", "en", "in", "from", String.raw`\bSuccessful float transfer from `],
    ["FLOAT_WITH", "fr", "out", "chez", String.raw`\bRetrait de float reussi chez `],
    ["FLOAT_WITH", "en", "out", "at", String.raw`\bSuccessful float withdrawal at `],
    [
      "REV",
      "fr",
      "in",
      "annulation",
      String.raw`\bAnnulation de (?:la )?transaction reussie\.? ?Le transfert \S+ vers `,
      " a ete annule",
    ],
    [
      "REV",
      "en",
      "in",
      "reversal",
      String.raw`\bSuccessful transaction reversal\.? ?The transfer \S+ to `,
      " has been reversed",
    ],
  ]),
  ...(
    [
      ["COM", "fr", String.raw`\bPaiement de commission reussi\b`],
      ["COM", "en", String.raw`\bSuccessful commission payment\b`],
      ["COM_SWEEP", "fr", String.raw`\bTransfert de commission reussi vers votre compte principal\b`],
      ["COM_SWEEP", "en", String.raw`\bSuccessful commission transfer to your main account\b`],
    ] as const
  ).map(([kind, language, match]): Rule => ({
    // A commission credited (COM) or moved to the main account (COM_SWEEP): the wallet whose
    // balance is reported gains it. Amount and balance are read so the balance chain counts it.
    id: `b.${language}.${kind.toLowerCase()}`,
    kind,
    language,
    direction: "in",
    match: skeleton(match),
    fields: COMMON,
  })),
  {
    // Mini statement: several amounts, none of them this message's; nothing is read.
    id: "b.fr.rec.mini_releve",
    kind: "OPERATOR_B_REC",
    language: "fr",
    match: skeleton(String.raw`^Mini[- ]releve\s*:`),
  },
  {
    id: "b.en.rec.mini_statement",
    kind: "OPERATOR_B_REC",
    language: "en",
    match: skeleton(String.raw`^Mini[- ]statement\s*:`),
  },

  // ---- DEP: agent cash-in ---------------------------------------------------------------
  {
    // Agent side: "Depot vers 699992396 ABDOU AZIZ reussi from 656118851 BLESSED ENTERPRISE.
    // Informations detaillees : Montant transaction : 16000FCFA, ID de Transaction : CI...,
    // Frais : 0FCFA, Commission : 32 FCFA, Montant Net Debite : 15968FCFA, Nouveau Solde : ..."
    // The commission is credited in the same receipt: the wallet moved by -15968.
    id: "b.fr.dep.vers",
    kind: "DEP",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bDepot vers ${PHONE}\b.{0,120}? reussi (?:from|de|par) ${PHONE}\b`),
    fields: {
      ...COMMON,
      commission: COMMISSION,
      counterparty_msisdn: pattern(String.raw`\bDepot vers ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bDepot vers ${PHONE} (?<v>.+?) reussi (?:from|de|par) `),
    },
  },
  {
    // Credited customer's copy: "Depot effectue par 690045933 AGENT to 690197100 CUSTOMER.
    // Informations detaillees: Montant de transaction : 2000 FCFA, ... Montant Net du Credit :
    // 2000 FCFA, Nouveau Solde : 20022.43 FCFA." The balance is the customer's (it chains
    // from one deposit to the next), so the reader was credited: direction in. The
    // counterparty is the customer, as for the agent-side wording.
    id: "b.fr.dep.effectue",
    kind: "DEP",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bDepot effectue par ${PHONE}\b.{0,120}? (?:to|vers|a) ${PHONE}\b`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bDepot effectue par ${PHONE}\b.{0,120}? (?:to|vers|a) ${MSISDN}\b`),
      counterparty_name: pattern(
        String.raw`\bDepot effectue par ${PHONE}\b.{0,120}? (?:to|vers|a) ${PHONE} (?<v>.+?)\. (?:Informations|Details)`,
      ),
    },
  },

  // ---- UV_IN / UV_OUT: "Transfert de A vers B reussi." -----------------------------------
  // The text names both parties but not which one is us. The recipient's copy carries
  // "Details:" (the real capture on agent 696103864, and cm-b-074); the sender's copy does
  // not (cm-b-079). That structural difference decides the kind.
  {
    id: "b.fr.uv_in.transfert_details",
    kind: "UV_IN",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bTransfert de ${PHONE}\b.{0,120}? vers ${PHONE}\b.{0,120}? reussi\.? ?Details\s*:`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bTransfert de ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bTransfert de ${PHONE} (?<v>.+?) vers ${PHONE}\b`),
    },
  },
  {
    id: "b.fr.uv_out.transfert",
    kind: "UV_OUT",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bTransfert de ${PHONE}\b.{0,120}? vers ${PHONE}\b.{0,120}? reussi\b`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bTransfert de ${PHONE}\b.{0,120}? vers ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bTransfert de ${PHONE}\b.{0,120}? vers ${PHONE} (?<v>.+?) reussi\b`),
    },
  },
  // corpus (English line, real capture 2026): "Successful transfer from 696413104 NAME to
  // 696103864 NAME. Details: Transaction ID: PP..., Transaction amount: 1300000 FCFA, Charges:
  // 0 FCFA, Commission: 0 FCFA, Net amount :1300000 FCFA, New balance: 6335788.6 FCFA." Read like
  // the French wording: "Details:" marks the recipient's copy.
  {
    id: "b.en.uv_in.successful_transfer_details",
    kind: "UV_IN",
    language: "en",
    direction: "in",
    match: skeleton(
      String.raw`\bSuccessful transfer from ${PHONE}\b.{0,120}? to ${PHONE}\b[^.]{0,120}\.? ?Details\s*:`,
    ),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bSuccessful transfer from ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bSuccessful transfer from ${PHONE} (?<v>.+?) to ${PHONE}\b`),
    },
  },
  {
    id: "b.en.uv_out.successful_transfer",
    kind: "UV_OUT",
    language: "en",
    direction: "out",
    match: skeleton(String.raw`\bSuccessful transfer from ${PHONE}\b.{0,120}? to ${PHONE}\b`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bSuccessful transfer from ${PHONE}\b.{0,120}? to ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bSuccessful transfer from ${PHONE}\b.{0,120}? to ${PHONE} (?<v>[^.]+?)\.`),
    },
  },
  // ---- Orange DRC, 2020: "Trans. ID: <ref>. ..." first --------------------------------------
  // The reference's prefix names the operation, as on every Orange line (CI cash-in, CO
  // cash-out, PP transfer, MP payment): the wording alone ("vous avez recu", "you have sent")
  // reads like a transfer. Only the prefix and wording pairs seen on real texts have a rule.
  {
    // corpus: "Trans. ID: CI200530.1831.D47100 vous avez envoye de 1.0000 USD a 995282840.Votre
    // solde disponible est de 9.0000USD.Cout:0.0000USD" (agent line: its cash-in to a customer).
    id: "b.fr.dep.trans_id_envoye",
    kind: "DEP",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`^Trans\.? ?ID ?: ?CI[\w.]*\d[\w.]* vous avez envoye de ${AMT} a ${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bvous avez envoye de ${MONEY} a `),
      fee: DRC_FEE,
      counterparty_msisdn: pattern(String.raw`\bvous avez envoye de ${AMT} a ${MSISDN}\b`),
    },
  },
  {
    // corpus: "Trans. ID: CO200606.2320.C79855. Vous avez recu 1000.0000 CDF. Venant de 995282840
    // BOB DITEND. Votre solde disponible est de: 5500.0000 CDF." (agent line: a customer's
    // cash-out, the agent receives the e-value).
    id: "b.fr.with.trans_id_recu",
    kind: "UV_WITH",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`^Trans\.? ?ID ?: ?CO[\w.]*\d[\w.]*\.? Vous avez recu ${AMT}\.? Venant de ${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bVous avez recu ${MONEY}\.? Venant de `),
      fee: DRC_FEE,
      counterparty_msisdn: pattern(String.raw`\bVenant de ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bVenant de ${PHONE} (?<v>[^.]+?)\.`),
    },
  },
  {
    // corpus: "Trans ID: CO200530.1836.A40286. Dear Customer. You have sent USD 1.0000 to 975886099
    // ALBERT OMBA SHENYEMA. Your available balance is USD 5.2960." (customer line: cash-out at
    // the agent named).
    id: "b.en.with.trans_id_sent",
    kind: "UV_WITH",
    language: "en",
    direction: "out",
    match: skeleton(
      String.raw`^Trans\.? ?ID ?: ?CO[\w.]*\d[\w.]*\.? Dear Customer\. You have sent ${AMT} to ${PHONE}\b`,
    ),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bYou have sent ${MONEY} to `),
      fee: DRC_FEE,
      counterparty_msisdn: pattern(String.raw`\bYou have sent ${AMT} to ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bYou have sent ${AMT} to ${PHONE} (?<v>[^.]+?)\.`),
    },
  },
  {
    // "Vous avez recu 395 USD de ILOKO 0844452411. Nouveau solde: 420.104 USD. Ref: PP..."
    // (Orange DRC: name before number).
    id: "b.fr.uv_in.recu",
    kind: "UV_IN",
    language: "fr",
    direction: "in",
    // corpus, Orange Mali and Cote d'Ivoire: "Vous avez recu un transfert de 3300 FCFA du
    // 79531543. ID: PP251226.2111.C98322. Consultez votre nouveau solde ..." (no balance);
    // Orange Madagascar: "... de 600Ar venant du 0325063949 Nouveau Solde: 3085Ar. Trans Id: PP..."
    match: skeleton(String.raw`\bVous avez recu (?:un transfert de )?${AMT} (?:venant )?d(?:e|u) .{0,120}?${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bavez recu (?:un transfert de )?${MONEY} (?:venant )?d(?:e|u) `),
      counterparty_msisdn: pattern(
        String.raw`\bavez recu (?:un transfert de )?${AMT} (?:venant )?d(?:e|u) (?:.{1,120}? )?${MSISDN}\b`,
      ),
      counterparty_name: pattern(
        String.raw`\bavez recu (?:un transfert de )?${AMT} d(?:e|u) (?:la part d(?:e|u) )?(?!la part d)(?<v>[^\d.]+?) ${PHONE}\b`,
      ),
    },
  },

  {
    // corpus, Orange Guinea: "Bonjour, Envoi de: 4000.00GNF vers le 622001839, reference:
    // PP260130.2102.C58818. Orange Money vous remercie" (GNF: the amount is null).
    id: "b.fr.uv_out.envoi_vers_le",
    kind: "UV_OUT",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bEnvoi de\s*:?\s*${AMT} vers le ${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bEnvoi de\s*:?\s*${MONEY} vers le `),
      counterparty_msisdn: pattern(String.raw`\bvers le ${MSISDN}\b`),
    },
  },

  // ---- UV_WITH: withdrawals ---------------------------------------------------------------
  {
    // Customer side: "Retrait d'argent reussi par le 656939968 avec le Code : 358619.
    // Informations detaillees : Montant: 10000 FCFA, Frais: 124 FCFA, No de transaction CO...,
    // montant net debite 10124 FCFA, Nouveau solde: 11057.81 FCFA." 656939968 is the agent.
    id: "b.fr.with.client",
    kind: "UV_WITH",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bRetrait d'argent reussi par le ${PHONE}\b`),
    fields: { ...COMMON, counterparty_msisdn: pattern(String.raw`\breussi par le ${MSISDN}\b`) },
  },
  {
    // Agent side: "Retrait reussi du 655659226 CUSTOMER par 657897819 AGENT. ... Montant:
    // 3000.00 FCFA, Frais: 0.00 FCFA, Commission: 33.00 FCFA, Montant net: 3090.00 FCFA,
    // Solde: 187587.94 FCFA." The agent receives the customer's e-value: direction in.
    id: "b.fr.with.agent",
    kind: "UV_WITH",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bRetrait reussi du ${PHONE}\b.{0,120}? par ${PHONE}\b`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bRetrait reussi du ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bRetrait reussi du ${PHONE} (?<v>.+?) par ${PHONE}\b`),
    },
  },
  {
    // English agent line: "CashOut success to 693377266 MANGA from 696103864 WONDER PHONE.
    // The details are as follows: transaction amount: 500000 FCFA, charges: 0 FCFA,
    // commission: 0 FCFA, TXN id :CO..." Which wallet was debited is disputed (see the
    // sample's notes), so the direction is left null.
    id: "b.en.with.cashout",
    kind: "UV_WITH",
    language: "en",
    direction: null,
    match: skeleton(String.raw`\bCash ?Out success to ${PHONE}\b.{0,120}? from ${PHONE}\b`),
    fields: {
      ...COMMON,
      counterparty_msisdn: pattern(String.raw`\bsuccess to ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bsuccess to ${PHONE} (?<v>.+?) from ${PHONE}\b`),
    },
  },

  {
    // corpus, Orange DRC: "Le retrait de 400 USD est effectue par le 0894422463 BULULU. Frais:
    // 6.4 USD. Nouveau solde: 13.704 USD. Ref: CO241108.1325.B77543" (customer side: out).
    id: "b.fr.with.retrait_effectue_par",
    kind: "UV_WITH",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bLe retrait de ${AMT} est effectue par le ${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bLe retrait de ${MONEY} est effectue`),
      counterparty_msisdn: pattern(String.raw`\beffectue par le ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\beffectue par le ${PHONE} (?<v>[^.]+?)\.`),
    },
  },

  {
    // corpus, Orange Mali agent line: "Le retrait de 1000 FCFA sur le 76396922 a ete effectue.
    // Commission: 0 FCFA. Nouveau solde: 3501 FCFA. ID: CO260823.1704.B48859. OFM MALI" (the
    // customer's cash-out seen from the agent, who receives the e-value: in). Whether the
    // commission is paid into this wallet is not known: it is not read.
    id: "b.fr.with.retrait_sur_le",
    kind: "UV_WITH",
    language: "fr",
    direction: "in",
    match: skeleton(String.raw`\bLe retrait de ${AMT} sur le ${PHONE} a ete effectue`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bLe retrait de ${MONEY} sur le `),
      counterparty_msisdn: pattern(String.raw`\bsur le ${MSISDN} a ete effectue`),
    },
  },
  {
    // corpus, Orange Burkina Faso: "Vous avez retire 15000.00 FCFA aupres de l agent 70123456
    // NAME, Trans ID : CO260927.2307.45344437. Votre solde est de : 12345.00 FCFA."
    id: "b.fr.with.retire_aupres",
    kind: "UV_WITH",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bVous avez retire ${AMT} aupres de l'? ?agent ${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bVous avez retire ${MONEY} aupres`),
      counterparty_msisdn: pattern(String.raw`\bagent ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bagent ${PHONE} (?<v>[^,.]+?),`),
    },
  },

  // ---- UV_OUT: "Vous avez transfere ... au numero ..." (Orange Burkina Faso) ---------------------
  {
    // corpus: "Vous avez transfere 10000.00 FCFA, Frais: 0.0 FCFA, Taxe: 0.0 FCFA au numero
    // 70123456,MADENNE ESTHER. Votre solde est de 5000.00 FCFA. ID Trans: PP260928.1945.60787425."
    id: "b.fr.uv_out.transfere_au_numero",
    kind: "UV_OUT",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bVous avez transfere ${AMT},.{0,80}? au numero ${PHONE}\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bVous avez transfere ${MONEY},`),
      counterparty_msisdn: pattern(String.raw`\bau numero ${MSISDN}\b`),
      counterparty_name: pattern(String.raw`\bau numero ${PHONE} ?, ?(?<v>[^.]+?)\.`),
    },
  },

  // ---- AIRTIME: bundles bought from the wallet ------------------------------------------------
  {
    // corpus: "Rechargement reussi. Montant de la transaction : 50 FCFA, ID transaction :
    // RC210830.1330.B02764, Frais : 0 FCFA, Commission : 0 FCFA, Nouveau Solde : 4038.5FCFA Other
    // msisdn 655345054." Airtime bought from the wallet, for another number when one is named.
    id: "b.fr.airtime.rechargement",
    kind: "AIRTIME",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`^Rechargement reussi\.? ?Montant de la transaction\s*:?\s*${AMT}`),
    fields: { ...COMMON, counterparty_msisdn: pattern(String.raw`\bOther msisdn\s*:?\s*${MSISDN}\b`) },
  },
  {
    // corpus: "Felicitations, vous venez d'effectuer un payement de 300 FCFA pour 300U = 850 Mo/3J.
    // N° de transaction : MP260802.0716.D80550. Nouveau solde : 31.88 FCFA."
    id: "b.fr.airtime.payement_forfait",
    kind: "AIRTIME",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bvous venez d'effectuer un payement de ${AMT} pour `),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bun payement de ${MONEY} pour `),
      operator_ref: labelled(String.raw`\bN\W{0,2} de transaction`, REF),
    },
  },

  {
    // corpus, Orange Guinea: "Bonjour,vous venez d efectuar un paiement de 14000.00GNF chez Achat
    // de pass pour tiers2.Frais 0.00GNF, Nouveau Solde 13432045.55GNF, Ref :MP..." A data pass
    // bought is AIRTIME. GNF is not FCFA: the amounts are null, the reference is read.
    id: "b.fr.airtime.paiement_chez_pass",
    kind: "AIRTIME",
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bvous venez d'? ?ef+ectu\w+ un paiement de ${AMT} chez [^.]*?\b(?:pass|forfaits?)\b`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bun paiement de ${MONEY} chez `),
      counterparty_name: pattern(String.raw`\bun paiement de ${AMT} chez (?<v>[^.]+?)\.`),
    },
  },
  // ---- Prepaid card (no kind, not the wallet's) ----------------------------------------------
  // The card is an account of its own: its "Nouveau solde" is the card's balance, not the SIM
  // wallet's, and its payments do not move the wallet. Neither balance nor direction is read, so
  // these texts stay out of the wallet's balance chain (a card balance would break it).
  {
    // Virtual card: "Cher client, votre paiement de 1.18 USD chez MERCHANT a été effectué avec
    // succès. Nouveau solde 327.00 XAF. ID: 507434. ..." A USD amount is not FCFA: null.
    id: "b.fr.payment.carte",
    kind: null,
    language: "fr",
    match: skeleton(String.raw`\bvotre paiement de ${AMT} chez .{1,120}? a ete effectue`),
    fields: {
      ...CARD,
      amount: pattern(String.raw`\bpaiement de ${MONEY} chez `),
      counterparty_name: pattern(String.raw`\bpaiement de ${AMT} chez (?<v>.+?) a ete effectue`),
    },
  },
  {
    // corpus: "Votre carte prépayée virtuelle a été rechargée de 1000 XAF. Nouveau solde : 29394.01
    // XAF." The card gains the amount; the text does not say which wallet paid it.
    id: "b.fr.payment.carte_rechargee",
    kind: null,
    language: "fr",
    match: skeleton(String.raw`\bVotre carte prepayee virtuelle a ete rechargee de ${AMT}`),
    fields: { ...CARD, amount: pattern(String.raw`\brechargee de ${MONEY}`) },
  },
  // ---- Merchant payments (no kind; a bundle bought so is AIRTIME) ---------------------------
  // corpus, Orange Burkina Faso: "Votre paiement de 5000.00 FCFA, Frais: 0.0 FCFA, Taxe: 0.0
  // FCFA a MERCHANT a ete effectue avec succes. Votre solde est de : 1000.00 FCFA. Trans id: MP...";
  // without fees: "Votre paiement de  1050 FCFA a Forfait a ete effectue avec succes. Votre
  // solde:  673 FCFA.Trans id: MP..." (a bundle, like "Paiement de FORFAIT INTERNET en succes").
  ...[
    ["AIRTIME", "airtime", String.raw`(?=[^,.]*?\b(?:forfaits?|internet|pass|bundles?)\b)`],
    [null, "payment", ""],
  ].map(([kind, family, merchant]): Rule => ({
    id: `b.fr.${family}.a_marchand`,
    kind: kind as MessageKind | null,
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bVotre paiement de ${AMT}(?:,.{0,80}?)? a ${merchant}.{1,120}? a ete effectue`),
    fields: {
      ...COMMON,
      amount: pattern(String.raw`\bVotre paiement de ${MONEY}(?:,| a )`),
      counterparty_name: pattern(String.raw`${AMT} a (?<v>[^,]+?) a ete effectue`),
    },
  })),
  // "Paiement de WelcomePack en succes par 693460259 PAYER. ID de transaction: MP...,
  // Montant: 100, Nouveau solde: 30399.01." The number is the payer (us), not a counterparty.
  // corpus: "Paiement de ETS L ECLAT reussi par 693460259 NAME. ID transaction:MP..., Montant:1500
  // FCFA. Solde: 9495.39 FCFA."; "Paiement de FORFAIT INTERNET en succes  par 696081739.ID
  // transaction: MP..." A data bundle or airtime bought this way is an AIRTIME sale.
  ...[
    ["AIRTIME", "airtime", String.raw`(?=[^.]*?\b(?:forfaits?|internet|pass|bundles?|credit)\b)`],
    [null, "payment", ""],
  ].map(([kind, family, merchant]): Rule => ({
    id: `b.fr.${family}.marchand`,
    kind: kind as MessageKind | null,
    language: "fr",
    direction: "out",
    match: skeleton(String.raw`\bPaiement de ${merchant}.{1,120}? (?:en succes|reussi) +par ${PHONE}\b`),
    fields: {
      ...COMMON,
      counterparty_name: pattern(String.raw`\bPaiement de (?<v>.+?) (?:en succes|reussi) +par `),
    },
  })),

  // ---- BAL: balance replies -----------------------------------------------------------------
  {
    // "Le solde de votre compte est de 2784137.6FCFA." (#148*5# on the agent line)
    id: "b.fr.bal",
    kind: "BAL",
    language: "fr",
    match: skeleton(String.raw`\bLe solde de votre compte est de ${AMT}`),
    fields: { balance_after: pattern(String.raw`\bsolde de votre compte est de ${MONEY}`) },
  },
  {
    // corpus, Orange Mali agent line: "Le solde de votre Principal :125000 FCFA Bonus UV :2 FCFA"
    // (the main account; the bonus account is another one).
    id: "b.fr.bal.principal",
    kind: "BAL",
    language: "fr",
    match: skeleton(String.raw`\bLe solde de votre Principal ?:? ?${AMT}`),
    fields: { balance_after: pattern(String.raw`\bsolde de votre Principal ?:? ?${MONEY}`) },
  },
  {
    // English line (ussd.md): "The balance of your account is …FCFA."
    id: "b.en.bal",
    kind: "BAL",
    language: "en",
    match: skeleton(String.raw`\bThe balance of your account is ${AMT}`),
    fields: { balance_after: pattern(String.raw`\bbalance of your account is ${MONEY}`) },
  },
];
