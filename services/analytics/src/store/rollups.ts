import { one, rows, type EntityManager } from "@transferops/kit";
import { amountFigures, type AmountCount } from "../domain/amount-counts.ts";
import { delayPercentile, type DelayBucket } from "../domain/delay-histogram.ts";
import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";
import { agentFilter, and, dayFilter } from "./filters.ts";
import { NO_SIM } from "./migrations/Migration0003Rollups.ts";
import { windowRows } from "./window-rows.ts";

/**
 * The operations' and messages' figures of a report, read from per-day rollups: the fleet's
 * (Migration0003Rollups, Migration0005DelaySeconds, Migration0006AmountCounts) or one agent's
 * rows of the per-agent ones (Migration0007AgentRollups), never the operations. A window's
 * figures read its whole months from the rollups' monthly copies and its edge days from the
 * daily tables (store/window-rows.ts, Migration0014MonthlyRollups): at most 12 months and 61
 * days of rows (and per status, hour, SIM or bucket), whatever the history; the daily series
 * alone reads a row per day, its answer's. Every figure equals what SQL over the rows gives
 * (the tests compare both), the proof-delay percentiles within their bucket's width
 * (domain/delay-histogram.ts).
 */

/** A scope's rollup tables: the fleet's, or the per-agent ones (read with the agent's id). */
interface Rollups {
  op: string;
  hourly: string;
  sims: string;
  delays: string;
  amountHist: string;
  amounts: string;
  messages: string;
}
const FLEET: Rollups = {
  op: "op_daily",
  hourly: "op_hourly",
  sims: "op_sim_daily",
  delays: "delay_seconds",
  amountHist: "amount_hist",
  amounts: "amount_daily",
  messages: "msg_daily",
};
const AGENT: Rollups = {
  op: "agent_op_daily",
  hourly: "agent_hourly",
  sims: "agent_sim_daily",
  delays: "agent_delay_seconds",
  amountHist: "agent_amount_hist",
  amounts: "agent_amount_daily",
  messages: "agent_msg_daily",
};
const tablesOf = (s: Scope): Rollups => (s.fleet ? FLEET : AGENT);
/** The scope's rows of the window in a daily rollup, a row a day (the daily series). */
const rowsOf = (s: Scope, w: Window) => and(agentFilter(s), dayFilter(w));

const n = (v: unknown): bigint => BigInt((v as string | number | null) ?? 0);

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

const CONFIRMED_TRANSFER = `is_transfer and status = 'confirmed'`;

/**
 * The window's confirmed transfers' amounts counted per amount (domain/amount-counts.ts), in one
 * statement so that the histogram and the counts are of one snapshot: the window's histogram
 * says which buckets hold the two middle ranks and which is the highest, and only those buckets'
 * amounts are read, a range of the counts' primary key per bucket.
 */
export async function amountCounts(em: EntityManager, scope: Scope, w: Window, p: number): Promise<AmountCount[]> {
  const t = tablesOf(scope);
  const h = windowRows(t.amountHist, scope, w);
  const a = windowRows(t.amounts, scope, w, "a");
  const r = await rows<Record<string, string | number>>(
    em,
    `with h as (
       select bucket, sum(n)::bigint as n from ${h.sql} group by bucket having sum(n) > 0
     ), c as (
       select bucket, n, (sum(n) over (order by bucket) - n)::bigint as below, (sum(n) over ())::bigint as total,
              max(bucket) over () as top from h
     )
     select c.bucket, c.below, c.total, x.montant, x.n from c
     cross join lateral (
       select a.montant, sum(a.n)::bigint as n from ${a.sql} where a.bucket = c.bucket
       group by a.montant having sum(a.n) > 0
     ) x
     where c.bucket = c.top
        or floor(?::float8 * (c.total - 1)) between c.below and c.below + c.n - 1
        or ceil(?::float8 * (c.total - 1)) between c.below and c.below + c.n - 1
     order by x.montant`,
    [...h.params, ...a.params, p, p],
  );
  return r.map((x) => ({
    bucket: Number(x.bucket),
    below: Number(x.below),
    total: Number(x.total),
    montant: Number(x.montant),
    n: Number(x.n),
  }));
}

/** The window's proof delays summed per bucket, in the buckets' order (Migration0005DelaySeconds). */
export async function delayBuckets(
  em: EntityManager,
  w: Window,
  scope: Scope = { fleet: true },
): Promise<DelayBucket[]> {
  const f = windowRows(tablesOf(scope).delays, scope, w);
  const r = await rows<{ bucket: number; n: string; sum_s: number }>(
    em,
    `select bucket, sum(n) as n, sum(sum_s) as sum_s from ${f.sql}
     group by bucket having sum(n) > 0 order by bucket`,
    f.params,
  );
  return r.map((b) => ({ bucket: Number(b.bucket), n: Number(b.n), sum_s: Number(b.sum_s) }));
}

/** The agents with an operation in the window: the fleet's from `agent_daily`; an agent is one or none. */
function activeAgents(scope: Scope, w: Window) {
  const d = windowRows("agent_daily", scope, w, "d");
  return scope.fleet
    ? {
        sql: `(select count(*) from (select agent_id from ${d.sql} where n > 0 group by agent_id) a)`,
        params: d.params,
      }
    : { sql: `least(coalesce(sum(n), 0), 1)`, params: [] };
}

/** Every windowed figure of the operations. */
export async function operationTotals(em: EntityManager, scope: Scope, w: Window): Promise<Totals> {
  const t = tablesOf(scope);
  const f = windowRows(t.op, scope, w);
  const sims = windowRows(t.sims, scope, w, "s");
  const agents = activeAgents(scope, w);
  const sums = one<Record<string, unknown>>(
    em,
    `select coalesce(sum(n), 0) as operations,
       coalesce(sum(n) filter (where is_transfer), 0) as transfers,
       coalesce(sum(n) filter (where not is_transfer), 0) as balance_checks,
       coalesce(sum(montant) filter (where ${CONFIRMED_TRANSFER}), 0) as sent_xaf,
       coalesce(sum(n) filter (where ${CONFIRMED_TRANSFER}), 0) as confirmed_transfers,
       coalesce(sum(fee) filter (where ${CONFIRMED_TRANSFER}), 0) as fees_xaf,
       coalesce(sum(fee_n) filter (where ${CONFIRMED_TRANSFER}), 0) as fees_known_for,
       coalesce(sum(montant) filter (where is_transfer and status = 'no_evidence'), 0) as at_risk_xaf,
       coalesce(sum(n) filter (where is_transfer and status = 'no_evidence'), 0) as at_risk_count,
       coalesce(sum(montant) filter (where is_transfer and lost), 0) as lost_xaf,
       coalesce(sum(n) filter (where is_transfer and lost), 0) as lost_count,
       coalesce(sum(n) filter (where status = 'confirmed'), 0) as confirmed,
       coalesce(sum(n) filter (where auto), 0) as auto_confirmed,
       coalesce(sum(n) filter (where settled), 0) as settled_by_hand,
       coalesce(sum(n) filter (where status = 'failed'), 0) as failed,
       coalesce(sum(n) filter (where status = 'no_evidence'), 0) as unproven,
       ${agents.sql} as active_agents,
       (select count(*) from (select sim_id from ${sims.sql} where n > 0 and sim_id <> '${NO_SIM}'
         group by sim_id) s) as active_sims
     from ${f.sql}`,
    [...agents.params, ...sims.params, ...f.params],
  );
  const [r, amounts, delays] = await Promise.all([sums, amountCounts(em, scope, w, 0.5), delayBuckets(em, w, scope)]);
  const figures = amountFigures(amounts, 0.5);
  return {
    ...(Object.fromEntries(Object.entries(r!).map(([k, v]) => [k, n(v)])) as unknown as Totals),
    median_transfer: BigInt(Math.round(figures?.percentile ?? 0)),
    largest_transfer: BigInt(figures?.largest ?? 0),
    proof_delay_median_s: delayPercentile(delays, 0.5),
    proof_delay_p90_s: delayPercentile(delays, 0.9),
  };
}

/** The series, per local day or per week (dated by its Monday). Empty days are absent here. */
export async function dailyRows(em: EntityManager, scope: Scope, w: Window, weekly: boolean): Promise<DayRow[]> {
  const f = rowsOf(scope, w);
  const bucket = weekly ? `date_trunc('week', local_day)::date` : "local_day";
  const r = await rows<Record<string, unknown>>(
    em,
    `select to_char(${bucket}, 'YYYY-MM-DD') as day, sum(n) as operations,
       coalesce(sum(n) filter (where is_transfer), 0) as transfers,
       coalesce(sum(n) filter (where not is_transfer), 0) as balance_checks,
       coalesce(sum(montant) filter (where ${CONFIRMED_TRANSFER}), 0) as value_xaf,
       coalesce(sum(n) filter (where status = 'confirmed'), 0) as confirmed,
       coalesce(sum(n) filter (where auto), 0) as auto_confirmed,
       coalesce(sum(n) filter (where status = 'failed'), 0) as failed,
       coalesce(sum(n) filter (where status = 'no_evidence'), 0) as unproven
     from analytics.${tablesOf(scope).op} where ${f.sql} group by 1 having sum(n) > 0 order by 1`,
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
  const f = windowRows(tablesOf(scope).hourly, scope, w);
  const r = await rows<{ weekday: number; hour: number; operations: string }>(
    em,
    `select local_dow as weekday, local_hour as hour, sum(n) as operations
     from ${f.sql} group by 1, 2 having sum(n) > 0 order by 1, 2`,
    f.params,
  );
  return r.map((x) => ({ weekday: Number(x.weekday), hour: Number(x.hour), operations: n(x.operations) }));
}

export interface AgentActivityRow {
  agent_id: string;
  name: string;
  operations: bigint;
  value_xaf: bigint;
}

export async function fleetAgentRows(em: EntityManager, w: Window): Promise<AgentActivityRow[]> {
  const d = windowRows("agent_daily", { fleet: true }, w, "d");
  const r = await rows<{ agent_id: string; name: string | null; operations: string; value_xaf: string }>(
    em,
    `select o.agent_id, a.full_name as name, o.operations, o.value_xaf from (
       select agent_id, sum(n) as operations, sum(value_xaf) as value_xaf
       from ${d.sql} group by agent_id having sum(n) > 0) o
     left join analytics.agents a using (agent_id)
     order by o.operations desc, o.value_xaf desc, o.agent_id`,
    d.params,
  );
  return r.map((x) => ({
    agent_id: x.agent_id,
    name: x.name ?? "",
    operations: n(x.operations),
    value_xaf: n(x.value_xaf),
  }));
}

export async function statusCounts(em: EntityManager, scope: Scope, w: Window): Promise<Record<string, bigint>> {
  const f = windowRows(tablesOf(scope).op, scope, w);
  const r = await rows<{ status: string; count: string }>(
    em,
    `select status, sum(n) as count from ${f.sql}
     group by status having sum(n) > 0 order by status`,
    f.params,
  );
  return Object.fromEntries(r.map((x) => [x.status, n(x.count)]));
}

/**
 * Messages of the window: the fleet's from the per-day, per-SIM rollup; an agent's are the
 * messages tied to its own operations (not every message of the SIMs it used, which counted
 * other agents' work on them), from the per-agent one.
 */
export async function messageTotals(em: EntityManager, scope: Scope, w: Window) {
  const f = windowRows(tablesOf(scope).messages, scope, w);
  const r = (await one<{ total: string; ambiguous: string }>(
    em,
    `select coalesce(sum(n), 0) as total, coalesce(sum(ambiguous), 0) as ambiguous
     from ${f.sql}`,
    f.params,
  ))!;
  return { total: n(r.total), ambiguous: n(r.ambiguous) };
}
