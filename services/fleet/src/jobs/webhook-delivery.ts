import { PeriodicJob, webhookDeliveries, type Database, type Logger } from "@transferops/kit";
import { open, webhookSecretAad, type Keyring } from "../domain/pin-crypto.ts";
import { afterFailure, delivered, signature, type RetryPolicy } from "../domain/webhooks.ts";
import { claimDueDeliveries, recordAttempt } from "../store/webhooks.ts";
import type { EgressPolicy } from "../domain/egress.ts";
import { postUnderPolicy } from "../flows/egress.ts";

export interface WebhookWorkerOptions {
  pollMs: number;
  timeoutMs: number;
  retry: RetryPolicy;
  /** Deliveries sent in parallel per pass. */
  batchSize?: number;
  /** Where deliveries may go (domain/egress.ts). */
  egress: EgressPolicy;
}

interface AttemptOutcome {
  statusCode?: number;
  error?: string;
  durationMs: number;
}

/**
 * Sends due webhook deliveries: each attempt is signed, recorded, and followed by the next
 * attempt after an exponential backoff until the retry period runs out. Deliveries are
 * claimed under a lease, so several fleet replicas share the work without sending twice.
 */
export class WebhookWorker {
  private readonly job: PeriodicJob;

  constructor(
    private readonly db: Database,
    private readonly keyring: Keyring,
    private readonly options: WebhookWorkerOptions,
    private readonly log: Logger,
  ) {
    this.job = new PeriodicJob("webhook delivery pass", options.pollMs, () => this.pass(), log);
  }

  start(): void {
    this.job.start();
  }

  /** One pass: claim what is due, send it, record each attempt. Returns how many were attempted. */
  async pass(): Promise<number> {
    const leaseS = Math.ceil(this.options.timeoutMs / 1000) * 2 + 5;
    const due = await this.db.tx((em) => claimDueDeliveries(em, this.options.batchSize ?? 20, leaseS));
    await Promise.all(
      due.map(async (d) => {
        const attempt = d.attempt_count + 1;
        const attemptedAt = new Date();
        const outcome = await this.send(d.url, d, attempt);
        const now = new Date();
        const next = delivered(outcome.statusCode)
          ? ({ status: "delivered" } as const)
          : (() => {
              const f = afterFailure(d.created_at, attempt, now, this.options.retry);
              return f.giveUp
                ? ({ status: "failed" } as const)
                : ({ status: "pending", next_attempt_at: f.nextAt } as const);
            })();
        await this.db.tx((em) =>
          recordAttempt(
            em,
            {
              delivery_id: d.id,
              attempt,
              attempted_at: attemptedAt,
              status_code: outcome.statusCode ?? null,
              error: outcome.error ?? null,
              duration_ms: outcome.durationMs,
            },
            next,
          ),
        );
        webhookDeliveries.inc({ result: next.status === "pending" ? "retry" : next.status });
        this.log.info(
          {
            delivery_id: d.id,
            event_type: d.event_type,
            attempt,
            status_code: outcome.statusCode,
            result: next.status,
          },
          "webhook attempt",
        );
      }),
    );
    return due.length;
  }

  private async send(
    url: string,
    d: {
      id: string;
      webhook_id: string;
      event_type: string;
      event_id: string;
      body: string;
      secret_key_id: string;
      secret_ciphertext: Buffer;
    },
    attempt: number,
  ): Promise<AttemptOutcome> {
    const started = performance.now();
    const durationMs = () => Math.round(performance.now() - started);
    let secret: string;
    try {
      secret = open(
        this.keyring,
        { keyId: d.secret_key_id, ciphertext: Buffer.from(d.secret_ciphertext) },
        webhookSecretAad(d.webhook_id),
      );
    } catch (err) {
      this.log.error({ err, webhook_id: d.webhook_id }, "webhook signing secret unavailable");
      return { error: "refused", durationMs: durationMs() };
    }
    const timestampS = Math.floor(Date.now() / 1000);
    const outcome = await postUnderPolicy(
      url,
      {
        "content-type": "application/json",
        "user-agent": "transferops-webhooks/1",
        "x-signature": signature(secret, timestampS, d.body),
        "x-timestamp": String(timestampS),
        "x-event-type": d.event_type,
        "x-event-id": d.event_id,
        "x-delivery-id": d.id,
        "x-delivery-attempt": String(attempt),
      },
      d.body,
      this.options.timeoutMs,
      this.options.egress,
    );
    // The log says no more than the target's status, "refused" or "timeout": nothing of what
    // lies behind an address that was not reached (no port scan through the log).
    if ("failure" in outcome) return { error: outcome.failure, durationMs: durationMs() };
    return delivered(outcome.status)
      ? { statusCode: outcome.status, durationMs: durationMs() }
      : { statusCode: outcome.status, error: `HTTP ${outcome.status}`, durationMs: durationMs() };
  }

  stop(): Promise<void> {
    return this.job.stop();
  }
}
