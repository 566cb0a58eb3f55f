// Types shared by the operator SMS parsers.

/** `operator_a` writes like MTN MoMo, `operator_b` like Orange Money (the kit's vocabulary). */
export type { Operator } from "@transferops/kit/pure";

/**
 * What a message is, decided once from its text (see the "Message kinds" table of the
 * transfer-operations spec). `null` means no rule recognised the text; such a message is
 * treated as a possible deposit by the server.
 */
export type MessageKind =
  | "DEP" // deposit to a customer: can confirm a transfer
  | "BAL" // balance reply: confirms a balance check only
  | "UV_OUT"
  | "UV_IN" // UV transfer sent / received: movement
  | "FLOAT_OUT"
  | "FLOAT_IN" // float sent / received: movement
  | "UV_WITH"
  | "FLOAT_WITH" // withdrawal: movement
  | "AIRTIME" // airtime / bundle sale: movement
  | "COM_SWEEP" // commission moved to the main account: movement
  | "REV" // earlier transfer returned to our SIM: movement
  | "OPERATOR_A_REC"
  | "OPERATOR_B_REC" // mini statement: stored, never matched
  | "ADMIN" // account notice
  | "COM" // commission notice
  | "MKT" // marketing
  | "TPL" // unfilled template
  | "FAIL"; // operator refusal

export const MESSAGE_KINDS: readonly MessageKind[] = [
  "DEP",
  "BAL",
  "UV_OUT",
  "UV_IN",
  "FLOAT_OUT",
  "FLOAT_IN",
  "UV_WITH",
  "FLOAT_WITH",
  "AIRTIME",
  "COM_SWEEP",
  "REV",
  "OPERATOR_A_REC",
  "OPERATOR_B_REC",
  "ADMIN",
  "COM",
  "MKT",
  "TPL",
  "FAIL",
];

export const LANGUAGES = ["fr", "en"] as const;
export type Language = (typeof LANGUAGES)[number];

/**
 * Which way the money moved for the wallet whose SMS this is (the wallet whose balance the
 * text reports). `null` when the wording does not say whose wallet moved.
 */
export const DIRECTIONS = ["in", "out"] as const;
export type Direction = (typeof DIRECTIONS)[number];

export interface ParsedMessage {
  kind: MessageKind | null;
  /** Integer FCFA; null when absent, masked, unfilled, ambiguous or not in FCFA. */
  amount: number | null;
  fee: number | null;
  /**
   * A commission this message credits to the same wallet inside its own receipt (Orange's agent
   * cash-in: "Commission : 32 FCFA, Montant Net Debite : 15968FCFA"): the wallet moves by the
   * amount and fee less it. Null when the text prints none or pays it elsewhere.
   */
  commission: number | null;
  /** Integer FCFA, decimals truncated (never rounded up). */
  balance_after: number | null;
  operator_ref: string | null;
  counterparty_msisdn: string | null;
  counterparty_name: string | null;
  direction: Direction | null;
  language: Language | null;
  /** Id of the rule that decided the kind, for diagnostics. */
  rule: string | null;
}

/** The fields a rule can read off a text. */
export type FieldName =
  "amount" | "fee" | "commission" | "balance_after" | "operator_ref" | "counterparty_msisdn" | "counterparty_name";

export const FIELD_NAMES: readonly FieldName[] = [
  "amount",
  "fee",
  "commission",
  "balance_after",
  "operator_ref",
  "counterparty_msisdn",
  "counterparty_name",
];

/**
 * Each regex must expose the value in a named group `v`. It is run globally over the
 * transactional body of the text (from the start of the `match` to the first promotion);
 * every occurrence must agree, or the field is null.
 */
export type FieldPatterns = Partial<Record<FieldName, RegExp>>;

/** One wording of one operator. Rules are evaluated in order; the first match wins. */
export interface Rule {
  /** `<operator letter>.<language>.<kind>.<wording>`, e.g. `a.en.dep.cash_in`. */
  id: string;
  /** `null`: the wording is recognised (fields are read) but no kind applies, e.g. a merchant payment. */
  kind: MessageKind | null;
  /** `null`: decided from the words of the text (shared rules that accept both languages). */
  language: Language | null;
  /** Decides the kind. Runs on the whitespace-normalised, accent-folded text. */
  match: RegExp;
  direction?: Direction | null;
  fields?: FieldPatterns;
}
