import type { Logger } from "./log.ts";

/**
 * Runs `pass` every `intervalMs` (read again before each wait), counted from the end of
 * the previous pass, so passes never overlap. A failed pass is logged and the next one runs
 * on schedule. The timer is unref'd: it never keeps the process alive. `stop()` clears the
 * timer and waits for the pass in flight.
 */
export class PeriodicJob {
  private timer?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;

  constructor(
    private readonly name: string,
    private readonly intervalMs: (() => number) | number,
    private readonly pass: () => Promise<unknown>,
    private readonly log: Logger,
  ) {}

  start(): void {
    this.stopped = false;
    this.schedule();
  }

  private schedule(): void {
    if (this.stopped) return;
    const ms = typeof this.intervalMs === "function" ? this.intervalMs() : this.intervalMs;
    this.timer = setTimeout(() => {
      this.running = this.runPass().finally(() => {
        this.running = undefined;
        this.schedule();
      });
    }, ms);
    this.timer.unref();
  }

  private async runPass(): Promise<void> {
    try {
      await this.pass();
    } catch (err) {
      this.log.warn({ err }, `${this.name} failed; will retry`);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
  }
}

/**
 * A job whose pass runs every `intervalMs` and may also be asked for at any time (a kick, a
 * test): at most one pass at a time, a pass asked for while one runs gets that one's result.
 * `stop()` ends the timer and waits for the pass in flight; a pass checks `stopped` between
 * its steps to end early.
 */
export abstract class SerialJob<T> {
  protected stopped = false;
  private running?: Promise<T>;
  private readonly job: PeriodicJob;

  constructor(name: string, intervalMs: number, log: Logger) {
    this.job = new PeriodicJob(name, intervalMs, () => this.pass(), log);
  }

  start(): void {
    this.stopped = false;
    this.job.start();
  }

  /** One pass now, unless one is running (then that one). */
  pass(now = new Date()): Promise<T> {
    this.running ??= this.runPass(now).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  protected abstract runPass(now: Date): Promise<T>;

  async stop(): Promise<void> {
    this.stopped = true;
    await this.job.stop();
    await this.running?.catch(() => undefined);
  }
}
