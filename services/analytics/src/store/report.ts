import { one, rows, type EntityManager } from "@transferops/kit";
import type { Scope } from "../domain/scope.ts";
import { windowSince, type Window } from "../domain/window.ts";
import { agentFilter, and, dayFilter, type Filter } from "./filters.ts";
import { windowRows } from "./window-rows.ts";

const opScope = (s: Scope): Filter => agentFilter(s);
/**
 * An agent's SIMs are those its operations ran on (their state, not other agents' work on them),
 * found by one descent of `operations_agent_sim` per SIM (a skip scan), not by reading the
 * agent's every operation.
 */
const simScope = (s: Scope): Filter =>
  s.fleet
    ? { sql: "", params: [] }
    : {
        sql: `sim_id in (with recursive s(sim_id) as (
                (select sim_id from analytics.operations where agent_id = ? and sim_id is not null order by sim_id limit 1)
                union all
                select (select o.sim_id from analytics.operations o where o.agent_id = ? and o.sim_id > s.sim_id
                        order by o.sim_id limit 1)
                from s where s.sim_id is not null)
              select sim_id from s where sim_id is not null)`,
        params: [s.agentId, s.agentId],
      };

const n = (v: unknown): bigint => BigInt((v as string | number | null) ?? 0);

export interface TxTotals {
  eur: number;
  xaf: bigint;
  /** Over the transactions with a EUR amount: their XAF received and EUR sent (the realised rate's terms). */
  rate_xaf: number;
  rate_eur: number;
}

/**
 * Intake money of the window (by transaction date, cancelled transactions excluded), from
 * the per-day rollup and its monthly copy (store/window-rows.ts); an agent's are the ones it
 * launched.
 */
export async function transactionTotals(em: EntityManager, scope: Scope, w: Window): Promise<TxTotals> {
  const f = windowRows("tx_daily", scope, w);
  const r = (await one<{ eur: number | null; xaf: string; rate_xaf: string; rate_eur: number | null }>(
    em,
    `select coalesce(sum(eur), 0) as eur, coalesce(sum(xaf), 0) as xaf,
       coalesce(sum(rate_xaf), 0) as rate_xaf, coalesce(sum(rate_eur), 0) as rate_eur
     from ${f.sql} where not cancelled`,
    f.params,
  ))!;
  return { eur: Number(r.eur ?? 0), xaf: n(r.xaf), rate_xaf: Number(r.rate_xaf), rate_eur: Number(r.rate_eur ?? 0) };
}

/** First local day with an operation in scope (for `all`), if any. */
export async function firstDay(em: EntityManager, scope: Scope): Promise<string | undefined> {
  const f = opScope(scope);
  const r = await one<{ day: string | null }>(
    em,
    `select to_char(min(local_day), 'YYYY-MM-DD') as day from analytics.operations where ${f.sql || "true"}`,
    f.params,
  );
  return r?.day ?? undefined;
}

/** Messages in the unmatched queue: finished, naming no operation, not dismissed, of a kind a person must see. */
const WAITING_MESSAGE = `operation_id is null and dismissed_at is null
  and outcome in ('ambiguous', 'divergent', 'orphan', 'not_correlated')
  and (kind is null or kind in ('DEP', 'BAL', 'FAIL'))`;

export interface LoadRow {
  unproven_waiting: bigint;
  messages_waiting: bigint;
  oldest_unproven: Date | null;
  oldest_message: Date | null;
  dismissed: bigint;
  settled: bigint;
  sims_unmeasured: bigint;
  sims_stale: bigint;
  sims_frozen: bigint;
  sims_unassigned: bigint;
}

const dateOf = (v: unknown): Date | null => (v ? new Date(v as string) : null);

/**
 * The load's messages: the fleet's unmatched queue and dismissed messages. An agent's messages
 * are those tied to its own operations: none of the queue (a waiting message names no
 * operation), and its dismissed ones kept in a row per agent (`agent_dismissed_counts`,
 * Migration0016AgentDismissed; before it a sum over its months, and before those its days,
 * and before Migration0007AgentRollups a join of every dismissed message with the agent's
 * operations). The fleet's counts are kept at each change in one row (`message_load_counts`,
 * Migration0009LoadCounts and Migration0011WaitingMessages); both whatever the history. The
 * oldest waiting message is the first entry of `messages_waiting`.
 */
async function messageLoad(em: EntityManager, scope: Scope) {
  if (!scope.fleet) {
    const r = await one<{ c: string }>(
      em,
      `select coalesce(sum(dismissed), 0) as c from analytics.agent_dismissed_counts where agent_id = ?`,
      [scope.agentId],
    );
    return { messages_waiting: 0n, oldest_message: null, dismissed: n(r!.c) };
  }
  const r = (await one<Record<string, unknown>>(
    em,
    `select coalesce(sum(waiting), 0) as messages_waiting, coalesce(sum(dismissed), 0) as dismissed,
       (select min(received_at) from analytics.messages where ${WAITING_MESSAGE}) as oldest_message
     from analytics.message_load_counts`,
  ))!;
  return {
    messages_waiting: n(r.messages_waiting),
    oldest_message: dateOf(r.oldest_message),
    dismissed: n(r.dismissed),
  };
}

/**
 * The load block. The unproven backlog's and the settled operations' counts are kept per agent
 * at each change (`agent_load_counts`, Migration0009LoadCounts): an agent's row, or a row per
 * agent for the fleet, whatever the history. The oldest unproven is the first entry of
 * `operations_waiting` (the fleet) or `operations_agent_waiting` (an agent).
 */
export async function loadFigures(em: EntityManager, scope: Scope, staleBefore: Date): Promise<LoadRow> {
  const o = and(opScope(scope));
  const s = and(simScope(scope));
  const [ops, oldest, messages, sims] = await Promise.all([
    one<{ unproven: string; settled: string }>(
      em,
      `select coalesce(sum(unproven), 0) as unproven, coalesce(sum(settled), 0) as settled
       from analytics.agent_load_counts where ${o.sql}`,
      o.params,
    ),
    one<{ oldest: unknown }>(
      em,
      `select min(coalesce(finished_at, created_at)) as oldest
       from analytics.operations where status = 'no_evidence' and is_transfer and ${o.sql}`,
      o.params,
    ),
    messageLoad(em, scope),
    one<Record<string, unknown>>(
      em,
      `select count(*) filter (where balance_mirror is null and status <> 'retired') as sims_unmeasured,
         count(*) filter (where balance_updated_at < ? and status <> 'retired') as sims_stale,
         count(*) filter (where status = 'frozen') as sims_frozen,
         count(*) filter (where device_id is null and status <> 'retired') as sims_unassigned
       from analytics.sims where ${s.sql}`,
      [staleBefore, ...s.params],
    ),
  ]);
  return {
    unproven_waiting: n(ops!.unproven),
    oldest_unproven: dateOf(oldest!.oldest),
    ...messages,
    settled: n(ops!.settled),
    sims_unmeasured: n(sims!.sims_unmeasured),
    sims_stale: n(sims!.sims_stale),
    sims_frozen: n(sims!.sims_frozen),
    sims_unassigned: n(sims!.sims_unassigned),
  };
}

export interface HandsetUnprovenRow {
  device_id: string;
  label: string;
  dialled: bigint;
  unproven: bigint;
  unproven_xaf: bigint;
  waiting: bigint;
  waiting_xaf: bigint;
  settled_arrived: bigint;
  settled_not_arrived: bigint;
  oldest_waiting: Date | null;
}

/** A waiting dialled transfer of the outer row's handset, and the time the report shows for it. */
const WAITING_ON_HANDSET = `coalesce(o.device_id, '') = h.device_id and o.status = 'no_evidence' and o.is_transfer and o.dialled`;
const WAITING_AT = "coalesce(o.finished_at, o.created_at)";
/** Finished before it was created: two clocks (`finished_at` and `created_at` come from different writes). */
const FINISHED_FIRST = "coalesce(o.finished_at < o.created_at, false)";

/**
 * The oldest waiting transfer of a handset in the scope's window, as the min() over its waiting
 * entries of the window, in two descents of `operations_device_oldest` (the fleet) or
 * `operations_agent_device_oldest` (an agent), Migration0012HandsetOldest, whatever the history:
 *
 * - among the transfers not finished before they were created, the first entry from the
 *   window's start in the handset's order by that time;
 * - the min over those finished before they were created (none, unless two clocks disagreed),
 *   without that bound.
 *
 * The bound skips no transfer of the window: `local_day` is the local day of `created_at`
 * (events/operations.ts, the fixed UTC+1 of domain/local-time.ts; both written by the insert
 * only, store/projections.ts `applyOperation`), so a transfer of the window
 * has `created_at >= windowSince(w)` (the window's first local midnight), and one not finished
 * before it was created has `coalesce(finished_at, created_at) >= created_at`. The walk from the
 * bound reads, before its first entry of the window, those created before the window and
 * finished in it (and, were every transfer of the window finished after it, those created
 * after it and finished before that): not the handset's history.
 */
function oldestWaiting(scope: Scope, w: Window): Filter {
  const mine = and(agentFilter(scope, "o.agent_id"), dayFilter(w, "o.local_day"));
  const since = windowSince(w);
  const ordered = and(
    { sql: `${WAITING_ON_HANDSET} and not ${FINISHED_FIRST}`, params: [] },
    since ? { sql: `${WAITING_AT} >= ?`, params: [since] } : { sql: "", params: [] },
    mine,
  );
  const early = and({ sql: `${WAITING_ON_HANDSET} and ${FINISHED_FIRST}`, params: [] }, mine);
  return {
    sql: `least(
      (select ${WAITING_AT} from analytics.operations o where ${ordered.sql} order by ${WAITING_AT} limit 1),
      (select min(${WAITING_AT}) from analytics.operations o where ${early.sql}))`,
    params: [...ordered.params, ...early.params],
  };
}

/** `unprovenByHandset`'s statement (its store test reads its plan). */
export function unprovenByHandsetQuery(scope: Scope, w: Window): Filter {
  const f = windowRows(scope.fleet ? "handset_daily" : "agent_handset_daily", scope, w, "d");
  const oldest = oldestWaiting(scope, w);
  return {
    sql: `select h.device_id, coalesce(d.label, h.label, '') as label, h.dialled, h.unproven, h.unproven_xaf, h.waiting,
       h.waiting_xaf, h.settled_arrived, h.settled_not_arrived,
       case when h.waiting > 0 then ${oldest.sql} end as oldest_waiting
     from (select device_id, max(nullif(label, '')) filter (where dialled > 0) as label, sum(dialled) as dialled,
             sum(unproven) as unproven, sum(unproven_xaf) as unproven_xaf, sum(waiting) as waiting,
             sum(waiting_xaf) as waiting_xaf, sum(settled_arrived) as settled_arrived,
             sum(settled_not_arrived) as settled_not_arrived
           from ${f.sql} group by device_id) h
     left join analytics.devices d on d.device_id = h.device_id
     where h.unproven > 0
     order by h.unproven desc, h.unproven_xaf desc, h.device_id`,
    params: [...oldest.params, ...f.params],
  };
}

/**
 * Transfers that dialled, per handset, and those no operator message confirmed. The sums come
 * from `handset_daily` (the fleet) or `agent_handset_daily` (an agent), Migration0010HandsetDaily:
 * the scope's rows of the window's whole months from their monthly copies and of its edge days
 * (store/window-rows.ts, Migration0014MonthlyRollups), per month or day and handset, never per
 * operation. The label is
 * the devices table's, else the largest of the operations' (`''` kept for none). The oldest
 * waiting transfer, a min no count can keep, is read for the answer's handsets only, in two
 * descents each (`oldestWaiting`).
 */
export async function unprovenByHandset(em: EntityManager, scope: Scope, w: Window): Promise<HandsetUnprovenRow[]> {
  const q = unprovenByHandsetQuery(scope, w);
  const r = await rows<Record<string, unknown>>(em, q.sql, q.params);
  return r.map((x) => ({
    device_id: x.device_id as string,
    label: x.label as string,
    dialled: n(x.dialled),
    unproven: n(x.unproven),
    unproven_xaf: n(x.unproven_xaf),
    waiting: n(x.waiting),
    waiting_xaf: n(x.waiting_xaf),
    settled_arrived: n(x.settled_arrived),
    settled_not_arrived: n(x.settled_not_arrived),
    oldest_waiting: dateOf(x.oldest_waiting),
  }));
}
