// The day keeper (flows/day-keeper.ts) against real PostgreSQL: it sums the closed days' balance
// accounts ahead of their first read, the same sums a read makes; the first read then finds
// them kept; it sums again only what changed since, and never today nor past its days.

import { describe, expect, it } from "vitest";
import {
  one,
  OTHER_SIM,
  session,
  SIM,
  transferIn,
  useHarness,
  type Harness,
} from "../../../../test/support/evidence-harness.ts";
import { DayKeeper } from "./day-keeper.ts";
import { dailyReconciliation } from "./reconciliation.ts";

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
const keeper = (days = 7) => new DayKeeper(h.deps, { intervalMs: 3_600_000, days });

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

  it("leaves today, and the days before its count, to their first read", async () => {
    await receive(1000, 1000, at(0, 10));
    await receive(200, 200, at(0, 21));
    // The 21st is the keeper's today; the 10th is 11 days back, past its 7.
    expect(await keeper().pass(MORNING_AFTER)).toBe(0);
    expect([await keptClosing(SIM, "2026-11-10"), await keptClosing(SIM, "2026-11-21")]).toEqual([
      undefined,
      undefined,
    ]);
    expect(await keeper(11).pass(MORNING_AFTER)).toBe(1);
    expect(await keptClosing(SIM, "2026-11-10")).toBe(1000);
    expect(await keeper(0).pass(MORNING_AFTER)).toBe(0);
  });
});
