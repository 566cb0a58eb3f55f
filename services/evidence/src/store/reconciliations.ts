import { rows, type EntityManager } from "@transferops/kit";
import { localDayOf, localMidnight } from "../domain/window.ts";
import { MOVEMENT_KINDS, UNMATCHED_QUEUE_KINDS } from "../domain/outcomes.ts";

const DAY_MS = 24 * 60 * 60 * 1000;
/** A message from a sender that is not the operator's moved no money we can count. */
const OPERATOR_WORD = `outcome <> 'unknown_sender'`;
const list = (kinds: readonly string[]) => `(${kinds.map((k) => `'${k}'`).join(", ")})`;

/**
 * Daily reconciliation of one SIM's messages for one local day (UTC+1): what arrived, what
 * proved operations, what waits for a person, what moved, the last balance the operator
 * reported. Recomputed from the messages in the same transaction as any change to one of
 * them, so it is never out of step. The row is locked before it is recomputed: a
 * concurrent change waits, then counts what the other committed.
 */
export async function recomputeDay(em: EntityManager, simId: string, receivedAt: Date): Promise<void> {
  const day = localDayOf(receivedAt);
  const from = localMidnight(day)!;
  const to = new Date(from.getTime() + DAY_MS);
  // The day's row exists after its first message: locking it is then one statement.
  const lock = () =>
    rows(em, `select 1 from evidence.daily_reconciliations where sim_id = ? and day = ?::date for update`, [
      simId,
      day,
    ]);
  if ((await lock()).length === 0) {
    await em.execute(
      `insert into evidence.daily_reconciliations (sim_id, day, messages, confirmed, restated, attached, unmatched, ambiguous,
         divergent, dismissed, movements, proven_xaf, fees_xaf, movements_in_xaf, movements_out_xaf)
       values (?, ?::date, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0) on conflict do nothing`,
      [simId, day],
    );
    await lock();
  }
  await em.execute(
    `update evidence.daily_reconciliations r set
       messages = s.messages, confirmed = s.confirmed, restated = s.restated, attached = s.attached,
       unmatched = s.unmatched, ambiguous = s.ambiguous, divergent = s.divergent, dismissed = s.dismissed,
       movements = s.movements, proven_xaf = s.proven_xaf, fees_xaf = s.fees_xaf,
       movements_in_xaf = s.movements_in_xaf, movements_out_xaf = s.movements_out_xaf,
       last_balance = s.last_balance, last_balance_at = s.last_balance_at, updated_at = now()
     from (
       select count(*) as messages,
         count(*) filter (where outcome = 'confirmed') as confirmed,
         count(*) filter (where outcome = 'restated') as restated,
         count(*) filter (where outcome = 'attached') as attached,
         count(*) filter (where state = 'done' and operation_id is null and dismissed_at is null
                            and (kind is null or kind in ${list(UNMATCHED_QUEUE_KINDS)})) as unmatched,
         count(*) filter (where is_ambiguous) as ambiguous,
         count(*) filter (where outcome = 'divergent') as divergent,
         count(*) filter (where dismissed_at is not null) as dismissed,
         count(*) filter (where kind in ${list(MOVEMENT_KINDS)} and ${OPERATOR_WORD}) as movements,
         coalesce(sum(amount) filter (where link = 'proof' and kind is distinct from 'BAL'), 0) as proven_xaf,
         coalesce(sum(fee) filter (where link = 'proof'), 0) as fees_xaf,
         coalesce(sum(amount) filter (where kind in ${list(MOVEMENT_KINDS)} and ${OPERATOR_WORD} and direction = 'in'), 0)
           as movements_in_xaf,
         coalesce(sum(amount) filter (where kind in ${list(MOVEMENT_KINDS)} and ${OPERATOR_WORD} and direction = 'out'), 0)
           as movements_out_xaf,
         (array_agg(balance_after order by received_at desc) filter (where balance_after is not null and ${OPERATOR_WORD}))[1]
           as last_balance,
         max(received_at) filter (where balance_after is not null and ${OPERATOR_WORD}) as last_balance_at
       from evidence.messages where sim_id = ? and received_at >= ? and received_at < ?
     ) s
     where r.sim_id = ? and r.day = ?::date`,
    [simId, from, to, simId, day],
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
