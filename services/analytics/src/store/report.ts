import { one, rows, type EntityManager } from "@transferops/kit";
import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";

/** SQL text and parameters of a filter, built only from fixed fragments. */
interface Filter {
  sql: string;
  params: unknown[];
}

const and = (...fs: Filter[]): Filter => ({
  sql:
    fs
      .map((f) => f.sql)
      .filter(Boolean)
      .join(" and ") || "true",
  params: fs.flatMap((f) => f.params),
});

function dayFilter(w: Window, column = "local_day"): Filter {
  return w.all
    ? { sql: "", params: [] }
    : { sql: `${column} between ?::date and ?::date`, params: [w.firstDay, w.lastDay] };
}

const opScope = (s: Scope): Filter =>
  s.fleet ? { sql: "", params: [] } : { sql: "agent_id = ?", params: [s.agentId] };
/** An agent's SIMs are those its operations ran on (their state, not other agents' work on them). */
const simScope = (s: Scope): Filter =>
  s.fleet
    ? { sql: "", params: [] }
    : { sql: "sim_id in (select distinct sim_id from analytics.operations where agent_id = ?)", params: [s.agentId] };
/**
 * An agent's messages are those tied to its own operations: a message of a SIM it
 * used may be another agent's work, and an orphan is nobody's until a person attaches it.
 */
const messageScope = (s: Scope): Filter =>
  s.fleet
    ? { sql: "", params: [] }
    : {
        sql: "operation_id in (select operation_id from analytics.operations where agent_id = ?)",
        params: [s.agentId],
      };
const txScope = (s: Scope): Filter =>
  s.fleet ? { sql: "", params: [] } : { sql: "launched_by = ?", params: [s.agentId] };

const n = (v: unknown): bigint => BigInt((v as string | number | null) ?? 0);
const num = (v: unknown): number | undefined => (v === null || v === undefined ? undefined : Number(v));

export interface Totals {
  operations: bigint;
  transfers: bigint;
  balance_checks: bigint;
  active_sims: bigint;
  active_agents: bigint;
  sent_xaf: bigint;
  confirmed_transfers: bigint;
  median_transfer: bigint;
  largest_transfer: bigint;
  fees_xaf: bigint;
  fees_known_for: bigint;
  at_risk_xaf: bigint;
  at_risk_count: bigint;
  lost_xaf: bigint;
  lost_count: bigint;
  confirmed: bigint;
  auto_confirmed: bigint;
  settled_by_hand: bigint;
  failed: bigint;
  unproven: bigint;
  proof_delay_median_s?: number;
  proof_delay_p90_s?: number;
}

const CONFIRMED_TRANSFER = `is_transfer and status = 'confirmed'`;
export const AUTO_CONFIRMED = `status = 'confirmed' and confirmed_by = 'proof' and not touched_by_hand`;

/** Every windowed figure of the operations projection in one pass. */
export async function operationTotals(em: EntityManager, scope: Scope, w: Window): Promise<Totals> {
  const f = and(opScope(scope), dayFilter(w));
  const r = (await one<Record<string, unknown>>(
    em,
    `select count(*) as operations,
       count(*) filter (where is_transfer) as transfers,
       count(*) filter (where not is_transfer) as balance_checks,
       count(distinct sim_id) as active_sims,
       count(distinct agent_id) as active_agents,
       coalesce(sum(montant) filter (where ${CONFIRMED_TRANSFER}), 0) as sent_xaf,
       count(*) filter (where ${CONFIRMED_TRANSFER}) as confirmed_transfers,
       round(percentile_cont(0.5) within group (order by montant) filter (where ${CONFIRMED_TRANSFER})) as median_transfer,
       max(montant) filter (where ${CONFIRMED_TRANSFER}) as largest_transfer,
       coalesce(sum(fee) filter (where ${CONFIRMED_TRANSFER}), 0) as fees_xaf,
       count(fee) filter (where ${CONFIRMED_TRANSFER}) as fees_known_for,
       coalesce(sum(montant) filter (where is_transfer and status = 'no_evidence'), 0) as at_risk_xaf,
       count(*) filter (where is_transfer and status = 'no_evidence') as at_risk_count,
       coalesce(sum(montant) filter (where is_transfer and lost), 0) as lost_xaf,
       count(*) filter (where is_transfer and lost) as lost_count,
       count(*) filter (where status = 'confirmed') as confirmed,
       count(*) filter (where ${AUTO_CONFIRMED}) as auto_confirmed,
       count(*) filter (where settled_by_hand is not null) as settled_by_hand,
       count(*) filter (where status = 'failed') as failed,
       count(*) filter (where status = 'no_evidence') as unproven,
       percentile_cont(0.5) within group (order by proof_delay_s) as proof_delay_median_s,
       percentile_cont(0.9) within group (order by proof_delay_s) as proof_delay_p90_s
     from analytics.operations where ${f.sql}`,
    f.params,
  ))!;
  const { proof_delay_median_s, proof_delay_p90_s, ...counts } = r;
  return {
    ...(Object.fromEntries(Object.entries(counts).map(([k, v]) => [k, n(v)])) as unknown as Totals),
    proof_delay_median_s: num(proof_delay_median_s),
    proof_delay_p90_s: num(proof_delay_p90_s),
  };
}

export interface DayRow {
  day: string;
  operations: bigint;
  transfers: bigint;
  balance_checks: bigint;
  value_xaf: bigint;
  confirmed: bigint;
  auto_confirmed: bigint;
  failed: bigint;
  unproven: bigint;
}

/** The series, per local day or per week (dated by its Monday). Empty days are absent here. */
export async function dailyRows(em: EntityManager, scope: Scope, w: Window, weekly: boolean): Promise<DayRow[]> {
  const f = and(opScope(scope), dayFilter(w));
  const bucket = weekly ? `date_trunc('week', local_day)::date` : "local_day";
  const r = await rows<Record<string, unknown>>(
    em,
    `select to_char(${bucket}, 'YYYY-MM-DD') as day, count(*) as operations,
       count(*) filter (where is_transfer) as transfers,
       count(*) filter (where not is_transfer) as balance_checks,
       coalesce(sum(montant) filter (where ${CONFIRMED_TRANSFER}), 0) as value_xaf,
       count(*) filter (where status = 'confirmed') as confirmed,
       count(*) filter (where ${AUTO_CONFIRMED}) as auto_confirmed,
       count(*) filter (where status = 'failed') as failed,
       count(*) filter (where status = 'no_evidence') as unproven
     from analytics.operations where ${f.sql} group by 1 order by 1`,
    f.params,
  );
  return r.map((x) => ({
    day: x.day as string,
    operations: n(x.operations),
    transfers: n(x.transfers),
    balance_checks: n(x.balance_checks),
    value_xaf: n(x.value_xaf),
    confirmed: n(x.confirmed),
    auto_confirmed: n(x.auto_confirmed),
    failed: n(x.failed),
    unproven: n(x.unproven),
  }));
}

/** Operations per local weekday and hour (non-empty cells only). */
export async function hourRows(em: EntityManager, scope: Scope, w: Window) {
  const f = and(opScope(scope), dayFilter(w));
  const r = await rows<{ weekday: number; hour: number; operations: string }>(
    em,
    `select local_dow as weekday, local_hour as hour, count(*) as operations
     from analytics.operations where ${f.sql} group by 1, 2 order by 1, 2`,
    f.params,
  );
  return r.map((x) => ({ weekday: Number(x.weekday), hour: Number(x.hour), operations: n(x.operations) }));
}

export interface TxTotals {
  eur: number;
  xaf: bigint;
  /** Over the transactions with a EUR amount: their XAF received and EUR sent (the realised rate's terms). */
  rate_xaf: number;
  rate_eur: number;
}

/**
 * Intake money of the window (by transaction date, cancelled transactions excluded), from
 * the per-day rollup; an agent's are the ones it launched.
 */
export async function transactionTotals(em: EntityManager, scope: Scope, w: Window): Promise<TxTotals> {
  const f = and(txScope(scope), dayFilter(w), { sql: "not cancelled", params: [] });
  const r = (await one<{ eur: number | null; xaf: string; rate_xaf: string; rate_eur: number | null }>(
    em,
    `select coalesce(sum(eur), 0) as eur, coalesce(sum(xaf), 0) as xaf,
       coalesce(sum(rate_xaf), 0) as rate_xaf, coalesce(sum(rate_eur), 0) as rate_eur
     from analytics.tx_daily where ${f.sql}`,
    f.params,
  ))!;
  return { eur: Number(r.eur ?? 0), xaf: n(r.xaf), rate_xaf: Number(r.rate_xaf), rate_eur: Number(r.rate_eur ?? 0) };
}

export async function statusCounts(em: EntityManager, scope: Scope, w: Window): Promise<Record<string, bigint>> {
  const f = and(opScope(scope), dayFilter(w));
  const r = await rows<{ status: string; count: string }>(
    em,
    `select status, count(*) as count from analytics.operations where ${f.sql} group by status order by status`,
    f.params,
  );
  return Object.fromEntries(r.map((x) => [x.status, n(x.count)]));
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

export async function loadFigures(em: EntityManager, scope: Scope, staleBefore: Date): Promise<LoadRow> {
  // Each count walks its own partial index (never the whole projection).
  const o = and(opScope(scope));
  const s = and(simScope(scope));
  const m = and(messageScope(scope));
  const [ops, settled, msgs, dismissed, sims] = await Promise.all([
    one<Record<string, unknown>>(
      em,
      `select count(*) as unproven_waiting, min(coalesce(finished_at, created_at)) as oldest_unproven
       from analytics.operations where status = 'no_evidence' and is_transfer and ${o.sql}`,
      o.params,
    ),
    one<{ c: string }>(
      em,
      `select count(*) as c from analytics.operations where settled_by_hand is not null and ${o.sql}`,
      o.params,
    ),
    one<Record<string, unknown>>(
      em,
      `select count(*) as messages_waiting, min(received_at) as oldest_message
       from analytics.messages where ${WAITING_MESSAGE} and ${m.sql}`,
      m.params,
    ),
    one<{ c: string }>(
      em,
      `select count(*) as c from analytics.messages where dismissed_at is not null and ${m.sql}`,
      m.params,
    ),
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
    unproven_waiting: n(ops!.unproven_waiting),
    messages_waiting: n(msgs!.messages_waiting),
    oldest_unproven: dateOf(ops!.oldest_unproven),
    oldest_message: dateOf(msgs!.oldest_message),
    dismissed: n(dismissed!.c),
    settled: n(settled!.c),
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

/** Transfers that dialled, per handset, and those no operator message confirmed. */
export async function unprovenByHandset(em: EntityManager, scope: Scope, w: Window): Promise<HandsetUnprovenRow[]> {
  const f = and(opScope(scope), dayFilter(w), { sql: "is_transfer and dialled", params: [] });
  const unproven = `status = 'no_evidence' or (settled_by_hand is not null and not has_message)`;
  const r = await rows<Record<string, unknown>>(
    em,
    `select coalesce(o.device_id, '') as device_id, coalesce(d.label, o.label, '') as label, o.dialled, o.unproven,
       o.unproven_xaf, o.waiting, o.waiting_xaf, o.settled_arrived, o.settled_not_arrived, o.oldest_waiting
     from (select device_id, max(device_label) as label, count(*) as dialled,
             count(*) filter (where ${unproven}) as unproven,
             coalesce(sum(montant) filter (where ${unproven}), 0) as unproven_xaf,
             count(*) filter (where status = 'no_evidence') as waiting,
             coalesce(sum(montant) filter (where status = 'no_evidence'), 0) as waiting_xaf,
             count(*) filter (where status = 'confirmed' and settled_by_hand in ('arrived', 'confirmed') and not has_message)
               as settled_arrived,
             count(*) filter (where status = 'failed' and settled_by_hand in ('did_not_arrive', 'failed')) as settled_not_arrived,
             min(coalesce(finished_at, created_at)) filter (where status = 'no_evidence') as oldest_waiting
           from analytics.operations where ${f.sql} group by device_id) o
     left join analytics.devices d on d.device_id = o.device_id
     where o.unproven > 0
     order by o.unproven desc, o.unproven_xaf desc, device_id`,
    f.params,
  );
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
