import { DAY_MS, SerialJob } from "@transferops/kit";
import { localDayOf, localMidnight } from "../domain/window.ts";
import { dayRows } from "../store/reconciliations.ts";
import type { FlowDeps } from "./ports.ts";
import { balancesOfDay } from "./reconciliation.ts";

export interface DayKeeperOptions {
  intervalMs: number;
  /** The closed days it keeps, counted back from yesterday. */
  days: number;
}

/**
 * Sums each closed day's balance account ahead of its first read: a day's sums are kept once
 * summed (store/day-chains.ts), but the first read of a closed day summed all its messages on
 * the request's path (100,000 at the fleet's rate, 416 ms at 10,000,000 operations;
 * docs/decisions/history.md, "A closed day's first read: summed ahead by the day keeper"). Each
 * pass sums, for the last `days` closed days, the SIM days with no kept sums or with a message
 * changed since they were kept (a late SMS, a correction), the same function and rule as a
 * read (`balancesOfDay`), so the supervisor's morning read of yesterday finds it kept. Today is
 * never kept: its messages are still arriving. Each replica runs it: two passes at the same
 * moment sum the same day twice and keep the same sums (keepDays keeps only what nothing
 * changed since), never a wrong one.
 */
export class DayKeeper extends SerialJob<number> {
  constructor(
    private readonly deps: FlowDeps,
    private readonly options: DayKeeperOptions,
  ) {
    super("closed days' balance keeping", options.intervalMs, deps.log);
  }

  /** One pass; returns how many SIM days it summed (none when every one was kept and unchanged). */
  protected async runPass(now: Date): Promise<number> {
    const today = localMidnight(localDayOf(now))!;
    let summed = 0;
    for (let back = 1; back <= this.options.days && !this.stopped; back++) {
      const from = new Date(today.getTime() - back * DAY_MS);
      const day = localDayOf(from);
      const sims = (await dayRows(this.deps.db.em(), day, null)).map((r) => r.sim_id);
      summed += (await balancesOfDay(this.deps, sims, { day, from, to: new Date(from.getTime() + DAY_MS) })).summed;
    }
    if (summed) this.deps.log.info({ summed }, "closed days' balances kept");
    return summed;
  }
}
