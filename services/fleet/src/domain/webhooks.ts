import { createHmac, randomBytes } from "node:crypto";

// Webhook deliveries: signed, retried with exponential backoff for a bounded time,
// every attempt recorded.
//
// Signature: X-Signature = "sha256=" + hex(HMAC-SHA256(secret, timestamp + "." + body)),
// X-Timestamp = the Unix time in seconds used in the signature. Receivers recompute it
// over the raw body and refuse old timestamps to stop replays.

export function signature(secret: string, timestampS: number, body: string): string {
  return "sha256=" + createHmac("sha256", secret).update(`${timestampS}.${body}`).digest("hex");
}

export interface RetryPolicy {
  /** Delay after the first failed attempt. */
  baseDelayMs: number;
  /** Ceiling of one delay. */
  maxDelayMs: number;
  /** After this long since the delivery was created, it is given up as failed. */
  giveUpAfterMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { baseDelayMs: 10_000, maxDelayMs: 3_600_000, giveUpAfterMs: 24 * 3_600_000 };

/** Delay before attempt n+1 after n failed attempts: base·2^(n-1), capped. */
export function backoffMs(failedAttempts: number, policy: RetryPolicy): number {
  const exp = Math.min(30, Math.max(0, failedAttempts - 1));
  return Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** exp);
}

/** What follows a failed attempt: the next attempt time, or giving up when it would fall past the period. */
export function afterFailure(
  createdAt: Date,
  failedAttempts: number,
  now: Date,
  policy: RetryPolicy,
): { giveUp: true } | { giveUp: false; nextAt: Date } {
  const nextAt = new Date(now.getTime() + backoffMs(failedAttempts, policy));
  if (nextAt.getTime() - createdAt.getTime() > policy.giveUpAfterMs) return { giveUp: true };
  return { giveUp: false, nextAt };
}

/** A 2xx answer is a delivery; anything else (or no answer) is retried. */
export const delivered = (status: number | undefined) => status !== undefined && status >= 200 && status < 300;

export function newWebhookSecret(): string {
  return "whsec_" + randomBytes(24).toString("base64url");
}

/** The JSON body a webhook receives: the event's id and type, when it happened, and its data. */
export function webhookBody(
  eventType: string,
  eventId: string,
  occurredAt: Date,
  data: Record<string, unknown>,
): string {
  return JSON.stringify({ event_id: eventId, event_type: eventType, occurred_at: occurredAt.toISOString(), data });
}
