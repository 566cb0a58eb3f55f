import { PeriodicJob, type Database, type EntityManager, type Logger } from "@transferops/kit";
import type { Trigger } from "../domain/index.ts";
import type { OperationChange, OperationRecord } from "../store/operations.ts";
import { lockExpiredAwaiting, lockStaleRunning } from "../store/sweep.ts";
import { move } from "../flows/transitions.ts";

export interface SweepOptions {
  db: Database;
  log: Logger;
  intervalMs: number;
  batch: number;
  /** Running operations claimed longer ago than this, never reported, go to no_evidence. */
  runningTimeoutS: number;
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
    const expired = await this.batches(
      (em, now) => lockExpiredAwaiting(em, now, this.o.batch),
      { type: "sweep" },
      () => ({}),
    );
    if (expired > 0) this.o.log.info({ swept: expired }, "evidence window closed: operations now no_evidence");
    const stale = await this.batches(
      (em, now) => lockStaleRunning(em, new Date(now.getTime() - this.o.runningTimeoutS * 1000), this.o.batch),
      { type: "running_timeout" },
      (now) => ({ finished_at: now, failure_reason: "handset_never_reported" }),
    );
    if (stale > 0) this.o.log.warn({ timed_out: stale }, "handsets never reported: running operations now no_evidence");
    return expired + stale;
  }

  /** Moves locked batches until a short one; returns how many operations moved. */
  private async batches(
    lock: (em: EntityManager, now: Date) => Promise<OperationRecord[]>,
    trigger: Extract<Trigger, { type: "sweep" | "running_timeout" }>,
    change: (now: Date) => OperationChange,
  ): Promise<number> {
    let total = 0;
    for (;;) {
      const now = this.o.now();
      const moved = await this.o.db.tx(async (em) => {
        const due = await lock(em, now);
        // In the SIMs' order: each SIM's counts row is taken at commit in the order of the
        // moves (Migration0011SimCounts), so two sweepers never take two SIMs' in opposite orders.
        for (const op of bySim(due)) await move(em, op, trigger, change(now), { trigger: trigger.type, at: now });
        return due.length;
      });
      total += moved;
      if (moved > 0) this.o.published();
      if (moved < this.o.batch || this.stopped) return total;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job.stop();
    await this.running?.catch(() => undefined);
  }
}

/** Operations ordered by their SIM (code units, the same on every replica; none last), then as they were. */
export function bySim(ops: readonly OperationRecord[]): OperationRecord[] {
  const key = (op: OperationRecord) => op.sim_id ?? "\uffff";
  return [...ops].sort((a, b) => (key(a) < key(b) ? -1 : key(a) > key(b) ? 1 : 0));
}
