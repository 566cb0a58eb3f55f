// A closed day's balance account kept once summed (Migration0011DayChains, store/day-chains.ts),
// against real PostgreSQL: read again while nothing changed, summed again after any change of
// what its chain reads, whatever wrote it, and never kept over a change it did not see.

import { beforeEach, describe, expect, it } from "vitest";
import pg from "pg";
import { localDayOf, localMidnight } from "../domain/window.ts";
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
import { recordStatements } from "../../../../test/support/statements.ts";
import { keepDays, keptDays, KEPT_DAYS, TODAYS_CHAINS } from "../store/day-chains.ts";
import { dayLinks } from "../domain/balance-chain.ts";
import { chainBeginning, chainsOfPeriod, deleteSimMessages } from "../store/messages.ts";
import { balanceChain, dailyReconciliation, SIMS_PER_SUM } from "./reconciliation.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const ADMIN = "33333333-3333-4333-8333-333333333333";
const DAY = "2026-11-20";
const NEXT_DAY = "2026-11-21";
/** A minute of 2026-11-20 or 2026-11-21 (local days, UTC+1: 08:00 UTC is 09:00 there). */
const at = (minute: number, date = 20) => new Date(Date.UTC(2026, 10, date, 8, minute));
const receive = (amount: number, balanceAfter: number, when: Date, simId = SIM) =>
  one(h, transferIn(amount, balanceAfter, when), { receivedAt: when, simId });

const fleetDay = (day = DAY) => dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day, simId: "" });
const simDay = async (simId: string, day = DAY) => (await fleetDay(day)).sims.find((s) => s.sim_id === simId)!;

async function dayChain(simId: string, day = DAY) {
  const [row] = (await h.db
    .em()
    .execute(`select changes, balance, balance_changes from evidence.day_chains where sim_id = ? and day = ?::date`, [
      simId,
      day,
    ])) as { changes: string; balance: { closing_balance: number } | null; balance_changes: string | null }[];
  return (
    row && {
      changes: Number(row.changes),
      closing: row.balance?.closing_balance,
      at: row.balance_changes === null ? undefined : Number(row.balance_changes),
    }
  );
}

/** The day before's count a kept day holds (Migration0014PreviousDayCount). */
async function previousChanges(day: string, simId = SIM) {
  const [row] = (await h.db
    .em()
    .execute(`select previous_changes from evidence.day_chains where sim_id = ? and day = ?::date`, [simId, day])) as {
    previous_changes: string | null;
  }[];
  return row.previous_changes === null ? null : Number(row.previous_changes);
}

/** Writes a closing balance into a kept day that its messages do not say: an answer that shows it was read from the kept row. */
async function tamper(simId: string, closing: number, day = DAY) {
  await h.db
    .em()
    .execute(
      `update evidence.day_chains set balance = jsonb_set(balance, '{closing_balance}', ?::jsonb) where sim_id = ? and day = ?::date`,
      [String(closing), simId, day],
    );
}

describe("a closed day's balance account, kept once summed", () => {
  it("keeps a closed day's sums at its first read and answers the next reads from them", async () => {
    await receive(1000, 1000, at(0));
    await receive(200, 1200, at(1));
    const first = await fleetDay();
    expect(first.sims[0]).toMatchObject({ opening_balance: 0, closing_balance: 1200, in_xaf: 1200, breaks: [] });
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: 1200, at: 2 });
    expect(await fleetDay()).toEqual(first);
    await tamper(SIM, 777);
    expect((await simDay(SIM)).closing_balance).toBe(777);
  });

  it("answers a kept day that starts from a message of an earlier day from its row", async () => {
    // Received at a time with microseconds, as the server stores a handset's report.
    await receive(1000, 1000, at(0));
    await h.db
      .em()
      .execute(
        `update evidence.messages set received_at = received_at + interval '123 microseconds', stored_at = stored_at + interval '456 microseconds'`,
      );
    await receive(100, 1100, at(0, 21));
    expect(await simDay(SIM, NEXT_DAY)).toMatchObject({ opening_balance: 1000, closing_balance: 1100 });
    await tamper(SIM, 777, NEXT_DAY);
    expect((await simDay(SIM, NEXT_DAY)).closing_balance).toBe(777);
  });

  it("sums the day again after a late message of that day, and keeps the new sums", async () => {
    await receive(1000, 1000, at(0));
    await fleetDay();
    await tamper(SIM, 777);
    await receive(300, 1300, at(5));
    expect(await simDay(SIM)).toMatchObject({ closing_balance: 1300, in_xaf: 1300, breaks: [] });
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: 1300, at: 2 });
  });

  it("sums the day again after any write of what its chain reads, by whatever path, and not after others", async () => {
    const m = await receive(1000, 1000, at(0));
    await fleetDay();
    const em = h.db.em();
    // What the chain does not read: the message's attempts, its dismissal.
    await em.execute(`update evidence.messages set attempts = attempts + 1, dismissed_at = now() where id = ?`, [
      m.messageId,
    ]);
    expect((await dayChain(SIM))!.changes).toBe(1);
    await tamper(SIM, 777);
    expect((await simDay(SIM)).closing_balance).toBe(777);
    // A new reading of the message (a wording rule's, written by a raw update here).
    await em.execute(`update evidence.messages set balance_after = 1500, amount = 1500 where id = ?`, [m.messageId]);
    expect(await simDay(SIM)).toMatchObject({ closing_balance: 1500, in_xaf: 1500 });
    // The message moved out of the chain, then its day.
    await em.execute(`update evidence.messages set outcome = 'restated' where id = ?`, [m.messageId]);
    expect(await simDay(SIM)).toMatchObject({ closing_balance: null, in_xaf: 0 });
    await em.execute(`update evidence.messages set outcome = 'stored', received_at = ? where id = ?`, [
      at(0, 21),
      m.messageId,
    ]);
    expect(await simDay(SIM)).toMatchObject({ closing_balance: null, in_xaf: 0 });
    // The raw update moved no day's counts: the SIM's own day, asked by its id.
    const next = await dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day: NEXT_DAY, simId: SIM });
    expect(next.sims[0]).toMatchObject({ closing_balance: 1500, in_xaf: 1500 });
  });

  it("sums a day again when the day before it changes where it starts", async () => {
    await receive(1000, 1000, at(0));
    await receive(100, 1100, at(0, 21));
    expect(await simDay(SIM, NEXT_DAY)).toMatchObject({ opening_balance: 1000, closing_balance: 1100, breaks: [] });
    await tamper(SIM, 777, NEXT_DAY);
    // A late message of the day before: the next day now opens at 1500, and its chain breaks.
    await receive(500, 1500, at(30));
    const next = await simDay(SIM, NEXT_DAY);
    expect(next).toMatchObject({ opening_balance: 1500, closing_balance: 1100 });
    expect(next.breaks).toHaveLength(1);
  });

  it("keeps the day before's count with sums that start from a message of that day, and none otherwise", async () => {
    await receive(1000, 1000, at(0));
    await receive(100, 1100, at(0, 21));
    await simDay(SIM, NEXT_DAY);
    expect(await previousChanges(NEXT_DAY)).toBe(1);
    // The day after next starts from a message two days back: the day between has no row.
    await receive(10, 1110, at(0, 23));
    await simDay(SIM, "2026-11-23");
    expect(await previousChanges("2026-11-23")).toBeNull();
  });

  it("reads no message for a kept day whose day before's count is unchanged, and the message otherwise", async () => {
    const start = await receive(1000, 1000, at(0));
    const middle = await receive(100, 1100, at(0, 21));
    await receive(10, 1110, at(0, 23));
    await simDay(SIM, NEXT_DAY);
    await simDay(SIM, "2026-11-23");
    // A change no path makes: the messages the two days start from rewritten with the trigger
    // that counts them off. The 21st starts from the 20th's message and that day's count vouches
    // for it: kept, answered without reading the message. The 23rd starts from the 21st's, two
    // days back: the message is read again, shows the change, and the day is summed again.
    const em = h.db.em();
    await em.execute(`alter table evidence.messages disable trigger messages_chain_update`);
    try {
      await em.execute(`update evidence.messages set balance_after = 900 where id = ?`, [start.messageId]);
      await em.execute(`update evidence.messages set balance_after = 1050 where id = ?`, [middle.messageId]);
    } finally {
      await em.execute(`alter table evidence.messages enable trigger messages_chain_update`);
    }
    expect((await simDay(SIM, NEXT_DAY)).opening_balance).toBe(1000);
    expect((await simDay(SIM, "2026-11-23")).opening_balance).toBe(1050);
    // The statement's plan: the descent runs under a one-time filter, never for the 21st.
    const plan = async (day: string) =>
      (
        (await em.execute(`explain (analyze, costs off) ${KEPT_DAYS}`, [
          JSON.stringify([SIM]),
          day,
          day,
          new Date(`${day}T00:00:00+01:00`),
        ])) as { "QUERY PLAN": string }[]
      )
        .map((r) => r["QUERY PLAN"])
        .join("\n");
    expect(await plan(NEXT_DAY)).toMatch(/One-Time Filter[\s\S]*on messages m \(never executed\)/);
    expect(await plan("2026-11-23")).toMatch(/on messages m \(actual time=[\d.]+\.\.[\d.]+ rows=1 loops=1\)/);
    // Counted, as every path's change is: the 21st is summed again.
    await em.execute(`update evidence.messages set balance_after = 950 where id = ?`, [start.messageId]);
    expect((await simDay(SIM, NEXT_DAY)).opening_balance).toBe(950);
  });

  it("sums a day again when the day before changes between the count's read and the keep", async () => {
    await receive(1000, 1000, at(0));
    await receive(100, 1100, at(0, 21));
    let late = true;
    h.hooks.beforeKeep = async (day) => {
      if (!late || day !== NEXT_DAY) return;
      late = false;
      await receive(500, 1500, at(30));
    };
    // Summed before the late message of the day before: kept with the count read before it.
    expect((await simDay(SIM, NEXT_DAY)).opening_balance).toBe(1000);
    expect(await previousChanges(NEXT_DAY)).toBe(1);
    const next = await simDay(SIM, NEXT_DAY);
    expect(next).toMatchObject({ opening_balance: 1500, closing_balance: 1100 });
    expect(next.breaks).toHaveLength(1);
    expect(await previousChanges(NEXT_DAY)).toBe(2);
  });

  it("sums again only the SIMs whose day changed", async () => {
    await receive(1000, 1000, at(0), SIM);
    await receive(2000, 2000, at(0), OTHER_SIM);
    await fleetDay();
    await tamper(SIM, 777);
    await tamper(OTHER_SIM, 888);
    await receive(100, 2100, at(1), OTHER_SIM);
    const day = await fleetDay();
    expect(day.sims.map((s) => [s.sim_id, s.closing_balance])).toEqual(
      [
        [SIM, 777],
        [OTHER_SIM, 2100],
      ].sort(),
    );
    expect(day.fleet.closing_balance).toBe(777 + 2100);
  });

  it("never keeps sums over a change they did not see", async () => {
    await receive(1000, 1000, at(0));
    const em = h.db.em();
    const from = new Date(Date.UTC(2026, 10, 19, 23));
    // Read at one count, a message changes the day, then the sums of the first read are offered.
    const read = (await keptDays(em, [SIM], DAY, from)).get(SIM)!;
    expect(read.changes).toBe(1);
    await receive(300, 1300, at(5));
    const stale = { opening_balance: 0, closing_balance: 1000 } as never;
    await keepDays(em, DAY, [
      { simId: SIM, counted: true, changes: read.changes, balance: stale, beforeKey: "", previousChanges: null },
    ]);
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: undefined, at: undefined });
    // A day never counted (no row) whose first message's row appears meanwhile: not kept either.
    await keepDays(em, "2026-11-22", [
      { simId: SIM, counted: false, changes: 0, balance: stale, beforeKey: "", previousChanges: null },
    ]);
    expect(await dayChain(SIM, "2026-11-22")).toMatchObject({ changes: 0, closing: 1000 });
    await receive(10, 1310, at(0, 23));
    await keepDays(em, "2026-11-23", [
      { simId: SIM, counted: false, changes: 0, balance: stale, beforeKey: "", previousChanges: null },
    ]);
    expect(await dayChain(SIM, "2026-11-23")).toEqual({ changes: 1, closing: undefined, at: undefined });
    // A row a submission holds (its change not committed yet): skipped, without waiting for it.
    const other = new pg.Client({ connectionString: h.tdb.url });
    await other.connect();
    try {
      await other.query("begin");
      await other.query(`update evidence.day_chains set changes = changes + 1 where sim_id = $1 and day = $2`, [
        SIM,
        DAY,
      ]);
      await keepDays(em, DAY, [
        { simId: SIM, counted: true, changes: 2, balance: stale, beforeKey: "", previousChanges: null },
      ]);
      await other.query("rollback");
    } finally {
      await other.end();
    }
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: undefined, at: undefined });
    expect((await simDay(SIM)).closing_balance).toBe(1300);
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: 1300, at: 2 });
  });

  it("answers what a fresh sum answers while reads and late messages of the day run at once", async () => {
    await receive(1000, 1000, at(0), SIM);
    await receive(1000, 1000, at(0), OTHER_SIM);
    for (let i = 1; i <= 30; i++) {
      // A read and two late messages at once, then the day read again (from what was kept, or
      // summed) against a sum of its messages with nothing kept.
      await Promise.all([
        fleetDay(),
        receive(10, 1000 + 10 * i, at(i), SIM),
        fleetDay(),
        receive(10, 1000 + 10 * i, at(i), OTHER_SIM),
      ]);
      const kept = await fleetDay();
      await h.db.em().execute(`update evidence.day_chains set balance = null, balance_changes = null`);
      expect(kept).toEqual(await fleetDay());
    }
    expect((await fleetDay()).sims.map((s) => s.closing_balance)).toEqual([1300, 1300]);
  });

  it("does not keep sums a late message committed after their read made stale", async () => {
    await receive(1000, 1000, at(0));
    let late = true;
    h.hooks.beforeKeep = async () => {
      if (!late) return;
      late = false;
      await receive(300, 1300, at(5));
    };
    // This read summed the day before the late message: it answers what it read, keeps nothing.
    expect((await simDay(SIM)).closing_balance).toBe(1000);
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: undefined, at: undefined });
    expect((await simDay(SIM)).closing_balance).toBe(1300);
    expect(await dayChain(SIM)).toEqual({ changes: 2, closing: 1300, at: 2 });
  });

  it("forgets a SIM's kept days with its messages", async () => {
    await receive(1000, 1000, at(0), SIM);
    await receive(2000, 2000, at(0), OTHER_SIM);
    await fleetDay();
    await deleteSimMessages(h.db.em(), SIM);
    expect(await dayChain(SIM)).toBeUndefined();
    expect(await dayChain(OTHER_SIM)).toMatchObject({ closing: 2000 });
  });
});

describe("today's balance account, kept up to a time", () => {
  const today = () => localDayOf(new Date());
  /** `s` seconds into today (local), or into the last half hour when today is older than that. */
  let start = 0;
  beforeEach(() => void (start = Math.max(localMidnight(today())!.getTime() + 1000, Date.now() - 1_800_000)));
  const todayAt = (s: number) => new Date(start + 1000 * s);
  const todayOf = () => fleetDay(today());
  const simToday = async (simId = SIM) => (await todayOf()).sims.find((s) => s.sim_id === simId)!;

  async function run(simId = SIM) {
    const [row] = (await h.db
      .em()
      .execute(`select running, running_until from evidence.day_chains where sim_id = ? and day = ?::date`, [
        simId,
        today(),
      ])) as { running: { run: { in_xaf: number } } | null; running_until: string | Date | null }[];
    return row.running ? { in_xaf: row.running.run.in_xaf, until: new Date(row.running_until!).getTime() } : undefined;
  }

  /** Today as a sum of its messages answers it, no run kept. */
  async function summedWhole() {
    await h.db.em().execute(`update evidence.day_chains set running = null, running_until = null`);
    return todayOf();
  }

  it("keeps today's sums up to its latest message's millisecond and completes them from the messages since", async () => {
    await receive(1000, 1000, todayAt(0));
    await receive(200, 1200, todayAt(1));
    await receive(300, 1500, todayAt(2));
    expect(await simToday()).toMatchObject({ opening_balance: 0, closing_balance: 1500, in_xaf: 1500, breaks: [] });
    // Kept: the first two; the latest is read again at the next read.
    expect(await run()).toEqual({ in_xaf: 1200, until: todayAt(2).getTime() });
    // A run written over shows in the answer: the next read starts from it.
    await h.db
      .em()
      .execute(`update evidence.day_chains set running = jsonb_set(running, '{run,in_xaf}', '5000') where sim_id = ?`, [
        SIM,
      ]);
    expect((await simToday()).in_xaf).toBe(5300);
    await receive(100, 1600, todayAt(3));
    expect((await simToday()).in_xaf).toBe(5400);
    expect(await run()).toEqual({ in_xaf: 5300, until: todayAt(3).getTime() });
    expect((await summedWhole()).sims[0]).toMatchObject({ closing_balance: 1600, in_xaf: 1600 });
  });

  it("reads every SIM with a run in one statement, and a SIM without one from its day's first message", async () => {
    const sims = Array.from({ length: SIMS_PER_SUM + 2 }, (_, i) => `sim-b-today-${i}`);
    for (const [i, simId] of sims.entries()) {
      h.fleet.sims.set(simId, { operator: "operator_b", deviceId: DEVICE });
      await receive(100, 100, todayAt(0), simId);
      await receive(10 + i, 110 + i, todayAt(10), simId);
    }
    const read = async () => {
      const recorded = recordStatements();
      try {
        const day = await todayOf();
        return { day, statements: recorded.statements };
      } finally {
        recorded.stop();
      }
    };
    const wholeDay = (statements: string[]) =>
      statements.filter((q) => q.includes("union all") && !q.includes("'run'"));
    // No run yet: every SIM's day read whole, SIMS_PER_SUM a statement, and the runs kept.
    const first = await read();
    expect(wholeDay(first.statements)).toHaveLength(2);
    // Then one statement for the twelve, nothing read whole; the same answer.
    const second = await read();
    expect(second.statements.filter((q) => q === TODAYS_CHAINS)).toHaveLength(1);
    expect(wholeDay(second.statements)).toHaveLength(0);
    expect(second.day).toEqual(first.day);
    expect(Object.fromEntries(second.day.sims.map((s) => [s.sim_id, s.closing_balance]))).toEqual(
      Object.fromEntries(sims.map((simId, i) => [simId, 110 + i])),
    );
  });

  it("drops the run when a message received before its time changes, by whatever path, and not after one since", async () => {
    const early = await receive(1000, 1000, todayAt(0));
    await receive(200, 1200, todayAt(10));
    const latest = await receive(300, 1500, todayAt(20));
    await todayOf();
    expect(await run()).toBeDefined();
    const em = h.db.em();
    // The latest message is read at each read: a change of it keeps the run.
    await em.execute(`update evidence.messages set balance_after = 1501 where id = ?`, [latest.messageId]);
    expect(await run()).toBeDefined();
    // A late message received before the run's time.
    await receive(50, 1050, todayAt(5));
    expect(await run()).toBeUndefined();
    const afterLate = await todayOf();
    expect(afterLate.sims[0]).toMatchObject({ in_xaf: 1550, closing_balance: 1501 });
    expect(afterLate).toEqual(await summedWhole());
    // A new reading of an early message (a wording rule's, written by a raw update here).
    expect(await run()).toBeDefined();
    await em.execute(`update evidence.messages set balance_after = 900, amount = 900 where id = ?`, [early.messageId]);
    expect(await run()).toBeUndefined();
    const reread = await todayOf();
    expect(reread.sims[0].in_xaf).toBe(1450);
    expect(reread).toEqual(await summedWhole());
    // An early message moved to another SIM: both SIMs' runs dropped.
    await receive(2000, 2000, todayAt(0), OTHER_SIM);
    await receive(100, 2100, todayAt(30), OTHER_SIM);
    await todayOf();
    expect([await run(SIM), await run(OTHER_SIM)].every(Boolean)).toBe(true);
    await em.execute(`update evidence.messages set sim_id = ? where id = ?`, [OTHER_SIM, early.messageId]);
    expect([await run(SIM), await run(OTHER_SIM)]).toEqual([undefined, undefined]);
    const moved = await todayOf();
    expect(moved).toEqual(await summedWhole());
    // A message moved since the run's time, into the day: the run holds, the message is read.
    await todayOf();
    const since = await receive(10, 2110, todayAt(40), OTHER_SIM);
    await todayOf();
    await em.execute(`update evidence.messages set received_at = ? where id = ?`, [todayAt(50), since.messageId]);
    expect(await run(OTHER_SIM)).toBeDefined();
    const kept = await todayOf();
    expect(kept).toEqual(await summedWhole());
  });

  it("leaves out a message since that repeats a reference the run counted, as the chain does", async () => {
    const first = await receive(1000, 1000, todayAt(0));
    await receive(200, 1200, todayAt(10));
    const repeat = await receive(300, 1500, todayAt(20));
    await todayOf();
    const em = h.db.em();
    // The operator sends the first text's reference again (a raw update here: the same kind and reference).
    await em.execute(
      `update evidence.messages set operator_ref = (select operator_ref from evidence.messages where id = ?) where id = ?`,
      [first.messageId, repeat.messageId],
    );
    expect(await run()).toBeDefined();
    const read = await todayOf();
    expect(read.sims[0]).toMatchObject({ in_xaf: 1200, closing_balance: 1200 });
    expect(read).toEqual(await summedWhole());
  });

  it("reads the day whole when the day before changes where it starts", async () => {
    const yesterday = new Date(localMidnight(today())!.getTime() - 3_600_000);
    await receive(1000, 1000, yesterday);
    await receive(100, 1100, todayAt(0));
    await receive(100, 1200, todayAt(10));
    expect((await simToday()).opening_balance).toBe(1000);
    expect(await run()).toBeDefined();
    await receive(500, 1500, new Date(yesterday.getTime() + 60_000));
    const read = await simToday();
    expect(read).toMatchObject({ opening_balance: 1500, closing_balance: 1200 });
    expect(read.breaks).toHaveLength(1);
    expect(await run()).toMatchObject({ until: todayAt(10).getTime() });
  });

  it("orders the messages of one millisecond as a whole sum does, microseconds and all", async () => {
    await receive(1000, 1000, todayAt(0));
    const a = await receive(100, 1100, todayAt(10));
    await todayOf();
    const em = h.db.em();
    const until = (await run())!.until;
    expect(until).toBe(todayAt(10).getTime());
    // A message later in the run's millisecond, whose microseconds sort it before the latest one:
    // read again at each read, it keeps the run.
    const b = await receive(100, 1200, todayAt(20));
    await em.execute(
      `update evidence.messages set received_at = ?::timestamptz + interval '700 microseconds' where id = ?`,
      [todayAt(10), b.messageId],
    );
    await em.execute(
      `update evidence.messages set received_at = ?::timestamptz + interval '900 microseconds' where id = ?`,
      [todayAt(10), a.messageId],
    );
    expect(await run()).toEqual({ in_xaf: 1000, until });
    const read = await todayOf();
    expect(read.sims[0]).toMatchObject({ in_xaf: 1200, closing_balance: 1200 });
    expect(read).toEqual(await summedWhole());
    // A message in the millisecond before the run's time, by a microsecond: the run is dropped.
    await todayOf();
    const c = await receive(10, 1210, todayAt(30));
    await em.execute(
      `update evidence.messages set received_at = ?::timestamptz - interval '1 microsecond' where id = ?`,
      [todayAt(10), c.messageId],
    );
    expect(await run()).toBeUndefined();
    expect(await todayOf()).toEqual(await summedWhole());
  });

  it("does not keep a run that a message committed after its read made stale", async () => {
    await receive(1000, 1000, todayAt(0));
    await receive(200, 1200, todayAt(10));
    let late = true;
    h.hooks.beforeKeep = async () => {
      if (!late) return;
      late = false;
      await receive(300, 1300, todayAt(5));
    };
    expect((await simToday()).in_xaf).toBe(1200);
    expect(await run()).toBeUndefined();
    expect(await simToday()).toMatchObject({ in_xaf: 1500 });
    expect(await run()).toMatchObject({ in_xaf: 1300 });
  });

  it("answers what a whole sum answers while reads and messages of today, late ones too, run at once", async () => {
    await receive(1000, 1000, todayAt(0), SIM);
    await receive(1000, 1000, todayAt(0), OTHER_SIM);
    for (let i = 1; i <= 30; i++) {
      // A read, a message received now and one received earlier, at once; then the day read
      // again (from the run, or summed) against a sum of its messages with no run kept.
      await Promise.all([
        todayOf(),
        receive(10, 1000 + 10 * i, todayAt(10 * i), SIM),
        todayOf(),
        receive(10, 1000 + 10 * i, todayAt(10 * i - (i % 3 === 0 ? 25 : 0)), OTHER_SIM),
      ]);
      const kept = await todayOf();
      expect(kept).toEqual(await summedWhole());
    }
    expect((await todayOf()).sims.map((s) => s.in_xaf)).toEqual([1300, 1300]);
  });
});

describe("a page of a SIM's balance chain, placed from the chain's beginning", () => {
  const chainPage = (day: string, offset: number, limit: number) =>
    balanceChain(h.deps, { caller: session(ADMIN, "admin"), day, simId: SIM, offset, limit });

  /** The day's links as the whole day gives them (every message read, then placed). */
  async function wholeDay(day: string) {
    const from = localMidnight(day)!;
    const { before, messages } = (
      await chainsOfPeriod(h.db.em(), [SIM], from, new Date(from.getTime() + 86_400_000))
    ).get(SIM)!;
    return dayLinks(before ?? null, messages);
  }

  /**
   * 40 messages from `when(0)`, a balance each: a break at the 12th (10 more than its movement
   * explains), three in one millisecond whose microseconds sort them against their storage
   * order (the 19th to 21st), and the 25th repeating the 24th's reference (left out of the chain).
   */
  async function busyDay(when: (i: number) => Date) {
    const ids: string[] = [];
    let balance = 0;
    for (let i = 0; i < 40; i++) {
      balance += 100 + (i === 12 ? 10 : 0);
      ids.push((await receive(100, balance, when(i))).messageId);
    }
    const em = h.db.em();
    for (const [i, us] of [
      [19, 900],
      [20, 100],
      [21, 500],
    ] as const)
      await em.execute(
        `update evidence.messages set received_at = ?::timestamptz + make_interval(secs => ? / 1e6) where id = ?`,
        [when(19), us, ids[i]],
      );
    await em.execute(
      `update evidence.messages set operator_ref = (select operator_ref from evidence.messages where id = ?) where id = ?`,
      [ids[24], ids[25]],
    );
  }

  const PAGES = [
    [0, 5],
    [0, 200],
    [18, 1],
    [18, 2],
    [19, 2],
    [20, 4],
    [23, 2],
    [35, 10],
    [39, 200],
    [60, 5],
  ] as const;

  async function expectPagesOfWholeDay(day: string) {
    const whole = await wholeDay(day);
    expect(whole.length).toBe(39);
    const breaks = whole.filter((l) => l.break).length;
    expect(breaks).toBeGreaterThanOrEqual(2);
    for (const [offset, limit] of PAGES)
      expect(await chainPage(day, offset, limit), `offset ${offset}, limit ${limit}`).toEqual({
        sim_id: SIM,
        day,
        total: whole.length,
        breaks,
        offset,
        links: whole.slice(offset, offset + limit),
      });
  }

  it("answers a closed day's pages as the whole day places them: summed, kept, and kept before links were counted", async () => {
    await busyDay((i) => at(i));
    await expectPagesOfWholeDay(DAY);
    expect((await dayChain(SIM))!.at).toBeDefined();
    await expectPagesOfWholeDay(DAY);
    // Sums kept before they counted their links: summed again, and kept with the count.
    await h.db.em().execute(`update evidence.day_chains set balance = balance - 'links'`);
    await expectPagesOfWholeDay(DAY);
    const [kept] = (await h.db
      .em()
      .execute(`select balance->'links' as links from evidence.day_chains where sim_id = ? and day = ?::date`, [
        SIM,
        DAY,
      ])) as { links: number | null }[];
    expect(kept.links).toBe(39);
  });

  it("answers today's pages as the whole day places them, from its kept run and without", async () => {
    const today = localDayOf(new Date());
    const start = Math.max(localMidnight(today)!.getTime() + 1000, Date.now() - 1_800_000);
    await busyDay((i) => new Date(start + 10_000 * i));
    await expectPagesOfWholeDay(today);
    await dailyReconciliation(h.deps, { caller: session(ADMIN, "admin"), day: today, simId: "" });
    await expectPagesOfWholeDay(today);
    await h.db
      .em()
      .execute(`update evidence.day_chains set running = jsonb_set(running, '{run}', (running->'run') - 'links')`);
    await expectPagesOfWholeDay(today);
  });

  it("reads the chain's beginning up to the page's end, the last millisecond whole", async () => {
    await busyDay((i) => at(i));
    const from = localMidnight(DAY)!;
    const to = new Date(from.getTime() + 86_400_000);
    const em = h.db.em();
    expect(await chainBeginning(em, SIM, from, to, 5)).toMatchObject({ whole: false, messages: { length: 5 } });
    // The 20th message read lies in the millisecond of the 19th to 21st: all three are read.
    expect(await chainBeginning(em, SIM, from, to, 20)).toMatchObject({ whole: false, messages: { length: 22 } });
    expect(await chainBeginning(em, SIM, from, to, 40)).toMatchObject({ whole: false, messages: { length: 40 } });
    expect(await chainBeginning(em, SIM, from, to, 41)).toMatchObject({ whole: true, messages: { length: 40 } });
  });
});
