import { PeriodicJob, type Database, type Logger } from "@transferops/kit";
import type { Launcher } from "../flows/launch.ts";
import { unlinkedClaims } from "../store/transactions.ts";

/**
 * Completes launches that crashed between the claim and the operation's creation
 * (state `launched`, no operation, claim older than CLAIM_STALE_S). Each completion
 * takes the claim over first, so the sweep and a retried launch never both create.
 */
export class LaunchSweep {
  private readonly job: PeriodicJob;

  constructor(
    private readonly o: { db: Database; log: Logger; launcher: Launcher; intervalMs: number; staleMs: number },
  ) {
    this.job = new PeriodicJob("launch sweep pass", o.intervalMs, () => this.runOnce(), o.log);
  }

  start(): void {
    this.job.start();
  }

  /** One pass; returns how many launches it completed. */
  async runOnce(): Promise<number> {
    const ids = await unlinkedClaims(this.o.db.em(), this.o.staleMs, 100);
    let completed = 0;
    for (const id of ids) {
      try {
        if (await this.o.launcher.complete(id)) completed += 1;
      } catch (err) {
        // A refusal released the claim; anything else is retried on the next pass.
        this.o.log.warn({ err, transaction_id: id }, "launch completion failed");
      }
    }
    return completed;
  }

  stop(): Promise<void> {
    return this.job.stop();
  }
}
