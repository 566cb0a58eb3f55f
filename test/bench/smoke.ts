// The benchmarks' smoke run (`npm run bench:smoke`, a step of CI). Not a measurement to
// publish: every benchmark at a small size (about two minutes in all), each figure turned into
// a ratio to a reference measured at the start of the same run, and the run fails when a ratio
// falls below its floor, a third of the goal's ratio (or of today's, for a figure whose goal is
// not met yet: see Check.todayRatio). The machine's load moves a figure and its
// reference together, so noise passes; a change that makes a path three times dearer fails.
//
// References, measured first: a bare express hello-world saturated by the benchmarks' client
// (req/s; its time per request, 1000 / req/s ms, is the reference of a latency), pgbench's
// simple-update on the same PostgreSQL (durable commits/s) and PostgreSQL alone inserting rows
// by one INSERT ... SELECT (rows/s).
//
// A goal's ratio is the goal's figure over the reference of the machine the goals were set on
// (GOAL_MACHINE: a 2-core machine, hello-world about 5,000 req/s, pgbench simple-update about
// 3,000 tx/s, an INSERT ... SELECT about 100,000 rows/s). Every ratio is "higher is better": a
// rate over its reference rate, the hello-world's time per request over a latency or over a
// CPU cost. (Where the hello-world runs much faster than the machines of the goals, it grows
// faster than the system's own speed, so the floors are stricter there, not looser.)
//
//   npm run bench:smoke
//
// Database: fresh ones on BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres).

import { execFileSync, spawn } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { call, closeConnections, saturate, startChild } from "./http.ts";

const here = path.dirname(fileURLToPath(import.meta.url));
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const GOAL_MACHINE = { helloRps: 5000, pgbenchUpdateTps: 3000, sqlInsertRowsPerS: 100_000 };
const log = (s: string) => process.stdout.write(`${s}\n`);

interface References {
  helloRps: number;
  pgbenchUpdateTps: number;
  sqlInsertRowsPerS: number;
}

async function measureReferences(): Promise<References> {
  const hello = await startChild("hello.ts", {});
  try {
    const ref = await saturate(3, 64, () => call(hello.line.url, "GET", "/"));
    const admin = new pg.Client({ connectionString: ADMIN_DB });
    await admin.connect();
    const dbName = `bench_smoke_${Date.now().toString(36)}`;
    await admin.query(`create database ${dbName}`);
    const url = new URL(ADMIN_DB);
    url.pathname = `/${dbName}`;
    try {
      execFileSync("pgbench", ["-i", "-s", "1", "-q", url.toString()], { stdio: "ignore" });
      const out = execFileSync("pgbench", ["-N", "-c", "4", "-j", "2", "-T", "3", url.toString()], {
        stdio: ["ignore", "pipe", "ignore"],
      }).toString();
      const tps = Number(/tps = ([\d.]+)/.exec(out)?.[1]);
      const db = new pg.Client({ connectionString: url.toString() });
      await db.connect();
      await db.query(`create table bench_reference (id bigserial primary key, name text, phone text)`);
      const rows = 100_000;
      const t = performance.now();
      await db.query(
        `insert into bench_reference (name, phone) select 'name ' || g, '+2376' || lpad(g::text, 8, '0') from generate_series(1, $1) g`,
        [rows],
      );
      const sqlInsertRowsPerS = rows / ((performance.now() - t) / 1000);
      await db.end();
      return { helloRps: ref.rps, pgbenchUpdateTps: tps, sqlInsertRowsPerS };
    } finally {
      await admin.query(`drop database if exists ${dbName} with (force)`);
      await admin.end();
    }
  } finally {
    hello.child.kill("SIGTERM");
    closeConnections();
  }
}

/** A benchmark run to its end; its whole output (it fails the smoke run when it fails). */
function runBenchmark(script: string, args: string[]): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", path.join(here, script), ...args], {
      stdio: ["ignore", "pipe", "pipe"],
    });
    let out = "";
    let err = "";
    child.stdout!.on("data", (d: Buffer) => (out += d.toString()));
    child.stderr!.on("data", (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
    child.once("exit", (code) =>
      code === 0 ? resolve(out) : reject(new Error(`${script} exited with ${code}:\n${out.slice(-4000)}\n${err}`)),
    );
  });
}

/** The first number the pattern captures in the output; a figure the output lacks fails the run. */
function figure(out: string, pattern: RegExp, what: string): number {
  const m = pattern.exec(out);
  const v = m ? Number(m[1].replace(/,/g, "")) : NaN;
  if (!Number.isFinite(v)) throw new Error(`no figure for ${what} in:\n${out.slice(-3000)}`);
  return v;
}

interface Check {
  name: string;
  /** The figure as measured, with its unit. */
  shown: string;
  ratio: number;
  goalRatio: number;
  /**
   * For a figure the system does not meet yet: its ratio at this size when the floor was set
   * (this file's commit, on a 2-core machine with hello-world at 4,411 req/s). The floor is a
   * third of the lower of the goal and this, so that today's level passes and three times
   * worse fails; a third of a goal the path is already three times short of would fail today.
   */
  todayRatio?: number;
  /**
   * For a figure whose goal has so much room at this size that a third of it would not catch a
   * path made several times dearer: the floor itself, set from today's ratio.
   */
  floor?: number;
}

const msOf = (rps: number) => 1000 / rps;

async function main(): Promise<void> {
  const started = performance.now();
  const ref = await measureReferences();
  log(
    `references (this run): hello-world ${ref.helloRps.toFixed(0)} req/s (${msOf(ref.helloRps).toFixed(3)} ms a request), pgbench simple-update ${ref.pgbenchUpdateTps.toFixed(0)} tx/s, INSERT ... SELECT ${ref.sqlInsertRowsPerS.toFixed(0)} rows/s`,
  );
  const goalMs = msOf(GOAL_MACHINE.helloRps);
  /** A latency's ratio: the hello-world's time per request over it. */
  const latency = (name: string, ms: number, goalMsOfFigure: number): Check => ({
    name,
    shown: `${ms.toFixed(1)} ms`,
    ratio: msOf(ref.helloRps) / ms,
    goalRatio: goalMs / goalMsOfFigure,
  });
  const checks: Check[] = [];

  // 100 searches of each kind: the p95 of 20 was their slowest but one, and moved 2x between runs.
  const messaging = await runBenchmark("messaging.ts", ["--rows", "10000", "--contacts", "20000", "--queries", "100"]);
  const m = JSON.parse(messaging.split("\n").find((l) => l.startsWith("{"))!) as Record<string, number>;
  checks.push(
    {
      name: "import 10,000 rows (rows/s over INSERT ... SELECT rows/s; goal 100,000 rows < 60 s)",
      shown: `${m.import_rows_per_s} rows/s`,
      ratio: m.import_rows_per_s / ref.sqlInsertRowsPerS,
      goalRatio: 100_000 / 60 / GOAL_MACHINE.sqlInsertRowsPerS,
    },
    latency("contact search by phone prefix, p95 (goal <= 100 ms)", m.search_phone_prefix_p95_ms, 100),
    latency("contact search by name, p95 (goal <= 100 ms)", m.search_name_p95_ms, 100),
  );

  const analytics = await runBenchmark("analytics.ts", ["--operations", "20000", "--runs", "5"]);
  checks.push(
    latency(
      "analytics fleet 365 days, p95 (goal <= 500 ms)",
      figure(analytics, /fleet\s+365 d: p50 \d+ ms, p95 (\d+) ms/, "analytics"),
      500,
    ),
  );

  // The load the fleet really makes, scaled down: 1,000 handsets polling every 4 s, 300 of them
  // holding a SIM (the size at which a create's cost grew with SIMs times a grant's size),
  // creations with replays, claims and outcomes; before it, in the same run, a handset's first
  // poll and the empty poll saturated. The empty poll stayed cheap while this load got 25x slower.
  const poll = await runBenchmark("poll.ts", [
    ...["--handsets", "1000", "--workers", "300", "--creations-per-s", "10"],
    ...["--duration-s", "10", "--warmup-s", "4", "--reference-s", "2"],
  ]);
  const l = JSON.parse(poll.split("\n").findLast((x) => x.startsWith("{"))!) as Record<string, number>;
  checks.push(
    {
      name: "empty poll saturated (req/s over its own run's hello-world; goal >= 0.2)",
      shown: `${l.poll_capacity_rps} req/s (hello-world ${l.hello_world_rps})`,
      ratio: l.poll_capacity_vs_hello_world,
      goalRatio: 0.2,
    },
    {
      // Its goal has room at this size (250 polls/s): a third of it passes 190 ms. The floor is
      // a sixth of today's ratio (p99 17.8 ms at hello-world 7,697 req/s, 2026-11-28; 19.3 ms
      // at 6,954 in CI the same evening), room for the noise of a p99 of 2,500 polls. Before the
      // fix of issue 36 (the grant's SIM list on every row of fleet's dispatch context) the same
      // run gave 190.8 ms at hello-world 6,363: nine times today's, below the floor.
      // The figure judged is the median of the ten one-second windows' p99: a stall of a few
      // hundred milliseconds now and then (seen on every code tried, 2026-11-29: the whole
      // run's p99 from 25 to 109 ms) moves one or two windows, while the regression made
      // every poll slow and moves them all. The whole run's p99 is shown beside it.
      ...latency(
        `realistic poll, 1,000 handsets every 4 s, median of the seconds' p99 (whole run's p99 ${l.poll_p99_ms} ms, ${l.polls_per_s} polls/s; goal <= 150 ms at 750/s)`,
        l.poll_p99_window_median_ms,
        150,
      ),
      floor: 1000 / 7697 / 17.8 / 6,
    },
    {
      name: "realistic poll: errors of polls and creations (a replay answered request_id_reused is one; goal 0)",
      shown: `${l.poll_errors} poll, ${l.creation_errors} creation, ${l.duplicate_executions} double`,
      ratio: l.poll_errors + l.creation_errors + l.duplicate_executions === 0 ? 1 : 0,
      goalRatio: 1,
    },
  );

  const throughput = await runBenchmark("throughput.ts", [
    ...["--ids", "100", "--repeats", "5", "--warmup", "50", "--queued", "500", "--handsets", "10"],
    ...["--duration-s", "3", "--sms-per-s", "20", "--sms-s", "5"],
  ]);
  const claimCpuMs = figure(throughput, /([\d.]+) CPU-ms a claim and its outcome/, "CPU-ms per claim");
  // The transfer's own cost, beyond what the idle system spends a second: on a loaded machine
  // the phase lasts longer, and that fixed cost would grow its share of each transfer.
  const transferCpuMs = figure(throughput, /beyond the idle system's .*?: ([\d.-]+) CPU-ms/, "CPU-ms per transfer");
  const transferTx = figure(throughput, /beyond the idle system's .*?CPU-ms, ([\d.-]+) transactions;/, "transactions");
  checks.push(
    {
      // Not met at full size (310 x 5: p99 1,066 ms at the last measurement, README). Here a
      // tail of 500 creates, which moved 2x between runs of one commit (262 ms at hello-world
      // 12,690 req/s; 624 ms at 10,188; 706 ms at 11,030): a third of the goal alone fails that
      // noise on a machine whose hello-world runs fast.
      ...latency(
        "create burst 100 x 5, p99 (goal <= 1 s at 310 x 5)",
        figure(throughput, /create burst: .*?p99 ([\d.]+) ms/, "burst p99"),
        1000,
      ),
      todayRatio: 0.000128, // 706 ms at hello-world 11,030 req/s (2026-11-26), the worst run
    },
    {
      // A board of agents (sessions) costs about what automation (an API key) costs.
      name: "create burst by 30 sessions, p99 (API-key burst's p99 over it; goal <= 1.5x)",
      shown: `${figure(throughput, /create burst by session: .*?p99 ([\d.]+) ms/, "session burst p99")} ms`,
      ratio: 1 / figure(throughput, /session burst p99 over the API-key burst's: ([\d.]+)/, "session burst ratio"),
      goalRatio: 1 / 1.5,
    },
    {
      // Draining a few hundred with ten handsets, a loaded machine's latency bounds the rate,
      // not the path's cost: the cost is the figure (300/s on two cores is 6.7 CPU-ms each).
      name: "CPU per claim and its outcome, draining 500 (goal 300/s: <= 6.7 CPU-ms)",
      shown: `${claimCpuMs} CPU-ms`,
      ratio: msOf(ref.helloRps) / claimCpuMs,
      goalRatio: goalMs / ((2 * 1000) / 300),
      todayRatio: 0.00521, // 16.4 CPU-ms at 500 claims (JIT warm-up included), hello-world 11,716 req/s
    },
    {
      // Not met: 1.7-2.5 s p99 at 20/s after the burst and the drain (0.7 s in the previous
      // CI), the goal being 2 s at 50/s; alone, about 1 s (README, "Benchmarks").
      ...latency(
        "SMS to confirmation at 20/s, p99 (goal <= 2 s at 50/s)",
        figure(throughput, /SMS to confirmation at .*?p99 ([\d.]+) ms/, "SMS p99"),
        2000,
      ),
      todayRatio: 0.0000283, // 2,545 ms at hello-world 13,866 req/s (CI, 2026-11-26)
    },
    {
      name: "CPU per confirmed transfer beyond idle (hello-world ms over CPU-ms; goal <= 20 CPU-ms)",
      shown: `${transferCpuMs} CPU-ms`,
      ratio: msOf(ref.helloRps) / transferCpuMs,
      goalRatio: goalMs / 20,
      todayRatio: 0.000863, // 98.9 CPU-ms at hello-world 11,716 req/s (CI's quiet run): the CPU cut is not made yet
    },
    {
      name: "database transactions per confirmed transfer, beyond idle (goal <= 8)",
      shown: `${transferTx} transactions`,
      ratio: 8 / transferTx,
      goalRatio: 1,
      // 13 transactions (12.4-12.6 beyond idle without Kafka, as here, the SMS phase alone at
      // this size), counted once PostgreSQL has reported them (proc.ts, statsReported;
      // docs/benchmarks.md, "Seventh round"). A third of today's ratio fails at 39, a path three
      // times dearer.
      todayRatio: 8 / 13,
    },
  );

  // Months of history (bench:history at 100,000 operations and as many messages: about 1.3
  // million rows over the six schemas, built in about a minute): each hot path's median on
  // the history over its median on the empty database of the same run, through the same
  // system. A ratio is "empty over history" (higher is better); the goal is a path no dearer
  // than 1.5x on the history. The floor is 10x, not a third of the goal: a page of the history
  // is read from heap pages the empty database does not have, and pages whose plans read a
  // page measured up to 14x the empty database's median at 300,000 operations after the fixes
  // (docs/benchmarks.md, "History"), while the plans that read the history were 11.6x (the
  // fleet day, before its index) to 58x (search, before its index) already at this size. The median, not the p95
  // the benchmark prints: a plan reading history is slow at every call, while a p95 of ten
  // calls on a shared machine is its slowest but one, which moved 3x between runs of one commit.
  // Neither the small history nor the second measurement of the paths the run cannot place:
  // both judge p95s, which this step does not read.
  const history = await runBenchmark("history.ts", [
    "--operations",
    "100000",
    "--runs",
    "10",
    "--small-days",
    "0",
    "--again-runs",
    "0",
  ]);
  const hist = JSON.parse(history.split("\n").findLast((x) => x.startsWith("{"))!) as {
    build_s: number;
    database_bytes: number;
    paths: Record<string, { empty_p50_ms: number; history_p50_ms: number }>;
  };
  // Every path fails at 10 times its empty database's p50. The last path listed apart with a
  // floor of its own, a closed day's first read (0.096: the day's messages summed on the
  // request's path), left the list when the day keeper kept every closed day ahead of its read
  // (Migration0013UnkeptDays); the search, the status filter, the arbitration queue and
  // analytics' views left it before with their fixes.
  for (const [path, f] of Object.entries(hist.paths)) {
    checks.push({
      name: `history ${path}, p50 (empty's over history's; goal <= 1.5x)`,
      shown: `${f.history_p50_ms.toFixed(1)} ms (empty ${f.empty_p50_ms.toFixed(1)} ms)`,
      ratio: f.empty_p50_ms / f.history_p50_ms,
      goalRatio: 1 / 1.5,
      floor: 0.1,
    });
  }
  log(`history: 100,000 operations built in ${hist.build_s} s, ${(hist.database_bytes / 1048576).toFixed(0)} MB`);

  log("");
  log(
    `${"figure".padEnd(92)} ${"measured".padEnd(34)} ${"ratio".padStart(9)} ${"goal".padStart(9)} ${"floor".padStart(9)}`,
  );
  let breached = 0;
  const r = (v: number) => (v >= 0.1 ? v.toFixed(3) : v.toPrecision(3));
  for (const c of checks) {
    const floor = c.floor ?? Math.min(c.goalRatio, c.todayRatio ?? Infinity) / 3;
    const ok = c.ratio >= floor;
    if (!ok) breached++;
    log(
      `${c.name.padEnd(92)} ${c.shown.padEnd(34)} ${r(c.ratio).padStart(9)} ${r(c.goalRatio).padStart(9)} ${r(floor).padStart(9)}${ok ? "" : "  BELOW THE FLOOR"}`,
    );
  }
  log(
    `\n${checks.length - breached} of ${checks.length} figures at or above their floor (a third of the goal's ratio, or of today's where the goal is not met), in ${((performance.now() - started) / 1000).toFixed(0)} s`,
  );
  if (breached) process.exitCode = 1;
}

await main();
