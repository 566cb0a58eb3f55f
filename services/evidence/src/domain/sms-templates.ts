// Builds operator SMS texts in the formats the parser reads, for a simulated operator in
// end-to-end tests. Every wording here is one of the real wordings in
// parsers/testdata/samples.jsonl (or the genuine corpus cited in the rules), filled with the
// caller's values; combinations for which no real wording is known throw instead of
// inventing one (see TEMPLATE_LANGUAGES). Promotions and refusals are free text.
//
// Round trip: parseMessage(operator, built) returns exactly the inputs (see
// sms-templates.test.ts), which is what lets the simulator stand in for the operator.

import type { Language, Operator } from "./parsers/types.ts";

export type TemplateName = "depositConfirmation" | "balanceReply" | "transferReceived" | "promotion" | "failure";

/** Languages each template can be built in, per operator. */
export const TEMPLATE_LANGUAGES: Readonly<Record<TemplateName, Readonly<Record<Operator, readonly Language[]>>>> = {
  depositConfirmation: { operator_a: ["en", "fr"], operator_b: ["fr"] },
  balanceReply: { operator_a: ["en", "fr"], operator_b: ["en", "fr"] },
  transferReceived: { operator_a: ["en", "fr"], operator_b: ["fr"] },
  promotion: { operator_a: ["en", "fr"], operator_b: ["en", "fr"] },
  failure: { operator_a: ["en", "fr"], operator_b: ["en", "fr"] },
};

export interface DepositConfirmationInput {
  /** Integer FCFA. */
  amount: number;
  /**
   * operator_b prints the fee (default 0). operator_a's deposit SMS has no fee line: leave it
   * undefined or null, anything else throws rather than being silently dropped.
   */
  fee?: number | null;
  balanceAfter: number;
  ref: string;
  /** The customer credited, as the operator prints it (237XXXXXXXXX for operator_a, 9 digits for operator_b). */
  msisdn: string;
  name: string;
  at: Date;
  language: Language;
  /** operator_b names the agent too; defaults stand in for our SIM. */
  agentMsisdn?: string;
  agentName?: string;
  /** Agent commission printed by both operators (never read as a fee). Default 0. */
  commission?: number;
}

export interface BalanceReplyInput {
  balance: number;
  language: Language;
}

export interface TransferReceivedInput {
  amount: number;
  /** As for deposits: operator_b prints it (default 0), operator_a has no fee line. */
  fee?: number | null;
  balanceAfter: number;
  ref: string;
  /** The sender. */
  msisdn: string;
  name: string;
  at: Date;
  language: Language;
  /** operator_b names the recipient (our SIM) too. */
  ownMsisdn?: string;
  ownName?: string;
}

export interface PromotionInput {
  language: Language;
  /** A prize amount printed in the promotion, which the parser must never read. */
  prize?: number;
}

export interface FailureInput {
  language: Language;
  /** Amount of the refused operation, printed but never read (a refusal proves nothing). */
  amount?: number;
}

const DEFAULT_AGENT = { msisdn: "696103864", name: "AGENT PRINCIPAL" };

export function depositConfirmation(operator: Operator, input: DepositConfirmationInput): string {
  requireLanguage("depositConfirmation", operator, input.language);
  checkMoney({ amount: input.amount, balanceAfter: input.balanceAfter, commission: input.commission ?? 0 });
  checkParty(input.msisdn, input.name);
  checkRef(input.ref);
  const commission = input.commission ?? 0;
  if (operator === "operator_a") {
    noFeeLine(operator, input.fee);
    const at = formatDouala(input.at);
    return input.language === "en"
      ? `Cash in of ${input.amount} XAF on ${at} to ${input.name} (${input.msisdn}) has been successfully completed. ` +
          `Transaction ID:${input.ref}. Message:. Your new balance: ${input.balanceAfter} XAF. Added commission: ${commission} XAF.`
      : `Vous avez envoye ${input.amount} FCFA a ${input.name} (${input.msisdn}) le ${at}. Message de l'expediteur: . ` +
          `Votre nouveau solde est de ${input.balanceAfter} FCFA. Transaction Id: ${input.ref}`;
  }
  const fee = input.fee ?? 0;
  checkMoney({ fee });
  const agentMsisdn = input.agentMsisdn ?? DEFAULT_AGENT.msisdn;
  const agentName = input.agentName ?? DEFAULT_AGENT.name;
  checkParty(agentMsisdn, agentName);
  // The agent is debited the amount and the fee, less the commission it earns.
  const netDebited = input.amount + fee - commission;
  return (
    `Depot vers ${input.msisdn} ${input.name} reussi from ${agentMsisdn} ${agentName}. Informations detaillees : ` +
    `Montant transaction : ${input.amount}FCFA, ID de Transaction : ${input.ref}, Frais : ${fee}FCFA, ` +
    `Commission : ${commission} FCFA, Montant Net Debite : ${netDebited}FCFA, Nouveau Solde : ${input.balanceAfter}FCFA.`
  );
}

export function balanceReply(operator: Operator, input: BalanceReplyInput): string {
  requireLanguage("balanceReply", operator, input.language);
  checkMoney({ balance: input.balance });
  const b = input.balance;
  if (operator === "operator_a") {
    return input.language === "en"
      ? `Current balance: ${b} FCFA ; Available balance: ${b} FCFA ; Airtime balance: 0 FCFA ; MTN MoMo Gift Balance: 0.`
      : `Solde Courant: ${b} FCFA ; Solde disponible: ${b} FCFA ; Solde Credit de communication: 0 FCFA; Point de fidelite: 0`;
  }
  return input.language === "en"
    ? `The balance of your account is ${b}FCFA.`
    : `Le solde de votre compte est de ${b}FCFA.`;
}

/** A UV transfer received by our SIM (kind UV_IN): a movement. */
export function transferReceived(operator: Operator, input: TransferReceivedInput): string {
  requireLanguage("transferReceived", operator, input.language);
  checkMoney({ amount: input.amount, balanceAfter: input.balanceAfter });
  checkParty(input.msisdn, input.name);
  checkRef(input.ref);
  if (operator === "operator_a") {
    noFeeLine(operator, input.fee);
    const at = formatDouala(input.at);
    return input.language === "en"
      ? `You have received ${input.amount} XAF from ${input.name} (${input.msisdn}) on your mobile money account at ${at}. ` +
          `Message from sender: . Your new balance:${input.balanceAfter} XAF. Financial Transaction Id: ${input.ref}.`
      : `Vous avez recu ${input.amount} FCFA de ${input.name} (${input.msisdn}) le ${at}. ` +
          `Transaction Id: ${input.ref}.Reference: . Nouveau solde:${input.balanceAfter} FCFA.`;
  }
  const fee = input.fee ?? 0;
  checkMoney({ fee });
  const ownMsisdn = input.ownMsisdn ?? DEFAULT_AGENT.msisdn;
  const ownName = input.ownName ?? DEFAULT_AGENT.name;
  checkParty(ownMsisdn, ownName);
  return (
    `Transfert de ${input.msisdn} ${input.name} vers ${ownMsisdn} ${ownName} reussi. Details: ID transaction: ${input.ref}, ` +
    `Montant Transaction: ${input.amount}FCFA, Frais: ${fee} FCFA, Commission: 0 FCFA, ` +
    `Montant Net: ${input.amount - fee} FCFA, Nouveau Solde: ${input.balanceAfter} FCFA.`
  );
}

/** Marketing (kind MKT) with a prize amount that must never be read as money. */
export function promotion(operator: Operator, input: PromotionInput): string {
  requireLanguage("promotion", operator, input.language);
  const prize = input.prize ?? 50000;
  checkMoney({ prize });
  if (operator === "operator_a") {
    return input.language === "en"
      ? `Back-to-School is Here... MoMo Got You! For any transactions from XAF 5,237, stand a chance to win everyday : ` +
          `A Laptop + XAF ${prize} + a Home Box every day. Dial *126*6# or download the New MoMo App.`
      : `Prix Cassés chez MoMo pour tout le monde ! 0 F sur tes transferts et -25% sur tes retraits Hors Taxe. ` +
          `Gagne ${prize}F chaque jour ! Disponible sur la MoMo App et au *126#.`;
  }
  return input.language === "en"
    ? `Between us, it's true love! ${prize} FCFA to win every day with Orange Money! Dial #150*0#`
    : `Entre nous, c'est l'amour fou! ${prize} FCFA a gagner chaque jour avec Orange Money! Tape #150*0#`;
}

/** An operator refusal (kind FAIL). */
export function failure(operator: Operator, input: FailureInput): string {
  requireLanguage("failure", operator, input.language);
  if (input.amount !== undefined) checkMoney({ amount: input.amount });
  const en = input.amount === undefined ? "" : ` of ${input.amount} XAF`;
  const fr = input.amount === undefined ? "" : ` de ${input.amount} FCFA`;
  if (operator === "operator_a") {
    return input.language === "en"
      ? `Sorry, due to network issues your transaction${en} has failed. Please try again *126#.`
      : `Desole, suite a un probleme de reseau votre transaction${fr} a echoue. Veuillez reessayer *126#.`;
  }
  return input.language === "en"
    ? `Deposit${en.replace("XAF", "FCFA")} failed: insufficient balance. Orange Money thanks you.`
    : `Echec du depot${fr}. Solde insuffisant. Orange Money vous remercie.`;
}

// ---------------------------------------------------------------------------------------

function requireLanguage(template: TemplateName, operator: Operator, language: Language): void {
  if (!TEMPLATE_LANGUAGES[template][operator].includes(language))
    throw new RangeError(`${template}: no known ${operator} wording in "${language}"`);
}

function noFeeLine(operator: Operator, fee: number | null | undefined): void {
  if (fee !== undefined && fee !== null) throw new RangeError(`${operator} prints no fee in this SMS; pass fee null`);
}

function checkMoney(values: Record<string, number>): void {
  for (const [name, v] of Object.entries(values))
    if (!Number.isSafeInteger(v) || v < 0)
      throw new RangeError(`${name} must be a non-negative integer (FCFA), got ${v}`);
}

/**
 * Names are printed between fixed words of the wording: parentheses, digits-only names or
 * sentence punctuation would make the text unreadable, so they are refused here.
 */
function checkParty(msisdn: string, name: string): void {
  if (!/^\d{8,15}$/.test(msisdn)) throw new RangeError(`msisdn must be 8 to 15 digits, got "${msisdn}"`);
  if (!/^\p{L}[\p{L}\p{N}'&-]*(?: [\p{L}\p{N}'&-]+)*$/u.test(name)) throw new RangeError(`unprintable name "${name}"`);
}

function checkRef(ref: string): void {
  if (!/^[A-Za-z0-9]*\d[A-Za-z0-9]*(?:\.[A-Za-z0-9]*\d[A-Za-z0-9]*)*$/.test(ref))
    throw new RangeError(`unprintable reference "${ref}"`);
}

/** Operator timestamps are local time in Cameroon (WAT, UTC+1, no daylight saving). */
export function formatDouala(at: Date): string {
  const local = new Date(at.getTime() + 60 * 60 * 1000);
  return local.toISOString().slice(0, 19).replace("T", " ");
}
