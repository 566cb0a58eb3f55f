import type { Caller } from "@transferops/kit";
import {
  closeDay,
  dayChainOf,
  dayLinks,
  foldDay,
  reconcileDay,
  startDay,
  type ChainLink,
  type ChainMessage,
  type DayBalance,
} from "../domain/balance-chain.ts";
import { invalid, refusal } from "../domain/reasons.ts";
import { needsGrant, requireBoard } from "../domain/scope.ts";
import { localDayOf, localMidnight } from "../domain/window.ts";
import {
  beforeKey,
  countsLinks,
  keepDays,
  keepRuns,
  keptDays,
  keptStillHolds,
  todaysChains,
  type DayToKeep,
  type KeptDay,
  type RunToKeep,
  type TodaysChain,
} from "../store/day-chains.ts";
import { chainBeginning, chainsOfPeriod } from "../store/messages.ts";
import { dayRows, type DayRow } from "../store/reconciliations.ts";
import type { FlowDeps } from "./ports.ts";
import { lookupSim } from "./submit.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

export type SimDay = DayBalance &
  Omit<DayRow, "proven_xaf" | "fees_xaf"> & {
    day: string;
    proven_xaf: number;
    proven_fees_xaf: number;
  };

export interface FleetDay {
  day: string;
  sims: number;
  opening_balance: number;
  closing_balance: number;
  proven_xaf: number;
  proven_fees_xaf: number;
  in_xaf: number;
  out_xaf: number;
  fees_xaf: number;
  explained_xaf: number;
  unexplained_xaf: number;
  chain_breaks: number;
  sims_not_reconciled: string[];
}

/**
 * One local day (UTC+1) per SIM and for the fleet: supervisors and admins only. The stored
 * daily rows say which SIMs had messages and how many of each outcome; the balance account
 * and the chain breaks are summed from the messages (balancesOfDay: a closed day's sums kept
 * until one of its messages changes), so a message that arrived late and closed a gap leaves
 * no break.
 */
export async function dailyReconciliation(
  deps: FlowDeps,
  req: { caller?: Caller; day: string; simId: string },
): Promise<{ fleet: FleetDay; sims: SimDay[] }> {
  const { day, from, to } = dayOfRequest(req);
  const em = deps.db.em();
  const rowsOfDay = await dayRows(em, day, req.simId || null);
  // A SIM without messages that day is answered with its day unchanged only if it exists:
  // an unknown id is 404, never an empty day.
  if (req.simId && rowsOfDay.length === 0 && !(await lookupSim(deps, req.simId))) {
    throw refusal("sim_not_found", `SIM ${req.simId} not found`, { sim_id: req.simId });
  }
  const stored = req.simId && rowsOfDay.length === 0 ? [emptyRow(req.simId)] : rowsOfDay;
  const { balances } = await balancesOfDay(
    deps,
    stored.map((row) => row.sim_id),
    { day, from, to },
  );
  const sims: SimDay[] = stored.map((row) => {
    const { proven_xaf, fees_xaf, ...counts } = row;
    return { ...balances.get(row.sim_id)!, ...counts, day, proven_xaf, proven_fees_xaf: fees_xaf };
  });
  return { fleet: fleetOf(day, sims), sims };
}

/**
 * The most SIM days whose messages are read in one statement to be summed. The fleet's whole
 * day in one statement was every message of the day in the process's memory at once (100,000
 * at the fleet's rate, the issue's; docs/decisions/history.md, "The day keeper's memory"); ten
 * SIMs' days are a tenth of that, the same sums in ten statements.
 */
export const SIMS_PER_SUM = 10;

/**
 * Each SIM's balance account of a day. A closed day (before today) is read from its kept sums
 * where no chain message of that SIM's day changed since and the day still starts from the
 * same message (store/day-chains.ts); the other SIMs' days are summed from their messages,
 * SIMS_PER_SUM SIMs a statement (their day's messages and a last balance a SIM), and a closed
 * day's sums are kept for the next read (and ahead of it, by the DayKeeper,
 * flows/day-keeper.ts). Today's messages are still arriving: its sums are kept up to a time and
 * completed from the messages since (balancesOfToday). `summed`: the SIMs whose day was summed
 * from its first message.
 */
export async function balancesOfDay(
  deps: FlowDeps,
  simIds: readonly string[],
  period: { day: string; from: Date; to: Date },
): Promise<{ balances: Map<string, DayBalance>; summed: number }> {
  const { day, from, to } = period;
  const today = localDayOf(new Date());
  if (day === today) return balancesOfToday(deps, simIds, period);
  const em = deps.db.em();
  const balances = new Map<string, DayBalance>();
  const closed = day < today;
  const known = closed ? await keptDays(em, simIds, day, from) : new Map<string, KeptDay>();
  const toSum: string[] = [];
  for (const id of simIds) {
    const k = known.get(id);
    if (keptStillHolds(k)) balances.set(id, k.kept.balance);
    else toSum.push(id);
  }
  if (toSum.length === 0) return { balances, summed: 0 };
  const dayBefore = localDayOf(new Date(from.getTime() - DAY_MS));
  const keep: DayToKeep[] = [];
  // SIMS_PER_SUM SIMs' messages at a time: what the process holds is bounded by those SIMs'
  // day, not the fleet's.
  for (let i = 0; i < toSum.length; i += SIMS_PER_SUM) {
    for (const [id, { before, messages }] of await chainsOfPeriod(em, toSum.slice(i, i + SIMS_PER_SUM), from, to)) {
      const balance = reconcileDay(before ?? null, messages);
      balances.set(id, balance);
      if (closed) {
        const { counted, changes, previousChanges } = known.get(id)!;
        // The day before's count vouches for the start only if the start lies on that day.
        const startsOnDayBefore = before !== undefined && localDayOf(before.received_at) === dayBefore;
        keep.push({
          simId: id,
          counted,
          changes,
          balance,
          beforeKey: beforeKey(before),
          previousChanges: startsOnDayBefore ? previousChanges : null,
        });
      }
    }
  }
  if (keep.length) await deps.hooks?.beforeKeep?.(day);
  await keepDays(em, day, keep);
  return { balances, summed: toSum.length };
}

/**
 * Today's balance account of each SIM, from its run kept up to a time (store/day-chains.ts,
 * Migration0016TodayRuns) and the chain messages received since: one statement for every SIM
 * with a run, so that a read costs the messages since the last read or pass, not the day's. A
 * SIM without a run that holds (none kept yet, or a message received before its time changed:
 * the trigger drops it), or whose run started from another message before the day (a late
 * message of yesterday), is summed from its day's first message, SIMS_PER_SUM SIMs a statement
 * as a closed day is. Each read keeps the run over what it read up to the millisecond of the
 * latest message, which the next read reads again: a message arriving later in that millisecond
 * sorts among them. `summed`: the SIMs summed from the day's start.
 */
export async function balancesOfToday(
  deps: FlowDeps,
  simIds: readonly string[],
  { day, from, to }: { day: string; from: Date; to: Date },
): Promise<{ balances: Map<string, DayBalance>; summed: number }> {
  const em = deps.db.em();
  const balances = new Map<string, DayBalance>();
  const keep: RunToKeep[] = [];
  const found = await todaysChains(em, simIds, day, from, to);
  const settle = (id: string, t: TodaysChain) => {
    const before = t.before ?? null;
    const chain = dayChainOf(before, t.messages);
    // Kept: the run over the messages received before the latest one's millisecond (none
    // without a message: the run stays as it was).
    const until = latestMillisecond(t.messages);
    const cut = until ?? Infinity;
    const start = t.kept ? t.kept.running.run : startDay(before);
    const upTo = foldDay(
      start,
      chain.filter((m) => m.received_at.getTime() < cut),
    );
    const rest = chain.filter((m) => m.received_at.getTime() >= cut);
    balances.set(id, closeDay(foldDay(upTo, rest)));
    if (t.counted && until !== null && (!t.kept || until > t.kept.until.getTime()))
      keep.push({
        simId: id,
        changes: t.changes,
        running: { run: upTo, before_key: beforeKey(t.before) },
        until: new Date(until),
      });
  };
  const whole: string[] = [];
  for (const [id, t] of found) {
    if (t.kept && t.kept.running.before_key === beforeKey(t.before) && countsLinks(t.kept.running.run)) settle(id, t);
    else whole.push(id);
  }
  // Each SIMS_PER_SUM SIMs' days summed as soon as read: the process holds a few SIMs' days.
  for (let i = 0; i < whole.length; i += SIMS_PER_SUM)
    for (const [id, { before, messages }] of await chainsOfPeriod(em, whole.slice(i, i + SIMS_PER_SUM), from, to))
      settle(id, { ...found.get(id)!, kept: undefined, before, messages });
  if (keep.length) await deps.hooks?.beforeKeep?.(day);
  await keepRuns(em, day, keep);
  return { balances, summed: whole.length };
}

/** The millisecond of the latest message received (null: none); the driver reads a timestamp to the millisecond, truncated. */
function latestMillisecond(messages: readonly ChainMessage[]): number | null {
  let latest: number | null = null;
  for (const m of messages) latest = Math.max(latest ?? 0, m.received_at.getTime());
  return latest;
}

/** Who may read a day of money, and which day: supervisors and admins, a calendar day (today when empty). */
function dayOfRequest(req: { caller?: Caller; day: string; simId: string }): { day: string; from: Date; to: Date } {
  const caller = requireBoard(req.caller);
  if (needsGrant(caller)) throw refusal("supervisor_required", "Reconciliation is for supervisors and admins");
  const day = req.day === "" ? localDayOf(new Date()) : req.day;
  const from = localMidnight(day);
  if (from === null) throw invalid("day", "must be a calendar day YYYY-MM-DD", req.day);
  // The gateway refuses a malformed id (422, a UUID path parameter); an unknown one is 404.
  if (req.simId.length > 100) throw invalid("sim_id", "at most 100 characters");
  return { day, from, to: new Date(from.getTime() + DAY_MS) };
}

/** The most links one page of a balance chain carries, and a page's size when none is asked. */
export const CHAIN_PAGE_MAX = 500;
export const CHAIN_PAGE_DEFAULT = 200;

export interface BalanceChainPage {
  sim_id: string;
  day: string;
  total: number;
  breaks: number;
  offset: number;
  links: ChainLink[];
}

/**
 * One SIM's balance chain of one local day, link by link, a page at a time: the same
 * messages and the same rule as the day's reconciliation (dayLinks), so the links flagged
 * here are its `breaks`. A link depends only on the chain before it, so the page is placed
 * from the chain's beginning up to the page's end (chainBeginning), or from the whole day when
 * repeated references left that short; the day's count of links and of breaks are its
 * balance account's (balancesOfDay: a closed day's kept sums, today's kept run), unless the
 * beginning read was the whole day. A first page of a busy SIM's day (1,000 messages) reads
 * its 200 links, not the day. Same callers and scope as the reconciliation.
 */
export async function balanceChain(
  deps: FlowDeps,
  req: { caller?: Caller; day: string; simId: string; offset: number; limit: number },
): Promise<BalanceChainPage> {
  const { day, from, to } = dayOfRequest(req);
  if (req.offset < 0) throw invalid("offset", "must be 0 or more", String(req.offset));
  if (req.limit < 0 || req.limit > CHAIN_PAGE_MAX)
    throw invalid("limit", `must be 1 to ${CHAIN_PAGE_MAX}`, String(req.limit));
  const end = req.offset + (req.limit || CHAIN_PAGE_DEFAULT);
  const em = deps.db.em();
  let read = await chainBeginning(em, req.simId, from, to, end);
  let links = dayLinks(read.before ?? null, read.messages);
  if (links.length < end && !read.whole) {
    read = { ...(await chainsOfPeriod(em, [req.simId], from, to)).get(req.simId)!, whole: true };
    links = dayLinks(read.before ?? null, read.messages);
  }
  if (!read.before && read.messages.length === 0 && !(await lookupSim(deps, req.simId)))
    throw refusal("sim_not_found", `SIM ${req.simId} not found`, { sim_id: req.simId });
  const counts = read.whole
    ? { links: links.length, breaks: links.filter((l) => l.break).length }
    : await dayCounts(deps, req.simId, { day, from, to });
  return {
    sim_id: req.simId,
    day,
    total: counts.links,
    breaks: counts.breaks,
    offset: req.offset,
    links: links.slice(req.offset, end),
  };
}

/** A SIM's day's count of links and of breaks, from its balance account. */
async function dayCounts(
  deps: FlowDeps,
  simId: string,
  period: { day: string; from: Date; to: Date },
): Promise<{ links: number; breaks: number }> {
  const balance = (await balancesOfDay(deps, [simId], period)).balances.get(simId)!;
  return { links: balance.links, breaks: balance.breaks.length };
}

function emptyRow(simId: string): DayRow {
  return {
    sim_id: simId,
    messages: 0,
    confirmed: 0,
    unmatched: 0,
    movements: 0,
    divergent: 0,
    proven_xaf: 0,
    fees_xaf: 0,
    unknown_sender: 0,
  };
}

function fleetOf(day: string, sims: readonly SimDay[]): FleetDay {
  const sum = (f: (s: SimDay) => number | null) => sims.reduce((t, s) => t + (f(s) ?? 0), 0);
  return {
    day,
    sims: sims.length,
    opening_balance: sum((s) => s.opening_balance),
    closing_balance: sum((s) => s.closing_balance),
    proven_xaf: sum((s) => s.proven_xaf),
    proven_fees_xaf: sum((s) => s.proven_fees_xaf),
    in_xaf: sum((s) => s.in_xaf),
    out_xaf: sum((s) => s.out_xaf),
    fees_xaf: sum((s) => s.fees_xaf),
    explained_xaf: sum((s) => s.explained_xaf),
    unexplained_xaf: sum((s) => s.unexplained_xaf),
    chain_breaks: sum((s) => s.breaks.length),
    sims_not_reconciled: sims
      .filter((s) => s.messages > 0 && (s.unexplained_xaf !== 0 || s.breaks.length > 0))
      .map((s) => s.sim_id),
  };
}
