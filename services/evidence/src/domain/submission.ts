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

/**
 * Why one message of a submission is refused. A refusal is per message, never the batch's
 *: a batch refused whole for one bad message is retried whole by the handset,
 * so one message it can never fix would block every message after it forever. Every
 * other message is stored.
 *   invalid_message   its content breaks a rule; it will never be accepted (drop it)
 *   over_batch_limit  past the first MAX_MESSAGES_PER_SUBMISSION; send it again later
 */
export interface MessageRefusal {
  readonly reason: "invalid_message" | "over_batch_limit";
  readonly detail: string;
}

/** The envelope: without a SIM nothing can be filed, so that alone refuses the submission. */
export function validateSubmission(simId: string): void {
  if (!simId) throw invalid("sim_id", "is required");
}

/** Each message's refusal, or null when it is to be stored; in request order. */
export function refusalsOf(messages: readonly IncomingShape[]): (MessageRefusal | null)[] {
  return messages.map((m, i) => {
    if (i >= MAX_MESSAGES_PER_SUBMISSION) {
      return {
        reason: "over_batch_limit",
        detail: `at most ${MAX_MESSAGES_PER_SUBMISSION} messages are taken per submission; send this one again`,
      };
    }
    const problems = problemsOf(m);
    return problems.length ? { reason: "invalid_message", detail: problems.join("; ") } : null;
  });
}

function problemsOf(m: IncomingShape): string[] {
  const problems: string[] = [];
  if (!m.sender || m.sender.length > MAX_SENDER_LENGTH)
    problems.push(`sender: is required, at most ${MAX_SENDER_LENGTH} characters`);
  if (!m.raw || m.raw.length > MAX_RAW_LENGTH) problems.push(`raw: is required, at most ${MAX_RAW_LENGTH} characters`);
  if (!m.receivedAt || Number.isNaN(m.receivedAt.getTime()))
    problems.push("received_at: is required, an ISO 8601 timestamp with offset");
  if (m.clientMessageId !== undefined && m.clientMessageId.length > MAX_CLIENT_MESSAGE_ID)
    problems.push(`client_message_id: must be at most ${MAX_CLIENT_MESSAGE_ID} characters`);
  return problems;
}
