import { one, rows, type EntityManager } from "@transferops/kit";
import { delayPercentile, type DelayBucket } from "../domain/delay-histogram.ts";
import type { Window } from "../domain/window.ts";
import { HISTOGRAM_FLOORS, NO_SIM } from "./migrations/Migration0003Rollups.ts";
import type { DayRow, Totals } from "./report.ts";

/**
 * The fleet view, read from the per-day rollups (Migration0003Rollups) and, for the median
 * amount, by walking the ordered partial index instead of sorting the window; the proof-delay
 * percentiles from the window's delay histogram alone (Migration0005DelaySeconds). Every figure
 * equals what report.ts computes from the rows (the tests compare both), the delay percentiles
 * within their bucket's width (domain/delay-histogram.ts).
 */

const n = (v: unknown): bigint => BigInt((v as string | number | null) ?? 0);

function days(w: Window, column = "local_day"): { sql: string; params: unknown[] } {
  return w.all
    ? { sql: "true", params: [] }
    : { sql: `${column} between ?::date and ?::date`, params: [w.firstDay, w.lastDay] };
}

const CONFIRMED_TRANSFER = `is_transfer and status = 'confirmed'`;

/**
 * percentile_cont(p) of the values of the window: the window's histogram (a rollup) says
 * which bucket holds rank ⌊p × (count − 1)⌋ and how many values lie below it; the ordered
 * index is walked from that bucket's floor only, and the two values around the position
 * are interpolated.
 */
async function percentile(
  em: EntityManager,
  o: { hist: "amount_hist"; values: string; column: string },
  w: Window,
  count: bigint,
  p: number,
): Promise<number | undefined> {
  if (count === 0n) return undefined;
  const d = days(w);
  const pos = p * (Number(count) - 1);
  const rank = Math.floor(pos);
  const buckets = await rows<{ bucket: number; n: string }>(
    em,
    `select bucket, sum(n) as n from analytics.${o.hist} where ${d.sql} group by bucket having sum(n) > 0 order by bucket`,
    d.params,
  );
  let below = 0;
  let bucket = buckets.at(-1)?.bucket ?? 0;
  for (const b of buckets) {
    if (rank < below + Number(b.n)) {
      bucket = b.bucket;
      break;
    }
    below += Number(b.n);
  }
  const floor = bucket > 0 ? HISTOGRAM_FLOORS[bucket - 1] : undefined;
  const r = await rows<{ v: string | number }>(
    em,
    `select ${o.column} as v from analytics.operations where ${o.values} and ${d.sql}
       ${floor === undefined ? "" : `and ${o.column} >= ${floor}`}
     order by ${o.column} offset ? limit 2`,
    [...d.params, rank - below],
  );
  if (!r.length) return undefined;
  const a = Number(r[0].v);
  const b = r.length > 1 ? Number(r[1].v) : a;
  return a + (pos - rank) * (b - a);
}

/** The window's proof delays summed per bucket, in the buckets' order (Migration0005DelaySeconds). */
export async function delayBuckets(em: EntityManager, w: Window): Promise<DelayBucket[]> {
  const d = days(w);
  const r = await rows<{ bucket: number; n: string; sum_s: number }>(
    em,
    `select bucket, sum(n) as n, sum(sum_s) as sum_s from analytics.delay_seconds where ${d.sql}
     group by bucket having sum(n) > 0 order by bucket`,
    d.params,
  );
  return r.map((b) => ({ bucket: Number(b.bucket), n: Number(b.n), sum_s: Number(b.sum_s) }));
}

export async function fleetTotals(em: EntityManager, w: Window): Promise<Totals> {
  const d = days(w);
  const r = (await one<Record<string, unknown>>(
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
       coalesce(sum(delay_n), 0) as delays,
       (select count(*) from (select agent_id from analytics.agent_daily where ${d.sql} and n > 0 group by agent_id) a)
         as active_agents,
       (select count(*) from (select sim_id from analytics.op_sim_daily where ${d.sql} and n > 0 and sim_id <> '${NO_SIM}'
         group by sim_id) s) as active_sims
     from analytics.op_daily where ${d.sql}`,
    [...d.params, ...d.params, ...d.params],
  ))!;
  const t = Object.fromEntries(Object.entries(r).map(([k, v]) => [k, n(v)])) as unknown as Totals & { delays: bigint };
  const amounts = { hist: "amount_hist", values: CONFIRMED_TRANSFER, column: "montant" } as const;
  const [median, largest, delays] = await Promise.all([
    percentile(em, amounts, w, t.confirmed_transfers, 0.5),
    one<{ v: string }>(
      em,
      `select montant as v from analytics.operations where ${CONFIRMED_TRANSFER} and ${d.sql} order by montant desc limit 1`,
      d.params,
    ),
    delayBuckets(em, w),
  ]);
  return {
    ...t,
    median_transfer: BigInt(Math.round(median ?? 0)),
    largest_transfer: n(largest?.v),
    proof_delay_median_s: delayPercentile(delays, 0.5),
    proof_delay_p90_s: delayPercentile(delays, 0.9),
  };
}

export async function fleetDailyRows(em: EntityManager, w: Window, weekly: boolean): Promise<DayRow[]> {
  const d = days(w);
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
     from analytics.op_daily where ${d.sql} group by 1 having sum(n) > 0 order by 1`,
    d.params,
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

export async function fleetHourRows(em: EntityManager, w: Window) {
  const d = days(w);
  const r = await rows<{ weekday: number; hour: number; operations: string }>(
    em,
    `select local_dow as weekday, local_hour as hour, sum(n) as operations
     from analytics.op_hourly where ${d.sql} group by 1, 2 having sum(n) > 0 order by 1, 2`,
    d.params,
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
  const d = days(w, "o.local_day");
  const r = await rows<{ agent_id: string; name: string | null; operations: string; value_xaf: string }>(
    em,
    `select o.agent_id, a.full_name as name, o.operations, o.value_xaf from (
       select agent_id, sum(n) as operations, sum(value_xaf) as value_xaf
       from analytics.agent_daily o where ${d.sql} group by agent_id having sum(n) > 0) o
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

export async function fleetStatusCounts(em: EntityManager, w: Window): Promise<Record<string, bigint>> {
  const d = days(w);
  const r = await rows<{ status: string; count: string }>(
    em,
    `select status, sum(n) as count from analytics.op_daily where ${d.sql}
     group by status having sum(n) > 0 order by status`,
    d.params,
  );
  return Object.fromEntries(r.map((x) => [x.status, n(x.count)]));
}

/**
 * Messages of the window: the fleet's from the per-day, per-SIM rollup; an agent's are the
 * messages tied to its own operations (not every message of the SIMs it used,
 * which counted other agents' work on them).
 */
export async function messageTotalsFromRollup(em: EntityManager, w: Window, agentId?: string) {
  const d = days(w);
  const r = (await one<{ total: string; ambiguous: string }>(
    em,
    agentId
      ? `select count(*) as total, count(*) filter (where m.is_ambiguous) as ambiguous
         from analytics.messages m join analytics.operations o on o.operation_id = m.operation_id
         where o.agent_id = ? and ${days(w, "m.local_day").sql}`
      : `select coalesce(sum(n), 0) as total, coalesce(sum(ambiguous), 0) as ambiguous
         from analytics.msg_daily where ${d.sql}`,
    agentId ? [agentId, ...d.params] : d.params,
  ))!;
  return { total: n(r.total), ambiguous: n(r.ambiguous) };
}
