// Who may speak for an operator. A handset forwards whatever SMS it received, and anyone can
// text an agent's SIM a copy of the operator's wording from an ordinary number ("+2376…").
// Only a message whose sender is one of the operator's known sender ids is read as the
// operator's word; any other is stored, flagged (outcome `unknown_sender`), raises an alert,
// and never confirms anything.

import type { Operator } from "./parsers/types.ts";

export type SenderIds = Readonly<Record<Operator, readonly string[]>>;

/**
 * The alphanumeric sender names the operators' money platforms use in Cameroon: MTN MoMo
 * texts come from "MobileMoney" (also shown as "MTN MoMo" / "MoMo" by some handsets), Orange
 * Money texts from "OrangeMoney" (or "Orange Money"). Configurable: OPERATOR_A_SENDERS,
 * OPERATOR_B_SENDERS.
 */
export const DEFAULT_SENDER_IDS: SenderIds = {
  operator_a: ["MobileMoney", "MTN MoMo", "MoMo"],
  operator_b: ["OrangeMoney", "Orange Money"],
};

/**
 * How sender ids are compared: case, spaces and punctuation do not count ("Orange Money",
 * "ORANGEMONEY" and "orange-money" are one id), letters and digits do ("+237670000000" stays
 * a number, which no default id is).
 */
export function senderKey(sender: string): string {
  return sender
    .normalize("NFKC")
    .toLowerCase()
    .replace(/[^\p{L}\p{N}]/gu, "");
}

/** A comma-separated setting ("MobileMoney, MTN MoMo") as a list; empty entries dropped. */
export function parseSenderList(csv: string): string[] {
  return csv
    .split(",")
    .map((s) => s.trim())
    .filter((s) => senderKey(s) !== "");
}

export function isKnownSender(ids: SenderIds, operator: Operator, sender: string): boolean {
  const key = senderKey(sender);
  return key !== "" && ids[operator].some((id) => senderKey(id) === key);
}
