import { SerialJob } from "@transferops/kit";
import { findMessage, unfinished } from "../store/messages.ts";
import type { FlowDeps } from "./ports.ts";
import { finish } from "./submit.ts";

export interface RedriveOptions {
  intervalMs: number;
  /** Only messages stored at least this long ago: a live submission finishes its own. */
  graceMs: number;
  batchSize?: number;
}

/**
 * Finishes what a crash or an unreachable dispatch or fleet left undone: messages still
 * pending correlation, and proven balances that have not reached fleet. It takes the same
 * locks as a submission, so racing one changes nothing; dispatch proves idempotently on the
 * message id, so asking again never confirms twice.
 */
export class Redrive extends SerialJob<number> {
  constructor(
    private readonly deps: FlowDeps,
    private readonly options: RedriveOptions,
  ) {
    super("evidence re-drive pass", options.intervalMs, deps.log);
  }

  /** One pass; returns how many messages it finished. */
  protected async runPass(now: Date): Promise<number> {
    const due = await unfinished(
      this.deps.db.em(),
      now,
      new Date(now.getTime() - this.options.graceMs),
      this.options.batchSize ?? 100,
    );
    let finished = 0;
    for (const { id } of due) {
      if (this.stopped) break;
      const m = await findMessage(this.deps.db.em(), id);
      if (!m) continue;
      const after = await finish(this.deps, m);
      if (after.state === "done" && after.balance_state !== "pending") finished += 1;
    }
    if (due.length) this.deps.log.info({ due: due.length, finished }, "evidence re-drive pass");
    return finished;
  }
}
