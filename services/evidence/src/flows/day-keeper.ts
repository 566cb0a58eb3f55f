import { DAY_MS, SerialJob } from "@transferops/kit";
import { localDayOf, localMidnight } from "../domain/window.ts";
import { unkeptDays } from "../store/day-chains.ts";
import { dayRows } from "../store/reconciliations.ts";
import type { FlowDeps } from "./ports.ts";
import { balancesOfDay, balancesOfToday } from "./reconciliation.ts";

export interface DayKeeperOptions {
  intervalMs: number;
  /** The most closed days one pass sums, newest first (0: none). */
  daysPerPass: number;
}

/**
 * Sums each closed day's balance account ahead of its first read: a day's sums are kept once
 * summed (store/day-chains.ts), but the first read of a closed day summed all its messages on
 * the request's path (100,000 at the fleet's rate, 416 ms at 10,000,000 operations;
 * docs/decisions/history.md, "A closed day's first read: summed ahead by the day keeper"). Each
 * pass takes the closed days, of any age, with SIM days whose sums are not kept or changed
 * since (a late SMS, a correction): at most `daysPerPass` of them, newest first, found through
 * `day_chains_unkept` (Migration0013UnkeptDays), and sums only those SIM days with the same
 * function and rule as a read (`balancesOfDay`), so a supervisor's read of any closed day finds
 * it kept. A history older than the keeping is worked through `daysPerPass` days a pass. Today's
 * sums are kept up to a time and completed from the messages since (balancesOfToday): each pass
 * brings them up to its time too, so a read of today folds at most a pass's messages. Each
 * replica runs it: two passes at the same moment sum the same day twice and keep the same sums
 * (keepDays and keepRuns keep only what nothing changed since), never a wrong one. A day whose summing fails is logged and left to the next
 * pass; the others go on.
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
    if (this.options.daysPerPass === 0) return 0;
    let summed = 0;
    for (const { day, simIds } of await unkeptDays(this.deps.db.em(), localDayOf(now), this.options.daysPerPass)) {
      if (this.stopped) break;
      const from = localMidnight(day)!;
      try {
        summed += (await balancesOfDay(this.deps, simIds, { day, from, to: new Date(from.getTime() + DAY_MS) })).summed;
      } catch (err) {
        this.deps.log.error({ err, day }, "a closed day's balances not kept; the next pass tries again");
      }
    }
    if (summed) this.deps.log.info({ summed }, "closed days' balances kept");
    if (!this.stopped) await this.keepToday(now);
    return summed;
  }

  /** Today's runs brought up to now; a failure is logged and left to the next pass or read. */
  private async keepToday(now: Date): Promise<void> {
    const day = localDayOf(now);
    const from = localMidnight(day)!;
    try {
      const simIds = (await dayRows(this.deps.db.em(), day, null)).map((r) => r.sim_id);
      await balancesOfToday(this.deps, simIds, { day, from, to: new Date(from.getTime() + DAY_MS) });
    } catch (err) {
      this.deps.log.error({ err, day }, "today's balances not kept; the next pass tries again");
    }
  }
}
