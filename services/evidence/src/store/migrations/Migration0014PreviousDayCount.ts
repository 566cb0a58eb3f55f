import { Migration } from "@transferops/kit";

/**
 * A kept day checked against the day before it from `day_chains` alone (docs/decisions/
 * history.md, "A kept day's start, checked from the day before's count"). A kept day is valid
 * while nothing of its own changed and it still starts from the same message: the last one
 * before its midnight that printed a balance. That message was found again at each read, a
 * descent of `messages_sim_balance` and a read of the message a SIM: 100 pages a fleet's day,
 * from disk for a day no one read lately (37 ms p50 at 10,000,000 operations, the slowest
 * path of the history left).
 *
 * `previous_changes` is the count of the day before's row (its `changes`) read before the kept
 * sums were summed, set only when the message they start from lies on that day. While that
 * count is the same, no chain message of the day before was added, changed, moved or removed
 * (Migration0011DayChains' trigger counts each), so the last one that printed a balance is the
 * same message, read the same: the kept day needs no descent. When the message lies on an
 * earlier day, or the day before had no row, it is null and the read checks the message as
 * before. Days kept before this migration have it null: they are checked as before until they
 * are kept again.
 *
 * `add column` without a default writes no row: ACCESS EXCLUSIVE on day_chains for the catalog
 * change only (an SMS's trigger waits for it, no longer). `down()` drops the column.
 */
export class Migration0014PreviousDayCount extends Migration {
  override name = "Migration0014PreviousDayCount";

  up(): void {
    this.addSql(`alter table evidence.day_chains add column previous_changes bigint`);
    this.addSql(`comment on column evidence.day_chains.previous_changes is
      'The day before''s count when the kept sums were summed, if they start from a message of that day (store/day-chains.ts)'`);
  }

  override down(): void {
    this.addSql(`alter table evidence.day_chains drop column previous_changes`);
  }
}
