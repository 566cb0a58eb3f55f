// The analytics benchmark (`npm run bench:analytics`). Not a test: it measures and prints.
//
// Loads N operations (default one million) over the last 365 days into analytics' read
// model, with as many operator messages and a third as many intake transactions, through
// the projection's own tables and triggers (the rollups are maintained as in production),
// then calls GetAnalytics over gRPC on the analytics service and prints p50/p95 for the
// fleet view and for one agent at 7, 90 and 365 days. Goal: fleet p95 ≤ 500 ms at 365 days.
//
//   npm run bench:analytics                       # 1,000,000 operations
//   npm run bench:analytics -- --operations 20000 --runs 10
//
// Options: --operations (BENCH_OPERATIONS, 1000000), --runs per scenario (20), --agents (50),
// --keep-db. Database: a fresh one on BENCH_DATABASE_ADMIN_URL (default the machine's
// postgres://postgres@127.0.0.1:5432/postgres), dropped at the end unless --keep-db.
import { randomBytes } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import { createLogger, MemoryBus, serviceClient } from "@transferops/kit";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import { startAnalytics } from "../../services/analytics/src/app.ts";
import { loadAnalyticsConfig } from "../../services/analytics/src/config.ts";

const { values: flags } = parseArgs({
  options: {
    operations: { type: "string" },
    runs: { type: "string" },
    agents: { type: "string" },
    "keep-db": { type: "boolean", default: false },
  },
});
const OPERATIONS = Number(flags.operations ?? process.env.BENCH_OPERATIONS ?? 1_000_000);
const RUNS = Number(flags.runs ?? 20);
const AGENTS = Number(flags.agents ?? 50);
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const CHUNK = 50_000;

const agentId = (i: number) => `00000000-0000-4000-a000-${String(i).padStart(12, "0")}`;

async function load(db: pg.Client): Promise<void> {
  await db.query(`select setseed(0.42)`);
  await db.query(`set session_replication_role = replica`);
  await db.query(
    `insert into analytics.agents (agent_id, full_name, role, is_active, updated_at)
     select ('00000000-0000-4000-a000-' || lpad(i::text, 12, '0'))::uuid, 'Agent ' || i, 'agent', true, now()
     from generate_series(1, $1) i`,
    [AGENTS],
  );
  // Two SIMs and one handset per agent.
  await db.query(
    `insert into analytics.sims (sim_id, status, device_id, balance_mirror, balance_updated_at)
     select ('00000000-0000-4000-b000-' || lpad(i::text, 12, '0'))::uuid, case when i % 17 = 0 then 'frozen' else 'active' end,
       'dev' || ((i + 1) / 2), 100000 + i, now() - (i % 30) * interval '1 hour'
     from generate_series(1, $1 * 2) i`,
    [AGENTS],
  );
  await db.query(
    `insert into analytics.devices (device_id, label) select 'dev' || i, 'Handset ' || i from generate_series(1, $1) i`,
    [AGENTS],
  );
  for (let start = 1; start <= OPERATIONS; start += CHUNK) {
    const end = Math.min(OPERATIONS, start + CHUNK - 1);
    const t0 = Date.now();
    await db.query(
      `insert into analytics.operations (operation_id, agent_id, sim_id, device_id, device_label, op_type, is_transfer,
         status, montant, created_at, local_day, local_dow, local_hour, finished_at, dialled, confirmed_by,
         touched_by_hand, settled_by_hand, lost, fee, proof_delay_s, changed_at)
       select gen_random_uuid(), a.agent, a.sim, a.dev, 'Handset', x.op_type, x.op_type <> 'balance', x.status,
         case when x.op_type = 'balance' then 1 else (1 + floor(random() * 1000)) * 500 end,
         x.created_at, (x.created_at at time zone 'UTC' + interval '1 hour')::date,
         extract(isodow from x.created_at at time zone 'UTC' + interval '1 hour'),
         extract(hour from x.created_at at time zone 'UTC' + interval '1 hour'),
         x.created_at + interval '40 seconds', x.status <> 'rejected', x.confirmed_by,
         coalesce(x.confirmed_by in ('attach', 'settle'), false), case when x.confirmed_by = 'settle' then 'arrived' end,
         x.status = 'failed' and x.r2 < 0.5,
         case when x.confirmed_by in ('proof', 'attach') and x.r2 < 0.7 then 50 + floor(x.r2 * 500) end,
         case when x.confirmed_by = 'proof' then round((x.r2 * 300)::numeric, 3) end,
         x.created_at + interval '2 minutes'
       from (select g, random() as r2,
               now() - random() * interval '365 days' as created_at,
               case when random() < 0.1 then 'balance' else 'deposit' end as op_type,
               s.status, case when s.status = 'confirmed' then
                 case when s.r < 0.9 then 'proof' when s.r < 0.95 then 'attach' else 'settle' end end as confirmed_by
             from generate_series($1::int, $2::int) g,
               lateral (select r, case when r < 0.85 then 'confirmed' when r < 0.91 then 'failed'
                   when r < 0.94 then 'no_evidence' when r < 0.97 then 'rejected' else 'awaiting_evidence' end as status
                 from (select random() + g * 0 as r) q) s) x,
         lateral (select ('00000000-0000-4000-a000-' || lpad(k::text, 12, '0'))::uuid as agent,
                    ('00000000-0000-4000-b000-' || lpad((k * 2 - (x.g % 2))::text, 12, '0'))::uuid as sim,
                    'dev' || k as dev
                  from (select 1 + (x.g::bigint * 7919) % $3 as k) kk) a`,
      [start, end, AGENTS],
    );
    await db.query(
      `insert into analytics.messages (message_id, sim_id, received_at, local_day, kind, outcome, is_ambiguous, operation_id, dismissed_at)
       select gen_random_uuid(), ('00000000-0000-4000-b000-' || lpad((1 + g % ($3 * 2))::text, 12, '0'))::uuid, t,
         (t at time zone 'UTC' + interval '1 hour')::date, 'DEP',
         case when r < 0.95 then 'confirmed' when r < 0.97 then 'ambiguous' else 'orphan' end, r >= 0.95 and r < 0.97,
         case when r < 0.95 then gen_random_uuid() end, case when r > 0.995 then t + interval '1 hour' end
       from (select g, random() as r, now() - random() * interval '365 days' as t from generate_series($1::int, $2::int) g) m`,
      [start, end, AGENTS],
    );
    await db.query(
      `insert into analytics.transactions (transaction_id, state, received_amount_xaf, send_amount_eur, rate, operation_id,
         launched_by, transaction_date, local_day, changed_at)
       select gen_random_uuid(), case when random() < 0.05 then 'cancelled' else 'done' end, xaf, xaf / 655.957, 655.957, null,
         ('00000000-0000-4000-a000-' || lpad((1 + g % $3)::text, 12, '0'))::uuid, t, (t at time zone 'UTC' + interval '1 hour')::date, t
       from (select g, (1 + floor(random() * 1000)) * 500 as xaf, now() - random() * interval '365 days' as t
             from generate_series($1::int, $2::int) g where g % 3 = 0) x`,
      [start, end, AGENTS],
    );
    console.log(`loaded ${end} operations (+ messages, transactions) — chunk in ${Date.now() - t0} ms`);
  }
  // Bulk load: the rows go in with the rollup triggers off, then the rollups are computed
  // in one pass by the migration's rebuild_rollups() (the same sums the triggers keep), and
  // their monthly copies from them by rebuild_monthly_rollups(), triggers still off.
  const t0 = Date.now();
  await db.query(`select analytics.rebuild_rollups()`);
  await db.query(`select analytics.rebuild_monthly_rollups()`);
  await db.query(`set session_replication_role = origin`);
  console.log(`rollups rebuilt in ${Date.now() - t0} ms`);
  await db.query(`vacuum analyze`);
}

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];

const dbName = `bench_analytics_${randomBytes(4).toString("hex")}`;
const admin = new pg.Client({ connectionString: ADMIN_DB });
await admin.connect();
await admin.query(`create database ${dbName}`);
const url = new URL(ADMIN_DB);
url.pathname = `/${dbName}`;
const log = createLogger("bench", { level: "warn" });
const bus = new MemoryBus();
const service = await startAnalytics({
  config: loadAnalyticsConfig({ DATABASE_URL: url.toString(), NODE_ENV: "development", LOG_LEVEL: "warn" }),
  port: 0,
  bus,
  log,
});
const db = new pg.Client({ connectionString: url.toString() });
try {
  await db.connect();
  const t0 = Date.now();
  await load(db);
  const counts = (
    await db.query(`select (select count(*) from analytics.operations) as operations,
      (select count(*) from analytics.messages) as messages, (select count(*) from analytics.transactions) as transactions`)
  ).rows[0];
  console.log(`read model: ${JSON.stringify(counts)} loaded in ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const client = serviceClient(AnalyticsService, service.url);
  const callers = {
    fleet: { kind: "session", agentId: agentId(0), role: "admin", isActive: true },
    agent: { kind: "session", agentId: agentId(1), role: "agent", isActive: true },
  };
  // The fleet view reads rollups and histogram buckets: check its percentiles and
  // sums against plain SQL over the rows, at this size.
  const check = await client.getAnalytics({ caller: callers.fleet, window: { all: true } }, { timeoutMs: 120_000 });
  const sql = (
    await db.query(`select round(percentile_cont(0.5) within group (order by montant)
        filter (where is_transfer and status = 'confirmed')) as median,
      coalesce(sum(montant) filter (where is_transfer and status = 'confirmed'), 0) as sent,
      percentile_cont(0.5) within group (order by proof_delay_s) as d50,
      percentile_cont(0.9) within group (order by proof_delay_s) as d90 from analytics.operations`)
  ).rows[0];
  const r = check.report!;
  const same =
    String(r.money!.medianTransfer) === String(sql.median) &&
    String(r.money!.sentXaf) === String(sql.sent) &&
    // The delays' percentiles come from one-second buckets (Migration0005DelaySeconds): within a
    // second of the rows' below 600 s.
    Math.abs((r.reliability!.proofDelayMedianS ?? 0) - Number(sql.d50)) < 1 &&
    Math.abs((r.reliability!.proofDelayP90S ?? 0) - Number(sql.d90)) < 1;
  console.log(
    `check against SQL over the rows (all): median ${r.money!.medianTransfer} vs ${sql.median}, sent ${r.money!.sentXaf} vs ${sql.sent}, ` +
      `delay p50 ${r.reliability!.proofDelayMedianS} vs ${sql.d50}, p90 ${r.reliability!.proofDelayP90S} vs ${sql.d90}: ${same ? "equal (delays within a second)" : "DIFFERENT"}`,
  );
  console.log(`GetAnalytics over gRPC, ${RUNS} runs per scenario (after 2 warm-up runs):`);
  for (const [view, caller] of Object.entries(callers)) {
    for (const days of [7, 90, 365]) {
      const times: number[] = [];
      for (let i = 0; i < RUNS + 2; i++) {
        const s = performance.now();
        const res = await client.getAnalytics({ caller, window: { days } }, { timeoutMs: 60_000 });
        if (i >= 2) times.push(performance.now() - s);
        if (i === 0 && days === 365) {
          console.log(
            `  ${view} 365 d: ${res.report?.activity?.operations} operations, ${res.report?.activity?.daily.length} buckets`,
          );
        }
      }
      times.sort((a, b) => a - b);
      console.log(
        `  ${view.padEnd(5)} ${String(days).padStart(3)} d: p50 ${pct(times, 0.5).toFixed(0)} ms, p95 ${pct(times, 0.95).toFixed(0)} ms`,
      );
    }
  }
} finally {
  await db.end();
  await service.stop();
  await bus.close();
  if (!flags["keep-db"]) await admin.query(`drop database ${dbName} with (force)`);
  await admin.end();
}
