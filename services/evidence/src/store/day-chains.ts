import { rows, type EntityManager } from "@transferops/kit";
import type { ChainMessage, DayBalance, DayRun } from "../domain/balance-chain.ts";
import {
  CHAIN_COLUMNS,
  chainMessage,
  IN_CHAIN,
  inChain,
  LAST_BALANCE_BEFORE,
  lastBalanceBefore,
  type ChainRow,
  type PeriodChain,
} from "./messages.ts";

/**
 * What `evidence.day_chains` holds of a SIM's day (Migration0011DayChains): how many times a
 * chain message of the day changed (`changes`, 0 with no row), the day's sums when they were
 * kept, at which count and from which message before the day, the day before's count now, and,
 * when it is needed to check the kept sums, the message before the day as it is now.
 */
export interface KeptDay {
  /** Whether the day has a row (a message of it changed since the migration, or it was kept). */
  counted: boolean;
  changes: number;
  /** The day before's count now (null: it has no row). */
  previousChanges: number | null;
  kept?: {
    balance: DayBalance;
    changes: number;
    beforeKey: string;
    /** The day before's count when the sums were summed, if they start from a message of it (Migration0014PreviousDayCount). */
    previousChanges: number | null;
  };
  /** Read only for a kept day whose count is unchanged and whose day before's count does not vouch for its start. */
  before?: ChainMessage;
}

/**
 * Whether a kept day still holds: nothing of its own changed, and it starts from the same
 * message. That message is the same when it lay on the day before and the day before's count
 * is unchanged (no chain message of it added, changed, moved or removed since); otherwise it is
 * compared as it is now (`before`).
 */
export function keptStillHolds(k: KeptDay | undefined): k is KeptDay & { kept: NonNullable<KeptDay["kept"]> } {
  if (!k?.kept || k.kept.changes !== k.changes || !countsLinks(k.kept.balance)) return false;
  if (k.kept.previousChanges !== null && k.kept.previousChanges === k.previousChanges) return true;
  return k.kept.beforeKey === beforeKey(k.before);
}

/**
 * Whether kept sums count their day's links (DayBalance.links): sums kept before the count was
 * added lack it, and are summed again at their next read and kept with it.
 */
export function countsLinks(kept: Pick<DayBalance, "links">): boolean {
  return typeof kept.links === "number";
}

/** When `keptStillHolds` needs the message before the day, in SQL over the row `c` and the day before's `p`. */
const NEEDS_BEFORE = `c.balance is not null and c.balance_changes = c.changes
  and (c.previous_changes is null or c.previous_changes is distinct from p.changes)`;

/**
 * What identifies the message a day's chain starts from: everything the chain reads of it.
 * A kept day is valid only while the message before it is the same, read the same way (a
 * late message on an earlier day, or a new reading of that one, changes the opening balance).
 */
export function beforeKey(m: ChainMessage | undefined): string {
  if (!m) return "";
  return JSON.stringify([
    m.id,
    m.received_at.toISOString(),
    m.stored_at?.toISOString() ?? null,
    m.kind,
    m.amount,
    m.fee,
    m.commission ?? null,
    m.balance_after,
    m.direction,
    m.operator_ref,
    m.outcome,
  ]);
}

/** keptDays' statement: the SIMs (a JSON array), the day twice, the day's local midnight. */
export const KEPT_DAYS = `with sims as (select distinct jsonb_array_elements_text(?::jsonb) as sim_id)
     select s.sim_id, c.changes, c.balance, c.balance_changes, c.before_key, c.previous_changes,
            p.changes as previous_now, row_to_json(b) as before
       from sims s
       left join evidence.day_chains c on c.sim_id = s.sim_id and c.day = ?::date
       left join evidence.day_chains p on p.sim_id = s.sim_id and p.day = ?::date - 1
       left join lateral (${lastBalanceBefore(NEEDS_BEFORE)}) b on true`;

/**
 * Each SIM's row of `day`, the day before's count, and where the kept sums need it
 * (NEEDS_BEFORE) its last balance before `from` (the day's local midnight), in one statement:
 * two primary-key lookups a SIM in a table of a row per SIM day, and one descent of
 * `messages_sim_balance` for the SIMs whose kept sums the day before's count does not vouch for.
 */
export async function keptDays(
  em: EntityManager,
  simIds: readonly string[],
  day: string,
  from: Date,
): Promise<Map<string, KeptDay>> {
  const found = await rows<{
    sim_id: string;
    changes: string | number | null;
    balance: DayBalance | null;
    balance_changes: string | number | null;
    before_key: string | null;
    previous_changes: string | number | null;
    previous_now: string | number | null;
    before: ChainRow | null;
  }>(em, KEPT_DAYS, [JSON.stringify(simIds), day, day, from]);
  const count = (n: string | number | null) => (n === null ? null : Number(n));
  return new Map(
    found.map((r) => [
      r.sim_id,
      {
        counted: r.changes !== null,
        changes: Number(r.changes ?? 0),
        previousChanges: count(r.previous_now),
        kept:
          r.balance === null
            ? undefined
            : {
                balance: r.balance,
                changes: Number(r.balance_changes),
                beforeKey: r.before_key ?? "",
                previousChanges: count(r.previous_changes),
              },
        before: r.before ? chainMessage(r.before) : undefined,
      },
    ]),
  );
}

/** Rows to keep, in the SIMs' order: two keepers lock a day's rows in the same order. */
const bySim = <T extends { simId: string }>(of: readonly T[]): T[] =>
  [...of].sort((a, b) => (a.simId < b.simId ? -1 : a.simId > b.simId ? 1 : 0));

/**
 * The rows of `day` (the parameter) for the SIMs of `k` that no one holds: a keeper never waits
 * on a submission nor holds a row one waits on (`skip locked`).
 */
const FREE_ROWS = `free as (select l.sim_id from evidence.day_chains l
                 where l.day = ?::date and l.sim_id in (select sim_id from k)
                 order by l.sim_id for update skip locked)`;

/** A day's sums to keep: computed from the day as it was when its row counted `changes` (no row: not `counted`). */
export interface DayToKeep {
  simId: string;
  counted: boolean;
  changes: number;
  balance: DayBalance;
  beforeKey: string;
  /** The day before's count read before the day was summed, if the sums start from a message of that day; else null. */
  previousChanges: number | null;
}

/**
 * Keeps a closed day's sums, each only if no chain message of that SIM's day changed since
 * they were read: a day with a row only while its count is still `changes` (a change the sums
 * did not see has counted one more, or holds the row and is skipped: `skip locked`, so a reader
 * never waits on a submission nor holds a row one waits on); a day without one (never counted)
 * inserted, unless a message's trigger inserted the row first. Each statement in its own
 * transaction, each given only its days (the sums of a day of many breaks are large).
 */
export async function keepDays(em: EntityManager, day: string, kept: readonly DayToKeep[]): Promise<void> {
  const recordset = (of: readonly DayToKeep[]) =>
    JSON.stringify(
      bySim(of).map((k) => ({
        sim_id: k.simId,
        changes: k.changes,
        balance: k.balance,
        before_key: k.beforeKey,
        previous_changes: k.previousChanges,
      })),
    );
  const columns = `k(sim_id text, changes bigint, balance jsonb, before_key text, previous_changes bigint)`;
  const counted = kept.filter((k) => k.counted);
  if (counted.length)
    await em.execute(
      `with k as (select * from jsonb_to_recordset(?::jsonb) as ${columns}),
       ${FREE_ROWS}
       update evidence.day_chains c set balance = k.balance, balance_changes = k.changes, before_key = k.before_key,
          previous_changes = k.previous_changes, kept_at = now()
         from k
        where c.sim_id in (select sim_id from free) and c.sim_id = k.sim_id and c.day = ?::date
          and c.changes = k.changes`,
      [recordset(counted), day, day],
    );
  const uncounted = kept.filter((k) => !k.counted);
  if (uncounted.length)
    await em.execute(
      `insert into evidence.day_chains (sim_id, day, changes, balance, balance_changes, before_key, previous_changes, kept_at)
       select k.sim_id, ?::date, 0, k.balance, 0, k.before_key, k.previous_changes, now() from jsonb_to_recordset(?::jsonb) as ${columns}
       order by k.sim_id
       on conflict (sim_id, day) do nothing`,
      [day, recordset(uncounted)],
    );
}

/** A closed day and its SIMs whose sums are not kept, or changed since they were kept. */
export interface UnkeptDay {
  day: string;
  simIds: string[];
}

/**
 * The closed days (before `$1`) with SIM days whose sums are not kept or are stale, newest
 * first, at most `$2` days: a backward walk of `day_chains_unkept` (Migration0013UnkeptDays),
 * the rows left to keep, that stops at the limit, whatever the history behind them. The order
 * names the table's `day`: ordered by the output's `day` (its text), the statement sorted, and
 * the planner, who cannot count the rows of `is distinct from`, read the table whole (a row a
 * SIM a day: 36,500 a year at 100 SIMs) to find none.
 */
export const UNKEPT_DAYS = `select to_char(c.day, 'YYYY-MM-DD') as day, array_agg(c.sim_id order by c.sim_id) as sim_ids
    from evidence.day_chains c
   where c.balance_changes is distinct from c.changes and c.day < ?::date
   group by c.day order by c.day desc limit ?`;

/** UNKEPT_DAYS: the closed days before `today` left to keep, newest first, at most `limit`. */
export async function unkeptDays(em: EntityManager, today: string, limit: number): Promise<UnkeptDay[]> {
  const found = await rows<{ day: string; sim_ids: string[] }>(em, UNKEPT_DAYS, [today, limit]);
  return found.map((r) => ({ day: r.day, simIds: r.sim_ids }));
}

/** Today's run as kept (Migration0016TodayRuns): the sums over the chain messages received before `until`, and where they start. */
export interface KeptRun {
  run: DayRun;
  /** beforeKey of the message before the day the run started from. */
  before_key: string;
}

/** A SIM's today as one read finds it: its count, its kept run if it holds one, and the messages to fold. */
export interface TodaysChain extends PeriodChain {
  /** Whether the day has a row (a chain message of it was counted). */
  counted: boolean;
  changes: number;
  /** The kept run and its time; `messages` are those received since, none its run already counted (none without a run). */
  kept?: { running: KeptRun; until: Date };
}

/**
 * Each SIM's today in one statement, one snapshot: its row of `day_chains` (count, kept run),
 * its last balance before the day, and, for a SIM with a kept run, its chain messages of the
 * day received since the run's time (`messages_sim_received`: what arrived since the last read
 * or pass). A message since that repeats an operator reference of a message the run already
 * counted (same kind, received that day before the run's time: `messages_sim_ref`) is left
 * out, as the chain leaves out a repeated reference (domain/balance-chain.ts chainOf). A SIM
 * without a run gets no message here: its day is read whole (`chainsOfPeriod`).
 */
export const TODAYS_CHAINS = `with sims as (select distinct jsonb_array_elements_text(?::jsonb) as sim_id),
     r as materialized (
       select s.sim_id, c.sim_id is not null as counted, coalesce(c.changes, 0) as changes, c.running,
              case when c.running is not null then c.running_until end as until
         from sims s left join evidence.day_chains c on c.sim_id = s.sim_id and c.day = ?::date)
     select 'message' as part, null::boolean as counted, null::bigint as changes, null::jsonb as running,
            null::timestamptz as until, ${CHAIN_COLUMNS.split(",")
              .map((c) => `m.${c.trim()}`)
              .join(", ")}
       from r cross join lateral (
         select ${CHAIN_COLUMNS} from evidence.messages m
          where r.until is not null and m.sim_id = r.sim_id and ${IN_CHAIN} and m.received_at >= r.until and m.received_at < ?
            and not (m.operator_ref is not null and m.kind is distinct from 'BAL'
                     and exists (select 1 from evidence.messages e
                                  where e.sim_id = m.sim_id and e.operator_ref = m.operator_ref
                                    and e.kind is not distinct from m.kind and ${inChain("e")}
                                    and e.received_at >= ? and e.received_at < r.until))) m
     union all
     select 'before', null, null, null, null, b.* from sims s cross join lateral (${LAST_BALANCE_BEFORE}) b
     union all
     select 'run', r.counted, r.changes, r.running, r.until, null, r.sim_id, null, null, null, null, null, null, null, null, null, null
       from r`;

/** TODAYS_CHAINS for `simIds` on `day`, from its local midnight `from` to the next one `to`. */
export async function todaysChains(
  em: EntityManager,
  simIds: readonly string[],
  day: string,
  from: Date,
  to: Date,
): Promise<Map<string, TodaysChain>> {
  const chains = new Map<string, TodaysChain>(simIds.map((id) => [id, { counted: false, changes: 0, messages: [] }]));
  if (simIds.length === 0) return chains;
  const found = await rows<
    ChainRow & {
      part: "message" | "before" | "run";
      counted: boolean | null;
      changes: string | number | null;
      running: KeptRun | null;
      until: Date | string | null;
    }
  >(em, TODAYS_CHAINS, [JSON.stringify(simIds), day, to, from, from]);
  for (const r of found) {
    const chain = chains.get(r.sim_id)!;
    if (r.part === "run") {
      chain.counted = r.counted!;
      chain.changes = Number(r.changes);
      if (r.running && r.until !== null) chain.kept = { running: r.running, until: new Date(r.until) };
    } else if (r.part === "before") chain.before = chainMessage(r);
    else chain.messages.push(chainMessage(r));
  }
  return chains;
}

/** Today's run to keep: summed from the day as it was when its row counted `changes`. */
export interface RunToKeep {
  simId: string;
  changes: number;
  running: KeptRun;
  /** The run's time: it counts the chain messages received before it, a whole millisecond. */
  until: Date;
}

/**
 * Keeps today's runs, each only if no chain message of that SIM's day changed since its read
 * (the count read with it is still the row's; a change not committed yet holds the row and it
 * is skipped, as keepDays does). A run older than the one kept is not written over it.
 */
export async function keepRuns(em: EntityManager, day: string, kept: readonly RunToKeep[]): Promise<void> {
  if (kept.length === 0) return;
  const recordset = JSON.stringify(
    bySim(kept).map((k) => ({ sim_id: k.simId, changes: k.changes, running: k.running, until: k.until.toISOString() })),
  );
  await em.execute(
    `with k as (select * from jsonb_to_recordset(?::jsonb) as k(sim_id text, changes bigint, running jsonb, until timestamptz)),
     ${FREE_ROWS}
     update evidence.day_chains c set running = k.running, running_until = k.until
       from k
      where c.sim_id in (select sim_id from free) and c.sim_id = k.sim_id and c.day = ?::date
        and c.changes = k.changes and (c.running_until is null or c.running_until < k.until)`,
    [recordset, day, day],
  );
}
