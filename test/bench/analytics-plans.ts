// The plans of the analytics reports on a database that holds a history (not a test: it
// measures and prints). Every statement the fleet's and an agent's GetAnalytics run, with what
// `explain (analyze, buffers)` says of it: time, buffers, and the rows its scans read. The
// history benchmark's database is one (`npm run bench:history -- --keep-db`); opening it
// migrates analytics to this checkout's migrations first, and says how long that took.
//
//   npx tsx test/bench/analytics-plans.ts --url postgres://postgres@127.0.0.1:5432/history_bench_x [--days 365]
//     [--agent <uuid>] [--runs 20] [--log /var/log/postgresql/postgresql-15-main.log] [--plans <file>]
//
// First each report is timed --runs times (p50, p95), then its plans are read. The plans come
// from auto_explain (every statement of the database, for the time of the run:
// `alter database ... set auto_explain.*`, reset at the end), read from the server's log as
// the history benchmark reads them; each report runs twice and the second run is printed (with
// --plans, the whole plans are written to that file). The agent is the one with the most
// operations unless --agent names one.
import { appendFileSync, closeSync, openSync, readSync, statSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { createLogger, openDatabase, type Database } from "@transferops/kit";
import { loadAnalyticsConfig } from "../../services/analytics/src/config.ts";
import { resolveWindow } from "../../services/analytics/src/domain/window.ts";
import type { Scope } from "../../services/analytics/src/domain/scope.ts";
import { analyticsReport } from "../../services/analytics/src/flows/report.ts";
import { migrations } from "../../services/analytics/src/store/migrations/index.ts";

const { values: flags } = parseArgs({
  options: {
    url: { type: "string" },
    days: { type: "string" },
    agent: { type: "string" },
    log: { type: "string" },
    plans: { type: "string" },
    runs: { type: "string" },
  },
});
if (!flags.url) throw new Error("--url is required");
const url = flags.url;
const days = Number(flags.days ?? 365);
const runs = Number(flags.runs ?? 20);
const pgLog = flags.log ?? process.env.BENCH_PG_LOG ?? "/var/log/postgresql/postgresql-15-main.log";
const dbName = new URL(url).pathname.slice(1);
const SETTINGS = ["log_min_duration = 0", "log_analyze = on", "log_buffers = on", "log_timing = on"];

interface Plan {
  ms: number;
  query: string;
  buffers: string;
  rowsRead: number;
  text: string;
}

/** The plans auto_explain logged for the database since byte `from` of the log, in order. */
function plansSince(from: number): Plan[] {
  const size = statSync(pgLog).size;
  const fd = openSync(pgLog, "r");
  const buf = Buffer.alloc(Math.max(0, size - from));
  readSync(fd, buf, 0, buf.length, from);
  closeSync(fd);
  const plans: Plan[] = [];
  let current: { ms: number; lines: string[] } | undefined;
  const flush = () => {
    if (current) plans.push(summary(current.ms, current.lines));
    current = undefined;
  };
  for (const line of buf.toString("utf8").split("\n")) {
    const head = /^\d{4}-\d\d-\d\d [\d:.]+ \w+ \[\d+\] (\S*)@(\S*) LOG:\s+duration: ([\d.]+) ms\s+plan:/.exec(line);
    if (head) {
      flush();
      if (head[2] === dbName) current = { ms: Number(head[3]), lines: [] };
    } else if (/^\d{4}-\d\d-\d\d /.test(line)) flush();
    else if (current) current.lines.push(line);
  }
  flush();
  return plans;
}

/**
 * A plan's first query line, its top node's buffers, and the rows its scans returned (× loops;
 * a bitmap heap scan's rows, not its index scan's as well).
 */
function summary(ms: number, lines: string[]): Plan {
  const text = lines.join("\n");
  const query = (/Query Text: ([^\n]*)/.exec(text)?.[1] ?? "").trim().replace(/\s+/g, " ").slice(0, 110);
  const buffers = (/Buffers: ([^\n]*)/.exec(text)?.[1] ?? "none").trim();
  let rowsRead = 0;
  for (const m of text.matchAll(/(Bitmap Index )?Scan[^\n]*?actual time=[\d.]+\.\.[\d.]+ rows=(\d+) loops=(\d+)/g)) {
    if (!m[1]) rowsRead += Number(m[2]) * Number(m[3]);
  }
  return { ms, query, buffers, rowsRead, text };
}

if (flags.plans) writeFileSync(flags.plans, "");
const admin = new pg.Client({ connectionString: url });
await admin.connect();
const log = createLogger("analytics-plans", { level: "warn" });
const config = loadAnalyticsConfig({ DATABASE_URL: url, NODE_ENV: "development", LOG_LEVEL: "warn" });
const now = new Date();
const window = resolveWindow({ days }, now);

type Report = Awaited<ReturnType<typeof analyticsReport>>;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil(p * sorted.length) - 1)];

/** Each scope's report `runs` times (after two unmeasured), without auto_explain: p50 and p95. */
async function timeReports(db: Database, scopes: [string, Scope][]): Promise<void> {
  for (const [name, scope] of scopes) {
    const times: number[] = [];
    for (let i = -2; i < runs; i++) {
      const t = performance.now();
      await analyticsReport({ db, config }, scope, window, now);
      if (i >= 0) times.push(performance.now() - t);
    }
    times.sort((a, b) => a - b);
    console.log(
      `${name}, ${days} days, ${runs} runs: p50 ${percentile(times, 0.5).toFixed(1)} ms, p95 ${percentile(times, 0.95).toFixed(1)} ms`,
    );
  }
}

/** Each scope's report once more with auto_explain on: every statement's plan, summed up. */
async function printPlans(db: Database, scopes: [string, Scope][]): Promise<void> {
  const line = (name: string, ms: number, plans: Plan[], report: Report) =>
    `\n${name}, ${days} days: ${ms.toFixed(1)} ms, ${plans.length} statements, ` +
    `${plans.reduce((s, p) => s + p.rowsRead, 0)} rows read by their scans; median ${report.money!.medianTransfer}, ` +
    `largest ${report.money!.largestTransfer}, operations ${report.activity!.operations}, ` +
    `delay p50 ${report.reliability!.proofDelayMedianS}`;
  for (const [name, scope] of scopes) {
    await analyticsReport({ db, config }, scope, window, now);
    const from = statSync(pgLog).size;
    const t = performance.now();
    const report = await analyticsReport({ db, config }, scope, window, now);
    const ms = performance.now() - t;
    // The log is written by the server a moment after the statement ends.
    await new Promise((r) => setTimeout(r, 500));
    const plans = plansSince(from);
    console.log(line(name, ms, plans, report));
    for (const p of plans) {
      if (flags.plans) appendFileSync(flags.plans, `-- ${name}: ${p.ms} ms\n${p.text}\n\n`);
      console.log(
        `  ${p.ms.toFixed(3).padStart(9)} ms ${String(p.rowsRead).padStart(8)} rows  ${p.buffers.padEnd(34)} ${p.query}`,
      );
    }
  }
}

const open = () => openDatabase({ url, schema: "analytics", migrations, log, poolMax: 4 });
try {
  // Timings first, with auto_explain off for the sessions of the pool.
  await admin.query(`alter database "${dbName}" set auto_explain.log_min_duration = -1`);
  const started = performance.now();
  let db = await open();
  console.log(
    `analytics opened (migrated to ${migrations.length} migrations) in ${(performance.now() - started).toFixed(0)} ms`,
  );
  const agent =
    flags.agent ??
    (await admin.query(`select agent_id from analytics.operations group by 1 order by count(*) desc limit 1`)).rows[0]
      .agent_id;
  const scopes: [string, Scope][] = [
    ["fleet", { fleet: true }],
    [`agent ${agent}`, { fleet: false, agentId: agent }],
  ];
  await timeReports(db, scopes);
  await db.close();
  for (const s of SETTINGS) await admin.query(`alter database "${dbName}" set auto_explain.${s}`);
  await admin.query(`alter database "${dbName}" set session_preload_libraries = 'auto_explain'`);
  db = await open();
  try {
    await printPlans(db, scopes);
  } finally {
    await db.close();
  }
} finally {
  for (const s of SETTINGS) await admin.query(`alter database "${dbName}" reset auto_explain.${s.split(" ")[0]}`);
  await admin.end();
}
