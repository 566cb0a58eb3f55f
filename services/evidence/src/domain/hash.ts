// The deduplication key of a message (contract step 1): sms_hash over the SIM, the text
// and the handset's client_message_id when it sends one. Without an id, identical text on
// one SIM is one message; with one, the same text sent twice under two ids is two messages
// (an operator can send the same words twice for two transfers only if the handset tells
// them apart).

import { createHash } from "node:crypto";

/**
 * What two copies of the same SMS have in common: NFC, line ends and whitespace runs
 * collapsed, ends trimmed. Handsets differ on CRLF and trailing spaces, never on words.
 */
export function normalizeRaw(raw: string): string {
  return raw.normalize("NFC").replace(/\s+/gu, " ").trim();
}

/**
 * Hex SHA-256 of the SIM, the normalized text and the client id (absent and empty are the
 * same). `unknownSender` is given only for a sender that is not the operator's: its copy of a
 * text is then a different message from the operator's own, which the hash of the operator's
 * copy (unchanged, without a sender) keeps recognising.
 */
export function smsHash(
  simId: string,
  raw: string,
  clientMessageId?: string | null,
  unknownSender?: string | null,
): string {
  const id = clientMessageId ? clientMessageId : null;
  const parts: unknown[] = [simId, normalizeRaw(raw), id];
  if (unknownSender) parts.push({ unknown_sender: unknownSender });
  return createHash("sha256").update(JSON.stringify(parts)).digest("hex");
}
