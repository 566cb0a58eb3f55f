// Validation of a submission the gateway already shaped: what the service itself relies on.

import { invalid } from "./reasons.ts";

export const MAX_MESSAGES_PER_SUBMISSION = 100;
export const MAX_CLIENT_MESSAGE_ID = 64;
/** Longer texts are not SMS (a concatenated SMS tops out near 1,600 characters). */
export const MAX_RAW_LENGTH = 4000;
export const MAX_SENDER_LENGTH = 100;

export interface IncomingShape {
  sender: string;
  raw: string;
  receivedAt: Date | undefined;
  clientMessageId: string | undefined;
}

export function validateSubmission(simId: string, messages: readonly IncomingShape[]): void {
  if (!simId) throw invalid("sim_id", "is required");
  if (messages.length === 0) throw invalid("messages", "must hold at least one message");
  if (messages.length > MAX_MESSAGES_PER_SUBMISSION) {
    throw invalid("messages", `must hold at most ${MAX_MESSAGES_PER_SUBMISSION} messages`, messages.length);
  }
  messages.forEach((m, i) => {
    if (!m.sender || m.sender.length > MAX_SENDER_LENGTH)
      throw invalid(`messages.${i}.sender`, `is required, at most ${MAX_SENDER_LENGTH} characters`);
    if (!m.raw || m.raw.length > MAX_RAW_LENGTH)
      throw invalid(`messages.${i}.raw`, `is required, at most ${MAX_RAW_LENGTH} characters`);
    if (!m.receivedAt || Number.isNaN(m.receivedAt.getTime()))
      throw invalid(`messages.${i}.received_at`, "is required");
    if (m.clientMessageId !== undefined && m.clientMessageId.length > MAX_CLIENT_MESSAGE_ID) {
      throw invalid(`messages.${i}.client_message_id`, `must be at most ${MAX_CLIENT_MESSAGE_ID} characters`);
    }
  });
}
