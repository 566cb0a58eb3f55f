// The kind of a receipt no wording recognised, from cues that survive rewording.
//
// An operator rewords its receipts several times a year; until a rule is written, each new
// wording would come back with kind null. What survives a rewording is the labelled values
// (an amount, a reference, a balance) and the verb of the operation. A text is taken for a
// receipt only when, promotions and the sender's own message left out, it prints an amount
// (in FCFA or another currency) and a labelled reference or balance; its kind is then decided
// by its verbs, and by the prefix of an Orange reference, which names the operation on every
// Orange line (CI cash-in, CO cash-out, PP transfer, MP payment). A promotion carries amounts
// but never a labelled reference or balance of the wallet.
//
// Confirming kinds are held to more: a DEP needs an outgoing cash-in verb (or an outgoing verb
// under a CI reference), the amount read in FCFA, the reference and exactly one phone number (the divergence check then compares it with the
// destination), or, for the customer's copy (the holder received under a CI reference), the
// amount in FCFA and the one number it came from; a BAL needs a balance and nothing else (no amount, no verb, no number, no
// reference, no offer).
// A receipt whose verbs are missing or contradict each other stays kind null: an orphan for
// a person, never a notice or a promotion.

import type { Direction, MessageKind } from "./types.ts";

export interface CueReadings {
  amount: number | null;
  /** An amount is printed, read or not (in another currency, say): the text is no balance reply. */
  amountPrinted: boolean;
  balance_after: number | null;
  operator_ref: string | null;
  /** The distinct phone numbers of the text, promotions left out. */
  phones: readonly string[];
  /** The one number the text says money went to ("vers", "to", "a" before it), if one. */
  payee: string | null;
  /**
   * The one number the text says money came from ("de", "du", "from" before it), an agent's
   * short code included ("de 4883151 KREEZUS"), if one.
   */
  sender?: string | null;
  /** A promotional sentence was left out: the text is an offer, or carries one. */
  promotion: boolean;
}

/** The operation an Orange reference's prefix names ("CI220822.1921.C04642": a cash-in). */
const ORANGE_PREFIX = /^(CI|CO|PP|MP)\d{6}\./;

export type CueDecision =
  | { receipt: false }
  | { receipt: true; kind: MessageKind | null; direction: Direction | null; counterparty: string | null };

// Verbs on accent-folded, lower-cased text.
const WITHDRAWAL = /\b(?:retraits?|retire[rz]?|withdraw(?:al|n)?|cash[ -]?out)\b/;
const DEPOSIT = /\b(?:depots?|cash(?:ed)?[ -]?in|deposit(?:ed)?)\b/;
const RECEIVED = /\b(?:recu|received|credite|credited|venant de)\b/;
// Not "debite": "montant net debite" closes withdrawals and deposits alike.
const SENT = /\b(?:transfere|transferred|envoye|envoi|sent)\b/;
/** "transfert" names a transfer either way: sent unless the text says it was received. */
const TRANSFER = /\b(?:transferts?|transfers?)\b/;
/** Airtime or a data pass: its words, or the operators' bundle notation ("300U = 850 Mo/3J"). */
const AIRTIME =
  /\b(?:recharge(?:ment)?|airtime|forfaits?|bundles?|credit de communication|pass (?:internet|data)|achat de pass)(?![a-z])|\b\d+ ?u ?= ?\d/;
const BALANCE_REPLY = /\b(?:solde|balance)\b/;
/**
 * The wallet holder as the subject of the verb ("vous avez envoye", "you have received"): whose
 * copy it is, whatever other numbers the text names. The noun ("Transfert de A vers B") does not
 * say it.
 */
const I_SENT = /\b(?:vous avez|you have|you've)(?: (?:bien|successfully))? (?:envoye|transfere|sent|transferred)\b/;
const I_GOT = /\b(?:vous avez|you have|you've)(?: bien)? (?:recu|received)\b/;
/**
 * A balance item's label ("Solde Credit de communication :", "Airtime balance:"): the words of
 * another purse's name are not the verb of an operation.
 */
const BALANCE_LABEL = /(?:\b[a-z]+ ){0,3}\b(?:solde|balance)\b(?: [a-z']+){0,4} ?:/g;

export function kindFromCues(folded: string, r: CueReadings): CueDecision {
  const text = folded.toLowerCase();
  const prefix = ORANGE_PREFIX.exec(r.operator_ref ?? "")?.[1] ?? null;
  if (!r.amountPrinted) {
    // A balance reply: a balance, and nothing that a movement would print (no transfer amount,
    // no number, no verb, no reference), and no offer around it ("Sorry, your account balance
    // is 0F! … Dial *121# to borrow" is an offer).
    const bare = r.balance_after !== null && r.operator_ref === null && r.phones.length === 0 && !r.promotion;
    if (bare && BALANCE_REPLY.test(text) && !namesAMovement(text))
      return { receipt: true, kind: "BAL", direction: null, counterparty: null };
    return { receipt: false };
  }
  if (r.operator_ref === null && r.balance_after === null) return { receipt: false };
  const single = r.phones.length === 1 ? r.phones[0] : null;
  // A deposit names the customer it went to; a single number anywhere else is the party.
  const party = r.payee ?? single;
  const got = RECEIVED.test(text);
  const verbs = [
    WITHDRAWAL.test(text),
    DEPOSIT.test(text),
    got,
    SENT.test(text) || (!got && TRANSFER.test(text)),
    AIRTIME.test(text),
  ] as const;
  const [withdrawal, deposit, received, sent, airtime] = verbs;
  const count = verbs.filter(Boolean).length;
  const iSent = I_SENT.test(text);
  const iGot = I_GOT.test(text);
  const kind = (k: MessageKind, direction: Direction | null): CueDecision => ({
    receipt: true,
    kind: k,
    direction,
    counterparty: party,
  });
  // A deposit proves a transfer: its amount must be read in FCFA and its number compared.
  const canDeposit = r.amount !== null && r.operator_ref !== null && party !== null;
  // The Orange reference's prefix names the operation; the subject says whose copy it is.
  if (prefix !== null && iSent !== iGot) {
    if (prefix === "CO") return kind("UV_WITH", iGot ? "in" : "out");
    if (prefix === "CI" && iSent && canDeposit && !withdrawal && !received) return kind("DEP", "out");
    // The customer's copy of a cash-in ("vous avez recu … de 4883151 KREEZUS … ID Trans: CI…"):
    // a deposit received, naming the agent it came from (a number that is no destination is a
    // divergence, never a confirmation).
    const from = r.sender ?? null;
    if (prefix === "CI" && iGot && r.amount !== null && from !== null && !withdrawal && !sent)
      return { receipt: true, kind: "DEP", direction: "in", counterparty: from };
    if (prefix === "PP" && count === 1) return iGot ? kind("UV_IN", "in") : kind("UV_OUT", "out");
    if (prefix !== "PP") return { receipt: true, kind: null, direction: null, counterparty: party };
  }
  if (count === 1 && withdrawal) return kind("UV_WITH", null);
  if (count === 1 && airtime) return kind("AIRTIME", "out");
  // "Transfert de A vers B": whose copy it is depends on the wording, not on the verb, unless
  // the holder is the verb's subject.
  const oneParty = r.phones.length <= 1;
  if (count === 1 && received && (oneParty || iGot)) return kind("UV_IN", "in");
  if (count === 1 && sent && (oneParty || iSent)) return kind("UV_OUT", "out");
  if (count === 1 && deposit && canDeposit) return kind("DEP", "out");
  return { receipt: true, kind: null, direction: null, counterparty: party };
}

/** A verb of an operation, outside the labels of balance items. */
export function namesAMovement(folded: string): boolean {
  const text = folded.toLowerCase().replace(BALANCE_LABEL, " ");
  return [WITHDRAWAL, DEPOSIT, RECEIVED, SENT, TRANSFER, AIRTIME].some((re) => re.test(text));
}
