import { rows, type EntityManager } from "@transferops/kit";
import { localDayOf, localMidnight } from "../domain/window.ts";
import {
  balanceWithdrawn,
  DAY_COUNT_COLUMNS,
  dayChange,
  reportedBalanceOf,
  type DayFacts,
} from "../domain/day-counts.ts";
import type { MessageRecord } from "../domain/message.ts";

const DAY_MS = 24 * 60 * 60 * 1000;

/**
 * Daily reconciliation of one SIM's messages for one local day (UTC+1): what arrived, what
 * proved operations, what waits for a person, what moved, the last balance the operator
 * reported. Kept in step with the messages in the same transaction as any change to one of
 * them, by adding that change (`dayChange`: the message's counts after less before) to the
 * day's row, created by its first message: one statement, whatever the day's size. The
 * changes commute, so concurrent ones need no order; the last balance is the reported one
 * of the latest message, counted when the message is new or a wording rule's reading changes it
 * (`reportedBalanceOf`; a reading that takes one back finds the day's last balance again).
 */
export async function addToDay(
  em: EntityManager,
  before: MessageRecord | undefined,
  after: MessageRecord,
): Promise<void> {
  const { sql, params } = dayUpsert(before, after);
  await em.execute(sql, params);
  if (balanceWithdrawn(before, after)) await findLastBalance(em, after.sim_id, localDayOf(after.received_at));
}

/**
 * The upsert that adds a change of one message to its day's row (see addToDay), as SQL text
 * and its parameters, for a statement of its own or for a data-modifying CTE of the
 * statement that writes the message (`onlyIf`: the name of a CTE of that statement that must
 * return a row for the day to change, the message's insert, whose duplicate changes nothing).
 * Not for a change that takes a reported balance back (`balanceWithdrawn`): that one finds
 * the day's last balance again after the upsert (addToDay).
 */
export function dayUpsert(
  before: DayFacts | undefined,
  after: DayFacts,
  onlyIf?: string,
): { sql: string; params: unknown[] } {
  const change = dayChange(before, after);
  const reported = reportedBalanceOf(before, after);
  const columns = DAY_COUNT_COLUMNS.join(", ");
  // Typed casts: a select list's parameters take no type from the columns they go to.
  return {
    sql: `insert into evidence.daily_reconciliations as r (sim_id, day, ${columns}, last_balance, last_balance_at)
     select ?::text, ?::date, ${DAY_COUNT_COLUMNS.map(() => "?::bigint").join(", ")}, ?::bigint, ?::timestamptz
     ${onlyIf ? `where exists (select from ${onlyIf})` : ""}
     on conflict (sim_id, day) do update set
       ${DAY_COUNT_COLUMNS.map((c) => `${c} = r.${c} + excluded.${c}`).join(", ")},
       last_balance = case when excluded.last_balance_at >= r.last_balance_at or r.last_balance_at is null
                           then coalesce(excluded.last_balance, r.last_balance) else r.last_balance end,
       last_balance_at = greatest(r.last_balance_at, excluded.last_balance_at),
       updated_at = now()`,
    params: [
      after.sim_id,
      localDayOf(after.received_at),
      ...DAY_COUNT_COLUMNS.map((c) => change[c]),
      reported?.balance ?? null,
      reported?.at ?? null,
    ],
  };
}

/** The day's last balance found again from its messages (after a reading took one back). */
async function findLastBalance(em: EntityManager, simId: string, day: string): Promise<void> {
  const from = localMidnight(day)!;
  await em.execute(
    `update evidence.daily_reconciliations r set (last_balance, last_balance_at) = (
       select m.balance_after, m.received_at from evidence.messages m
        where m.sim_id = r.sim_id and m.received_at >= ? and m.received_at < ? and m.balance_after is not null
          and m.outcome <> 'unknown_sender'
        order by m.received_at desc, m.stored_at desc limit 1)
     where r.sim_id = ? and r.day = ?::date`,
    [from, new Date(from.getTime() + DAY_MS), simId, day],
  );
}

/** The stored counts of one local day, per SIM (all SIMs with messages that day, or one). */
export interface DayRow {
  sim_id: string;
  messages: number;
  confirmed: number;
  unmatched: number;
  movements: number;
  divergent: number;
  proven_xaf: number;
  fees_xaf: number;
  unknown_sender: number;
}

export async function dayRows(em: EntityManager, day: string, simId: string | null): Promise<DayRow[]> {
  const from = localMidnight(day)!;
  const to = new Date(from.getTime() + DAY_MS);
  const found = await rows<Record<keyof DayRow, string | number>>(
    em,
    `select r.sim_id, r.messages, r.confirmed, r.unmatched, r.movements, r.divergent, r.proven_xaf, r.fees_xaf,
       (select count(*) from evidence.messages m where m.sim_id = r.sim_id and m.received_at >= ? and m.received_at < ?
          and m.outcome = 'unknown_sender') as unknown_sender
     from evidence.daily_reconciliations r
     where r.day = ?::date and (?::text is null or r.sim_id = ?)
     order by r.sim_id`,
    [from, to, day, simId, simId],
  );
  return found.map((r) => ({
    sim_id: String(r.sim_id),
    messages: Number(r.messages),
    confirmed: Number(r.confirmed),
    unmatched: Number(r.unmatched),
    movements: Number(r.movements),
    divergent: Number(r.divergent),
    proven_xaf: Number(r.proven_xaf),
    fees_xaf: Number(r.fees_xaf),
    unknown_sender: Number(r.unknown_sender),
  }));
}
