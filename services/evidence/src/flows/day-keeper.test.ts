// The day keeper (flows/day-keeper.ts) against real PostgreSQL: it sums the closed days' balance
// accounts ahead of their first read, the same sums a read makes; the first read then finds
// them kept; it sums again only what changed since, of any age, and never today.

import { describe, expect, it } from "vitest";
import {
  DEVICE,
  one,
  OTHER_SIM,
  session,
  SIM,
  transferIn,
  useHarness,
  type Harness,
} from "../../../../test/support/evidence-harness.ts";
import { planOfLast, recordStatements } from "../../../../test/support/statements.ts";
import { GIVE_EACH_SIM_DAY_A_ROW } from "../store/migrations/Migration0013UnkeptDays.ts";
import { unkeptDays } from "../store/day-chains.ts";
import { localDayOf, localMidnight } from "../domain/window.ts";
import { DayKeeper } from "./day-keeper.ts";
import { dailyReconciliation, SIMS_PER_SUM } from "./reconciliation.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const ADMIN = "33333333-3333-4333-8333-333333333333";
const DAY = "2026-11-20";
/** 08:00 UTC plus a minute on a day of November 2026 (09:00 local, UTC+1). */
const at = (minute: number, date = 20) => new Date(Date.UTC(2026, 10, date, 8, minute));
/** The keeper's clock: the morning after DAY (local). */
const MORNING_AFTER = new Date(Date.UTC(2026, 10, 21, 6, 0));
const receive = (amount: number, balanceAfter: number, when: Date, simId = SIM) =>
  one(h, transferIn(amount, balanceAfter, when), { receivedAt: when, simId });
const fleetDay = (day = DAY) => dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day, simId: "" });
const keeper = (daysPerPass = 31) => new DayKeeper(h.deps, { intervalMs: 3_600_000, daysPerPass });

/** The kept closing balance of a SIM's day, if its sums are kept. */
async function keptClosing(simId: string, day = DAY): Promise<number | null | undefined> {
  const [row] = (await h.db
    .em()
    .execute(`select balance from evidence.day_chains where sim_id = ? and day = ?::date`, [simId, day])) as {
    balance: { closing_balance: number | null } | null;
  }[];
  return row?.balance ? row.balance.closing_balance : undefined;
}

describe("the day keeper", () => {
  it("keeps yesterday's sums before anyone reads the day, as a read sums them", async () => {
    await receive(1000, 1000, at(0));
    await receive(200, 1200, at(1));
    await receive(500, 500, at(2), OTHER_SIM);
    expect(await keeper().pass(MORNING_AFTER)).toBe(2);
    expect([await keptClosing(SIM), await keptClosing(OTHER_SIM)]).toEqual([1200, 500]);
    // The first read finds them kept: nothing to sum, nothing to keep.
    let kept = 0;
    h.hooks.beforeKeep = () => void (kept += 1);
    const read = await fleetDay();
    expect(kept).toBe(0);
    // The same answer as summing the day from its messages.
    await h.db.em().execute(`update evidence.day_chains set balance = null, balance_changes = null`);
    expect(await fleetDay()).toEqual(read);
    expect(kept).toBe(1);
    expect(read.sims.find((s) => s.sim_id === SIM)).toMatchObject({ closing_balance: 1200, in_xaf: 1200, breaks: [] });
  });

  it("sums again only the SIM days that changed since they were kept", async () => {
    await receive(1000, 1000, at(0));
    await receive(500, 500, at(2), OTHER_SIM);
    const k = keeper();
    expect(await k.pass(MORNING_AFTER)).toBe(2);
    expect(await k.pass(MORNING_AFTER)).toBe(0);
    // A late SMS of that day.
    await receive(300, 1300, at(30));
    expect(await k.pass(MORNING_AFTER)).toBe(1);
    expect(await keptClosing(SIM)).toBe(1300);
  });

  it("keeps closed days of any age, newest first, as many a pass as it is given; never today", async () => {
    await receive(1000, 1000, at(0, 3));
    await receive(100, 1100, at(0, 10));
    await receive(100, 1200, at(0, 20));
    await receive(200, 200, at(0, 21));
    // The 21st is the keeper's today: never kept. Two days a pass: the 20th and the 10th first.
    expect(await keeper(2).pass(MORNING_AFTER)).toBe(2);
    expect(
      await Promise.all(["2026-11-03", "2026-11-10", "2026-11-20", "2026-11-21"].map((d) => keptClosing(SIM, d))),
    ).toEqual([undefined, 1100, 1200, undefined]);
    expect(await keeper(2).pass(MORNING_AFTER)).toBe(1);
    expect(await keptClosing(SIM, "2026-11-03")).toBe(1000);
    expect(await keeper(2).pass(MORNING_AFTER)).toBe(0);
    expect(await keptClosing(SIM, "2026-11-21")).toBeUndefined();
    // A late SMS 18 days back is summed again at the next pass; none with 0 days a pass.
    await receive(50, 1050, at(30, 3));
    expect(await keeper(0).pass(MORNING_AFTER)).toBe(0);
    expect(await keeper(2).pass(MORNING_AFTER)).toBe(1);
    expect(await keptClosing(SIM, "2026-11-03")).toBe(1050);
  });

  it("finds the days of a history older than the keeping once the migration gives them a row", async () => {
    await receive(1000, 1000, at(0, 12));
    await receive(500, 500, at(1, 12), OTHER_SIM);
    // As on a history written before Migration0011DayChains: no row, nothing for the keeper.
    await h.db.em().execute(`delete from evidence.day_chains`);
    expect(await keeper().pass(MORNING_AFTER)).toBe(0);
    await h.db.em().execute(GIVE_EACH_SIM_DAY_A_ROW);
    expect(await keeper().pass(MORNING_AFTER)).toBe(2);
    expect([await keptClosing(SIM, "2026-11-12"), await keptClosing(OTHER_SIM, "2026-11-12")]).toEqual([1000, 500]);
    // Given again, nothing changes: each row is there, kept.
    await h.db.em().execute(GIVE_EACH_SIM_DAY_A_ROW);
    expect(await keeper().pass(MORNING_AFTER)).toBe(0);
  });

  it("reads the days left to keep through the partial index, not the table, on a year of kept days", async () => {
    // A year of 100 SIMs' days, kept, and two left to keep: the pass reads those two.
    await h.db.em().execute(
      `insert into evidence.day_chains (sim_id, day, changes, balance, balance_changes, kept_at)
       select 'sim-' || s, date '2025-11-01' + d, 3, '{}'::jsonb, case when (s, d) in ((7, 300), (9, 301)) then 2 else 3 end, now()
         from generate_series(1, 100) s, generate_series(0, 364) d`,
    );
    await h.db.em().execute(`analyze evidence.day_chains`);
    const { result, plan, pages } = await planOfLast(h.db.em(), () => unkeptDays(h.db.em(), "2026-11-21", 31));
    expect(result).toEqual([
      { day: "2026-08-29", simIds: ["sim-9"] },
      { day: "2026-08-28", simIds: ["sim-7"] },
    ]);
    expect(plan.join("\n")).toContain("Index Scan Backward using day_chains_unkept");
    expect(plan.join("\n")).not.toContain("Seq Scan");
    // The table is about 300 pages; the two entries' walk reads a handful.
    expect(pages).toBeLessThan(20);
  });

  it("sums a day's SIMs ten at a time, each SIM's sums as one SIM alone gives", async () => {
    const sims = Array.from({ length: SIMS_PER_SUM + 2 }, (_, i) => `sim-b-day-${i}`);
    for (const [i, simId] of sims.entries()) {
      h.fleet.sims.set(simId, { operator: "operator_b", deviceId: DEVICE });
      await receive(100 + i, 1000 + i, at(i), simId);
    }
    const recorded = recordStatements();
    try {
      expect(await keeper().pass(MORNING_AFTER)).toBe(sims.length);
    } finally {
      recorded.stop();
    }
    // The messages of at most SIMS_PER_SUM SIM days a statement: two statements for twelve.
    const reads = recorded.params.filter((_, i) => recorded.statements[i].includes("cross join lateral"));
    expect(reads.map((p) => JSON.parse(String(p[0])).length)).toEqual([SIMS_PER_SUM, 2]);
    expect(await Promise.all(sims.map((simId) => keptClosing(simId)))).toEqual(sims.map((_, i) => 1000 + i));
  });

  it("goes on to the other days when one day's summing fails", async () => {
    await receive(1000, 1000, at(0, 10));
    await receive(100, 1100, at(0, 20));
    let failed = 0;
    h.hooks.beforeKeep = (day: string) => {
      if (day === "2026-11-20") {
        failed += 1;
        throw new Error("one day's summing fails");
      }
    };
    expect(await keeper().pass(MORNING_AFTER)).toBe(1);
    expect(failed).toBe(1);
    expect([await keptClosing(SIM, "2026-11-10"), await keptClosing(SIM, "2026-11-20")]).toEqual([1000, undefined]);
    h.hooks.beforeKeep = undefined;
    expect(await keeper().pass(MORNING_AFTER)).toBe(1);
    expect(await keptClosing(SIM, "2026-11-20")).toBe(1100);
  });

  it("brings today's run up to its pass, so that a read of today folds only what came since", async () => {
    // A minute into today at the earliest: the three messages are today's.
    const now = new Date(Math.max(Date.now(), localMidnight(localDayOf(new Date()))!.getTime() + 60_000));
    const earlier = (s: number) => new Date(now.getTime() - 1000 * s);
    await receive(1000, 1000, earlier(30));
    await receive(200, 1200, earlier(20));
    await receive(300, 300, earlier(10), OTHER_SIM);
    await keeper().pass(now);
    const runs = (await h.db
      .em()
      .execute(`select sim_id, running_until from evidence.day_chains where day = ?::date order by sim_id`, [
        localDayOf(now),
      ])) as { sim_id: string; running_until: string | Date }[];
    expect(runs.map((r) => [r.sim_id, new Date(r.running_until).getTime()])).toEqual(
      [
        [SIM, earlier(20).getTime()],
        [OTHER_SIM, earlier(10).getTime()],
      ].sort(),
    );
    const read = await fleetDay(localDayOf(now));
    expect(read.sims.map((s) => s.closing_balance)).toEqual([1200, 300]);
  });
});
