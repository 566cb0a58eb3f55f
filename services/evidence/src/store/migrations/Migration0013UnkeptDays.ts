import { Migration, type ConcurrentIndex } from "@transferops/kit";

/**
 * Every closed day kept ahead of its first read, whatever its age (docs/decisions/history.md,
 * "A closed day's first read: summed ahead by the day keeper"). The day keeper
 * (flows/day-keeper.ts) finds the SIM days whose sums are not kept, or changed since they were
 * kept, through `day_chains_unkept`: a partial index of the rows whose kept count is not their
 * count, so a pass reads the days left to keep, not the history. A row is in it from the first
 * message of its SIM's day (Migration0011DayChains' trigger) until its sums are kept, and again
 * after a change; a kept closed day leaves it.
 *
 * The days of a history older than Migration0011DayChains have no row: they are given one here
 * (count 0, nothing kept), a row for each SIM day `daily_reconciliations` holds (the SIM days a
 * fleet's day is read for), so the keeper finds them too. The insert takes ROW EXCLUSIVE on
 * day_chains (an SMS's trigger waits only on the row of its own SIM day, and only if the insert
 * wrote it: a day of today has its row already) and reads daily_reconciliations (a row per SIM
 * day: 36,500 a year for 100 SIMs). The index is built concurrently after it (SHARE UPDATE
 * EXCLUSIVE). `down()` drops the index and the rows given here that nothing kept since.
 */
/** A row (count 0, nothing kept) for each SIM day of `daily_reconciliations` that has none. */
export const GIVE_EACH_SIM_DAY_A_ROW = `insert into evidence.day_chains (sim_id, day)
  select sim_id, day from evidence.daily_reconciliations order by sim_id, day
  on conflict (sim_id, day) do nothing`;

export class Migration0013UnkeptDays extends Migration {
  override name = "Migration0013UnkeptDays";

  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "day_chains_unkept", on: `evidence.day_chains (day) where balance_changes is distinct from changes` },
  ];

  up(): void {
    this.addSql(GIVE_EACH_SIM_DAY_A_ROW);
  }

  override down(): void {
    this.addSql(`drop index if exists evidence.day_chains_unkept`);
    this.addSql(`delete from evidence.day_chains where changes = 0 and balance is null`);
  }
}
