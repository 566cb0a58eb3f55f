// The kind of a receipt no wording recognised, from cues that survive rewording.
//
// An operator rewords its receipts several times a year; until a rule is written, each new
// wording would come back with kind null. What survives a rewording is the labelled values
// (an amount, a reference, a balance) and the verb of the operation. A text is taken for a
// receipt only when, promotions left out, it shows a labelled amount and a labelled
// reference or balance; its kind is then decided by its verbs. A promotion carries amounts
// but never a labelled reference or balance of the wallet.
//
// Confirming kinds are held to more: a DEP needs an outgoing cash-in verb, the amount, the
// reference and exactly one phone number (the divergence check then compares it with the
// destination); a BAL needs a balance and nothing else (no amount, no reference, no verb).
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
}

export type CueDecision =
  | { receipt: false }
  | { receipt: true; kind: MessageKind | null; direction: Direction | null; counterparty: string | null };

// Verbs on accent-folded, lower-cased text.
const WITHDRAWAL = /\b(?:retraits?|retire[rz]?|withdraw(?:al|n)?|cash[ -]?out)\b/;
const DEPOSIT = /\b(?:depots?|cash[ -]?in|deposit(?:ed)?)\b/;
const RECEIVED = /\b(?:recu|received|credite|credited|venant de)\b/;
// Not "debite": "montant net debite" closes withdrawals and deposits alike.
const SENT = /\b(?:transfere|transferred|envoye|envoi|sent)\b/;
/** "transfert" names a transfer either way: sent unless the text says it was received. */
const TRANSFER = /\b(?:transferts?|transfers?)\b/;
const AIRTIME = /\b(?:recharge(?:ment)?|airtime|forfaits?|bundles?|credit de communication)(?![a-z])/;
const BALANCE_REPLY = /\b(?:solde|balance)\b/;

export function kindFromCues(folded: string, r: CueReadings): CueDecision {
  const text = folded.toLowerCase();
  if (r.amount === null) {
    // A balance reply: a balance, and nothing that a movement would print.
    const bare = !r.amountPrinted && r.balance_after !== null && r.operator_ref === null && r.phones.length === 0;
    if (bare && BALANCE_REPLY.test(text) && !anyVerb(text))
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
  const kind = (k: MessageKind, direction: Direction | null): CueDecision => ({
    receipt: true,
    kind: k,
    direction,
    counterparty: party,
  });
  if (count === 1 && withdrawal) return kind("UV_WITH", null);
  if (count === 1 && airtime) return kind("AIRTIME", "out");
  // "Transfert de A vers B": whose copy it is depends on the wording, not on the verb.
  const oneParty = r.phones.length <= 1;
  if (count === 1 && received && oneParty) return kind("UV_IN", "in");
  if (count === 1 && sent && oneParty) return kind("UV_OUT", "out");
  if (count === 1 && deposit && r.operator_ref !== null && party !== null) return kind("DEP", "out");
  return { receipt: true, kind: null, direction: null, counterparty: party };
}

function anyVerb(text: string): boolean {
  return [WITHDRAWAL, DEPOSIT, RECEIVED, SENT, TRANSFER, AIRTIME].some((re) => re.test(text));
}
