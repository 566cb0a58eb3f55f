import { PeriodicJob, type Database, type Logger } from "@transferops/kit";
import { lockExpiredAwaiting } from "../store/sweep.ts";
import { move } from "../rpc/transitions.ts";

export interface SweepOptions {
  db: Database;
  log: Logger;
  intervalMs: number;
  batch: number;
  now: () => Date;
  published: () => void;
}

/**
 * The evidence-window sweep: an operation left awaiting_evidence past its
 * evidence_expires_at becomes no_evidence (the contract leaves the swept status open;
 * no_evidence puts it in the arbitration queue while a late message can still prove it).
 * Safe with several replicas: each batch skips rows another holds.
 */
export class EvidenceSweep {
  private readonly job: PeriodicJob;
  private running?: Promise<number>;
  private stopped = false;

  constructor(private readonly o: SweepOptions) {
    this.job = new PeriodicJob("evidence sweep pass", o.intervalMs, () => this.runOnce(), o.log);
  }

  start(): void {
    this.stopped = false;
    this.job.start();
  }

  /** One pass: batches until nothing expired is left. Returns how many operations moved. */
  async runOnce(): Promise<number> {
    if (this.running) return this.running;
    this.running = this.pass().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async pass(): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.o.now();
      const moved = await this.o.db.tx(async (em) => {
        const expired = await lockExpiredAwaiting(em, now, this.o.batch);
        for (const op of expired) {
          await move(em, op, { type: "sweep" }, {}, { trigger: "sweep", at: now });
        }
        return expired.length;
      });
      total += moved;
      if (moved > 0) this.o.published();
      if (moved < this.o.batch || this.stopped) break;
    }
    if (total > 0) this.o.log.info({ swept: total }, "evidence window closed: operations now no_evidence");
    return total;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job.stop();
    await this.running?.catch(() => undefined);
  }
}
