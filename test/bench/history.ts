// The history benchmark (`npm run bench:history`). Not a test: it measures and prints.
//
// Does every hot path cost as much on months of history as on an empty database? In one run,
// on two or three databases side by side, each with its system:
//   1. the reference: a bare express hello-world saturated by the same client;
//   2. fresh databases, the empty one, the small history's (the history's last 16 days at its
//      rate, when that is 10,000 operations or more) and the history's, and on each the
//      system (one process, BENCH_TOPOLOGY=single), the benchmark's admin, agent, handsets and
//      SIMs created through the API, and the history's fleet (100 SIMs, 51 agents);
//   3. the small history, then the history, written with set-based SQL (history-build.ts: operations,
//      messages linked and orphaned, proofs, reconciliations, audit rows, notifications, intake
//      transactions, contacts, analytics' read model, outbox and inbox rows as the relays
//      leave them; the bulk tables' indexes dropped for the load and built again after it,
//      history-load.ts), its build time and the database's size printed, then `vacuum analyze`
//      (what autovacuum does after a load; this machine's PostgreSQL runs without it);
//   4. every hot path measured RUNS times on each database through the HTTP API, the
//      databases' calls alternated (measureAll): the write path (create with all its gates,
//      poll and claim, outcome, SMS to confirmation) and the reads (queues, lists with each
//      contract filter and `search`, an operation, a SIM's history, a day's reconciliation and
//      balance chain, analytics, audit log, notifications, contact search), the reads in rounds
//      of every path, so that what the machine does meanwhile falls on every database and on
//      every path alike;
//   5. each path's p95 on the history beside its p95 on the empty database, with the ratio
//      (goal: <= 1.5) and its 90 % bootstrap interval (percentileRatioInterval: where it holds
//      1.5, the run cannot say on which side of the goal the path is), and a list's rows on each
//      (a page of the history is full, the empty database's holds the few rows the run wrote);
//      and beside its p95 on the small history, whose pages hold what the history's hold (its
//      last days, at its rate): that ratio is what the months behind those pages cost
//      (docs/decisions/history.md, "Against a small history"); the goal's line, each path
//      against its reference (referenceOf, goalOf); the paths whose interval holds 1.5 measured
//      a second time with more calls (--again-runs) and judged on those calls;
//   6. what each side's system process and database did, 30 s with no call and then while its
//      paths were measured: their CPU, the database's commits, the blocks it found in its
//      shared buffers and those it read from outside them, the time it waited for those, rows
//      read and written (activityOf); and what the machine's disks read meanwhile.
// With BENCH_PG_LOG naming PostgreSQL's server log (default Debian's), every statement of the
// benchmark's database slower than --explain-ms (default 20 ms) while the paths are measured has
// its plan, `explain (analyze, buffers)`, logged by auto_explain and copied to
// .cache/history-explain-<size>.txt, slowest first (auto_explain is loaded for both databases).
//
//   npm run bench:history -- --operations 1000000 --messages 1000000 [--days 100]
//
// Options: --operations (100,000), --messages (as many as operations), --days (100), --runs
// per path and database (20), --again-runs (3 × runs: the second measurement's calls of each path the run
// cannot place, on each database; 0 for none), --small-days (16: the small history is the history's last days at
// its rate, built when that is 10,000 operations or more; 0 for none), --explain-ms (20),
// --migrate-under-load (before the paths are measured: the
// migrations' concurrent indexes dropped and built again while creates run, then the transactional
// migrations of this history's issue reverted and run again by openDatabase while creates run, each
// one's duration, locks and the creates meanwhile printed: history-migrate.ts), --max-ratio (exit 1
// when a path's ratio is above it; none by default), --keep-db. Databases: fresh history_bench_* ones on
// BENCH_DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), dropped at
// the end (the history's kept with --keep-db). With BENCH_HISTORY_DUMP=1, after the paths: `pg_dump -Fc -Z 1` of the
// history and `pg_restore -j 2` into a new database, both timed (the source dropped first when
// the disk cannot hold both; the restore is dropped at the end). Before anything is written the history's size is estimated (5.2 kB
// an operation, and 1 kB a message for the two copies its balances are chained through) and the run
// refused if PostgreSQL's disk would keep less than 10 GB free.
// The last line is the figures as JSON (bench:smoke reads it).
import { execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { existsSync, mkdirSync, openSync, readSync, statSync, closeSync, writeFileSync } from "node:fs";
import { loadavg } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parseArgs } from "node:util";
import pg from "pg";
import { depositConfirmation } from "../../services/evidence/src/domain/sms-templates.ts";
import { addHandset } from "./fleet.ts";
import { buildFleet, buildHistory } from "./history-build.ts";
import { checkDiskRoom, estimateHistoryBytes, FREE_FLOOR_BYTES, serverFreeBytes } from "./history-load.ts";
import { rebuildIndexesUnderLoad, rerunMigrationsUnderLoad, type MigrateContext } from "./history-migrate.ts";
import {
  call,
  closeConnections,
  goalOf,
  type Figure,
  percentile,
  percentileRatioInterval,
  referenceOf,
  saturate,
  startChild,
} from "./http.ts";
import { cpuTicks, diskSectorsRead, statsReported } from "./proc.ts";

const { values: flags } = parseArgs({
  options: {
    operations: { type: "string" },
    messages: { type: "string" },
    days: { type: "string" },
    runs: { type: "string" },
    "explain-ms": { type: "string" },
    "max-ratio": { type: "string" },
    "keep-db": { type: "boolean", default: false },
    "migrate-under-load": { type: "boolean", default: false },
    "small-days": { type: "string" },
    "again-runs": { type: "string" },
  },
});
const OPERATIONS = Number(flags.operations ?? 100_000);
const MESSAGES = Number(flags.messages ?? OPERATIONS);
const DAYS = Number(flags.days ?? 100);
const RUNS = Number(flags.runs ?? 20);
const EXPLAIN_MS = Number(flags["explain-ms"] ?? 20);
/** The calls of each path the run cannot place, measured a second time on each side (0: none). */
const AGAIN_RUNS = Number(flags["again-runs"] ?? 3 * RUNS);
const MAX_RATIO = flags["max-ratio"] ? Number(flags["max-ratio"]) : undefined;
/** The window before the paths in which no call is made (activityOf). */
const IDLE_S = 30;
/**
 * The small history: the history's last SMALL_DAYS days at the history's rate, built by the same
 * builder for the same fleet, so that each path's page holds what the history's holds (a day's
 * balance chain, an agent's queue, yesterday's operations, a closed day 14 days back) with no
 * months behind it. Measured beside the two others when it holds at least 10,000 operations.
 * `--small-days 0` leaves it out. It is the goal's reference for a page the empty database cannot
 * fill (`referenceOf`).
 */
const SMALL_DAYS = Number(flags["small-days"] ?? 16);
if (!(Number.isInteger(SMALL_DAYS) && SMALL_DAYS >= 0 && SMALL_DAYS < DAYS))
  throw new Error(`--small-days ${SMALL_DAYS}: 0, or a whole number of days fewer than --days`);
const SMALL_AT_RATE = Math.round((OPERATIONS * SMALL_DAYS) / DAYS);
const SMALL = SMALL_AT_RATE >= 10_000 ? SMALL_AT_RATE : 0;
const SMALL_MESSAGES = Math.round((MESSAGES * SMALL) / OPERATIONS);
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const PG_LOG = process.env.BENCH_PG_LOG ?? "/var/log/postgresql/postgresql-15-main.log";
const API_KEY = `bench-${randomBytes(8).toString("hex")}`;
const BOOTSTRAP = `bench-${randomBytes(8).toString("hex")}`;
const HANDSETS = 4;
const PIN = "52918374";
const START_BALANCE = 1_000_000_000;
const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const log = (s: string) => process.stdout.write(`${s}\n`);

interface Fixture {
  base: string;
  key: Record<string, string>;
  admin: Record<string, string>;
  agent: Record<string, string>;
  agentId: string;
  /** An agent granted one SIM that has no traffic (a SIM just granted, a handset off for weeks). */
  quiet: Record<string, string>;
  bearerKey: Record<string, string>;
  devices: { token: string; deviceId: string; simId: string; msisdn: string; balance: number }[];
}

/** An agent created by the admin, granted deposits on `simIds`, signed in. */
async function grantedAgent(
  base: string,
  admin: Record<string, string>,
  login: string,
  fullName: string,
  simIds: string[],
): Promise<{ agentId: string; session: Record<string, string> }> {
  const made = await call(base, "POST", "/v1/agents/admin", admin, {
    login,
    full_name: fullName,
    password: "bench-password-1",
  });
  ok(`agent ${login}`, made, [201]);
  const agentId: string = made.body.agent_id;
  await call(base, "PATCH", `/v1/admin/agents/${agentId}/access`, admin, {
    allowed_sim_ids: simIds,
    allowed_op_types: ["deposit"],
    max_amount: 500_000,
  });
  const signedIn = await call(base, "POST", "/v1/agents/login", {}, { login, password: "bench-password-1" });
  return { agentId, session: { authorization: `Bearer ${signedIn.body.token}` } };
}

async function fixtures(base: string): Promise<Fixture> {
  const key = { "x-api-key": API_KEY };
  await call(
    base,
    "POST",
    "/v1/agents/bootstrap",
    { "x-bootstrap-token": BOOTSTRAP },
    {
      login: "bench",
      full_name: "Bench Admin",
      password: "bench-password-1",
    },
  );
  const login = await call(base, "POST", "/v1/agents/login", {}, { login: "bench", password: "bench-password-1" });
  const admin = { authorization: `Bearer ${login.body.token}` };
  const devices: Fixture["devices"] = [];
  for (let i = 0; i < HANDSETS; i++) {
    const msisdn = `69${String(3_000_000 + i).padStart(7, "0")}`;
    const handset = await addHandset(
      base,
      admin,
      { label: `history ${i}`, msisdn, pin: PIN },
      { key, amount: START_BALANCE },
    );
    devices.push({ ...handset, balance: START_BALANCE });
  }
  const agent = await grantedAgent(
    base,
    admin,
    "bench-agent",
    "Bench Agent",
    devices.map((d) => d.simId),
  );
  // The quiet agent's SIM: on a handset of its own, outside the history's fleet (no traffic).
  const quietSim = await addHandset(base, admin, {
    label: "history quiet",
    msisdn: `69${String(3_000_000 + HANDSETS).padStart(7, "0")}`,
    pin: PIN,
  });
  const quiet = await grantedAgent(base, admin, "bench-quiet", "Bench Quiet Agent", [quietSim.simId]);
  return {
    base,
    key,
    admin,
    agent: agent.session,
    agentId: agent.agentId,
    quiet: quiet.session,
    bearerKey: { authorization: `Bearer ${API_KEY}` },
    devices,
  };
}

type Samples = Map<string, number[]>;

/** One database and the system on it: the empty one, the small history's, or the history's. */
interface Side {
  label: "empty" | "small" | "history";
  dbName: string;
  url: URL;
  check: pg.Client;
  system: { child: ChildProcess; line: any };
  f: Fixture;
  /** Distinct amounts and request ids between the two databases' transfers. */
  phase: number;
  samples: Samples;
  /** Each read's page (the rows of its answer, where it is a list), at its last call. */
  rows: Map<string, number>;
  created: string[];
}

/** The local day (UTC+1) of an instant, YYYY-MM-DD. */
const localDay = (at: Date) => new Date(at.getTime() + 3_600_000).toISOString().slice(0, 10);

const add = (s: Samples, name: string, ms: number) => s.set(name, [...(s.get(name) ?? []), ms]);
const ok = (what: string, r: { status: number; body: unknown }, expected: number[] = [200]) => {
  if (!expected.includes(r.status)) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.body).slice(0, 300)}`);
};

/** The rows of an answer: a list's length, or its first list field's; undefined for a single object. */
function rowsOf(body: unknown): number | undefined {
  if (Array.isArray(body)) return body.length;
  if (body && typeof body === "object") for (const v of Object.values(body)) if (Array.isArray(v)) return v.length;
  return undefined;
}

/** The write paths, timed by `transfer` in this order. */
const TRANSFER_PATHS = ["create (all gates)", "poll and claim", "outcome", "SMS to confirmation"];

/**
 * One transfer end to end on a side, each step timed into `into` (`i` from -2: the two
 * unmeasured calls; each transfer of a side its own `i`). `side.phase` keeps amounts and
 * request ids apart between the databases.
 */
async function transfer(side: Side, i: number, into: Samples = side.samples): Promise<void> {
  const { f, check, phase } = side;
  // A distinct amount and recipient each: the SMS proves exactly one operation.
  const montant = 1000 + phase * 10_000 + (i + 2) * 25;
  const dest = `69${String(5_000_000 + phase * 1000 + i + 2).padStart(7, "0")}`;
  // By the agent at the board: its grant's SIMs are the benchmark's.
  const c = await call(f.base, "POST", "/v1/operations", f.agent, {
    request_id: `bench-${randomUUID()}`,
    operator: "operator_b",
    montant,
    client: { msisdn: dest, nom: "Bench" },
  });
  ok("create", c, [202]);
  // Selection picked the SIM: its handset polls.
  const placed = await check.query(`select sim_id from dispatch.operations where operation_id = $1`, [
    c.body.operation_id,
  ]);
  const d = f.devices.find((x) => x.simId === placed.rows[0]?.sim_id);
  if (!d) throw new Error(`the operation went to no SIM of the benchmark: ${JSON.stringify(placed.rows)}`);
  const headers = { authorization: `Bearer ${d.token}` };
  const next = await call(f.base, "GET", "/v1/device/next", headers);
  ok("poll", next);
  if (next.body.operation_id !== c.body.operation_id) throw new Error("the poll claimed another operation");
  const outcome = await call(f.base, "POST", "/v1/device/outcome", headers, {
    operation_id: next.body.operation_id,
    outcome: "ussd_ok",
    ussd_response: "Transaction en cours",
    executed_at: new Date().toISOString(),
  });
  ok("outcome", outcome, [200, 204]);
  d.balance -= montant;
  const at = new Date();
  const raw = depositConfirmation("operator_b", {
    amount: montant,
    fee: 0,
    balanceAfter: d.balance,
    ref: `CI${localDay(at).slice(2).replace(/-/g, "")}.${String(Math.floor(Math.random() * 9000) + 1000)}.B${String(phase * 1000 + i + 2).padStart(5, "0")}`,
    msisdn: dest,
    name: "AMINA NGONO",
    at,
    language: "fr",
    commission: 0,
  });
  const sent = performance.now();
  const sms = await call(f.base, "POST", "/v1/device/messages", headers, {
    sim_id: d.simId,
    subscription_slot: 0,
    messages: [
      {
        sender: "OrangeMoney",
        raw,
        received_at: at.toISOString(),
        device_received_at: at.toISOString(),
        client_message_id: randomUUID(),
      },
    ],
  });
  ok("SMS", sms, [200, 202]);
  for (let waited = 0; ; waited++) {
    const s = await check.query(`select status from dispatch.operations where operation_id = $1`, [
      c.body.operation_id,
    ]);
    if (s.rows[0]?.status === "confirmed") break;
    if (waited > 2000)
      throw new Error(`operation not confirmed by its SMS: ${s.rows[0]?.status}; ${JSON.stringify(sms.body)}`);
    await new Promise((res) => setTimeout(res, 2));
  }
  const confirmedMs = performance.now() - sent;
  side.created.push(c.body.operation_id);
  if (i < 0) return;
  const times = [c.ms, next.ms, outcome.ms, confirmedMs];
  TRANSFER_PATHS.forEach((name, k) => add(into, name, times[k]));
}

type Read = [string, Record<string, string>, string | ((i: number) => string)];

/** The reads of a side, each a url or one a call (`i` from -2, the two unmeasured calls, to RUNS - 1). */
function readsOf(side: Side, historyOp: string | undefined): Read[] {
  const { f } = side;
  const sim = f.devices[0].simId;
  const yesterday = localDay(new Date(Date.now() - 86_400_000));
  const today = localDay(new Date());
  const days = side.label === "small" ? SMALL_DAYS : DAYS;
  return [
    ["unmatched queue", f.admin, "/v1/evidences?unmatched=true"],
    ["movements", f.admin, "/v1/evidences/movements"],
    ["arbitration queue (unproven)", f.admin, "/v1/operations/unproven"],
    ["settled on word", f.admin, "/v1/operations/settled-on-word"],
    // The same queues in an agent's scope: the SIMs of its grant (4 of the history's 100).
    ["unmatched queue, agent's SIMs", f.agent, "/v1/evidences?unmatched=true"],
    ["movements, agent's SIMs", f.agent, "/v1/evidences/movements"],
    ["arbitration queue, agent's scope", f.agent, "/v1/operations/unproven"],
    // An agent whose one SIM has no traffic, over the whole history (`all`): read SIM by SIM,
    // nothing to walk (Migration0015ScopedQueues, dispatch Migration0016ScopedQueues); walking
    // the fleet's entries for its grant read every entry of the history.
    ["unmatched queue, a quiet agent (all)", f.quiet, "/v1/evidences?unmatched=true&all=true"],
    ["movements, a quiet agent (all)", f.quiet, "/v1/evidences/movements?all=true"],
    ["arbitration queue, a quiet agent (all)", f.quiet, "/v1/operations/unproven?all=true"],
    ["operations, no filter", f.admin, "/v1/operations"],
    ["operations, agent's own scope", f.agent, "/v1/operations"],
    ["operations ?status=confirmed", f.admin, "/v1/operations?status=confirmed"],
    ["operations ?status=no_evidence", f.admin, "/v1/operations?status=no_evidence"],
    // A status a handful of operations are in (none in the history): from its own index
    // (dispatch Migration0014LookupIndexes), not a walk of the whole history.
    ["operations ?status=awaiting_manual_dial", f.admin, "/v1/operations?status=awaiting_manual_dial"],
    ["operations ?sim_id", f.admin, `/v1/operations?sim_id=${sim}`],
    ["operations ?agent_id", f.admin, `/v1/operations?agent_id=${f.agentId}`],
    ["operations ?date (yesterday)", f.admin, `/v1/operations?date=${yesterday}`],
    [
      "operations ?date_from&date_to (30 days)",
      f.admin,
      `/v1/operations?date_from=${localDay(new Date(Date.now() - 30 * 86_400_000))}&date_to=${yesterday}`,
    ],
    ["operations ?search=name", f.admin, "/v1/operations?search=ngono"],
    ["operations ?search=digits", f.admin, "/v1/operations?search=5000001"],
    ["operations ?search=none", f.admin, "/v1/operations?search=zzqx"],
    ["operation detail (new)", f.admin, `/v1/operations/${side.created.at(-1)}`],
    ...(historyOp ? ([["operation detail (history)", f.admin, `/v1/operations/${historyOp}`]] as Read[]) : []),
    ["SIM history", f.admin, `/v1/sims/${sim}/history`],
    ["reconciliation, fleet day", f.admin, `/v1/reconciliations/daily?day=${yesterday}`],
    // Today, still open, as much of the day as has passed when the benchmark runs: its sums kept
    // up to a time and completed from the messages since (Migration0016TodayRuns), by each call
    // and each pass of the day keeper (a pass a second here, every 5 minutes by default).
    ["reconciliation, fleet day (today)", f.admin, `/v1/reconciliations/daily?day=${today}`],
    // Older closed days, each call another (14 days back and before, within the side's days,
    // again from 14 when the runs outnumber them; the small history's 16 days hold one, day 14):
    // kept by the day keeper (flows/day-keeper.ts) since they closed, read from a row a SIM, from
    // pages no call read yet.
    [
      "reconciliation, fleet day (older days)",
      f.admin,
      (i) =>
        `/v1/reconciliations/daily?day=${localDay(new Date(Date.now() - (14 + ((i + 2) % Math.max(1, days - 16))) * 86_400_000))}`,
    ],
    ["reconciliation, SIM day", f.admin, `/v1/reconciliations/daily/${sim}?day=${yesterday}`],
    ["balance chain, SIM day", f.admin, `/v1/reconciliations/daily/${sim}/chain?day=${yesterday}`],
    ["analytics fleet 365 days", f.admin, "/v1/analytics?days=365"],
    ["analytics agent 365 days", f.agent, "/v1/analytics?days=365"],
    ["unproven by handset fleet 365 days", f.admin, "/v1/analytics/unproven-by-handset?days=365"],
    ["unproven by handset agent 365 days", f.agent, "/v1/analytics/unproven-by-handset?days=365"],
    ["audit log page", f.admin, "/v1/audit"],
    // The filters (Migration0007AuditFilters): an action the history holds on one row in six, one
    // only the fixture wrote (a few rows), one absent; a prefix; the fixture agent as target and
    // as actor (a few rows among the history's).
    ["audit log ?action (common)", f.admin, "/v1/audit?action=agent.login"],
    ["audit log ?action (rare)", f.admin, "/v1/audit?action=sim.create"],
    ["audit log ?action (absent)", f.admin, "/v1/audit?action=zzqx.none"],
    ["audit log ?action=sim.*", f.admin, "/v1/audit?action=sim.*"],
    ["audit log ?target", f.admin, `/v1/audit?target=${f.agentId}`],
    ["audit log ?actor", f.admin, `/v1/audit?actor=${f.agentId}`],
    ["audit log ?action&actor", f.admin, `/v1/audit?action=agent.login&actor=${f.agentId}`],
    ["notifications", f.admin, "/v1/admin/notifications"],
    ["fleet health", f.admin, "/v1/admin/health"],
    ["contact search, phone prefix", f.bearerKey, "/v1/contacts?search=%2B23767000012&limit=20"],
    ["contact search, name", f.bearerKey, "/v1/contacts?search=clarisse&limit=20"],
    // A name no contact bears: the page cannot fill from the first rows of the seq order.
    ["contact search, name matching nothing", f.bearerKey, "/v1/contacts?search=zzqx&limit=20"],
  ];
}

/**
 * The databases measured together, their calls alternated: RUNS transfers on each (one on
 * each in turn, the first side changing each time), then RUNS rounds of every read
 * (measureReads). `historyOps`: an operation of each built history.
 */
async function measureAll(sides: Side[], historyOps: Map<Side, string | undefined>): Promise<void> {
  for (let i = -2; i < RUNS; i++) for (const side of turn(sides, i)) await transfer(side, i);
  const reads = new Map(sides.map((s) => [s, readsOf(s, historyOps.get(s))]));
  await measureReads(sides, reads, RUNS, (s) => s.samples);
}

/** The sides in turn `k`: each turn starts one side further. */
const turn = (sides: Side[], k: number): Side[] =>
  sides.map((_, j) => sides[(((j + k) % sides.length) + sides.length) % sides.length]);

/**
 * `runs` rounds of every read, each read called on every side in turn, after two rounds not
 * counted: whatever the machine does meanwhile (a vacuum, the day keeper's pass, another
 * process) falls on every side and on every path alike, not on one path's consecutive calls
 * on one side. Each call's time goes to `into(side)`.
 */
async function measureReads(
  sides: Side[],
  reads: Map<Side, Read[]>,
  runs: number,
  into: (side: Side) => Samples,
): Promise<void> {
  // A read past the gateway's deadline (503 outcome_unknown) is a figure, not the end of the
  // run: its time counts (the caller waited that long), and after two in a row the path is
  // left on that side, said in the output.
  const late = new Map<string, number>();
  const names = reads.get(sides.at(-1)!)!.map(([name]) => name);
  for (let i = -2; i < runs; i++) {
    for (const [k, name] of names.entries()) {
      for (const side of turn(sides, i + k)) {
        const read = reads.get(side)!.find(([n]) => n === name);
        const key = `${side.label} ${name}`;
        if (!read || (late.get(key) ?? 0) >= 2) continue;
        const [, headers, url] = read;
        const r = await call(side.f.base, "GET", typeof url === "string" ? url : url(i), headers);
        if (r.status === 503) {
          late.set(key, (late.get(key) ?? 0) + 1);
          log(
            `  ${key}: 503 past the gateway's deadline after ${r.ms.toFixed(0)} ms${late.get(key) === 2 ? "; path left" : ""}`,
          );
          add(into(side), name, r.ms);
          continue;
        }
        late.set(key, 0);
        ok(`${key}`, r);
        const rows = rowsOf(r.body);
        if (rows !== undefined) side.rows.set(name, rows);
        if (i >= 0) add(into(side), name, r.ms);
      }
    }
  }
}

const p50 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    50,
  );
const p95 = (xs: number[]) =>
  percentile(
    [...xs].sort((a, b) => a - b),
    95,
  );

const round = (x: number) => Number(x.toFixed(2));

/**
 * A path's figures from its calls on the history (`xs`), the empty database (`before`) and the
 * small history (`smaller`), and its rows on each (empty, small, history).
 */
function figureOf(xs: number[], before: number[], smaller: number[] | undefined, rows: (number | undefined)[]): Figure {
  const h = p95(xs);
  return {
    empty_p95_ms: round(p95(before)),
    history_p95_ms: round(h),
    ratio: round(h / p95(before)),
    ratio_interval: percentileRatioInterval(xs, before, 95).map(round) as [number, number],
    empty_p50_ms: round(p50(before)),
    history_p50_ms: round(p50(xs)),
    ...(rows[0] !== undefined ? { empty_rows: rows[0] } : {}),
    ...(rows[2] !== undefined ? { history_rows: rows[2] } : {}),
    ...(smaller
      ? {
          small_p95_ms: round(p95(smaller)),
          small_p50_ms: round(p50(smaller)),
          ratio_to_small: round(h / p95(smaller)),
          ratio_to_small_interval: percentileRatioInterval(xs, smaller, 95).map(round) as [number, number],
        }
      : {}),
    ...(rows[1] !== undefined ? { small_rows: rows[1] } : {}),
    reference: referenceOf(rows),
  };
}

/** The plans auto_explain wrote for the benchmark's database since `from`, slowest first. */
function plansSince(file: string, from: number, dbName: string): { ms: number; text: string }[] {
  const size = statSync(file).size;
  const fd = openSync(file, "r");
  const buf = Buffer.alloc(Math.max(0, size - from));
  readSync(fd, buf, 0, buf.length, from);
  closeSync(fd);
  const plans: { ms: number; text: string }[] = [];
  let current: { ms: number; lines: string[] } | undefined;
  const flush = () => {
    if (current) plans.push({ ms: current.ms, text: current.lines.join("\n") });
    current = undefined;
  };
  for (const line of buf.toString("utf8").split("\n")) {
    const head = /^\d{4}-\d\d-\d\d [\d:.]+ \w+ \[\d+\] (\S*)@(\S*) LOG:\s+duration: ([\d.]+) ms\s+plan:/.exec(line);
    if (head) {
      flush();
      if (head[2] === dbName) current = { ms: Number(head[3]), lines: [line] };
    } else if (/^\d{4}-\d\d-\d\d /.test(line)) flush();
    else if (current) current.lines.push(line);
  }
  flush();
  return plans.sort((a, b) => b.ms - a.ms);
}

/**
 * `--migrate-under-load` (history-migrate.ts): the concurrent indexes built again, then the
 * transactional migrations of MIGRATIONS_OF_THIS_ISSUE reverted and run again, while the agent's
 * creates (each cancelled at once, so no queue builds up) run against the API.
 */
async function migrateUnderLoad(f: Fixture, dbUrl: string, check: pg.Client): Promise<void> {
  const ctx: MigrateContext = {
    dbUrl,
    check,
    log,
    create: async () => {
      const c = await call(f.base, "POST", "/v1/operations", f.agent, {
        request_id: `bench-load-${randomUUID()}`,
        operator: "operator_b",
        montant: 100,
        client: { msisdn: "690000002", nom: "Load" },
      });
      if (c.status === 202) await call(f.base, "POST", `/v1/operations/${c.body.operation_id}/cancel`, f.admin, {});
      return { status: c.status, ms: c.ms, id: c.body?.operation_id };
    },
  };
  await rebuildIndexesUnderLoad(ctx);
  await rerunMigrationsUnderLoad(ctx);
}

/** The history's closed SIM days the day keeper has not kept yet (evidence flows/day-keeper.ts). */
const unkeptSimDays = async (check: pg.Client) =>
  Number(
    (
      await check.query(
        `select count(*) as n from evidence.day_chains where balance_changes is distinct from changes and day < $1::date`,
        [localDay(new Date())],
      )
    ).rows[0].n,
  );

/**
 * Waits until the day keeper has kept every closed day of the history. The build leaves each
 * SIM day a row and nothing kept, as on a history Migration0013UnkeptDays found; a system that
 * ran through those months kept each day after it closed. The keeper starts on them as soon as
 * the build writes them (`builtAt`, `left` then).
 */
async function waitForKeptDays(side: Side, builtAt: number, left: number): Promise<void> {
  const { check } = side;
  for (let n = await unkeptSimDays(check); n > 0; n = await unkeptSimDays(check)) {
    if (performance.now() - builtAt > 3_600_000)
      throw new Error(`the day keeper left ${n} SIM days unkept after an hour`);
    await new Promise((res) => setTimeout(res, 500));
  }
  log(
    `${side.label === "small" ? "the small history" : "the history"}'s closed days kept by the day keeper: ${left.toLocaleString("en")} SIM days, all kept ${((performance.now() - builtAt) / 1000).toFixed(1)} s after the build`,
  );
}

/**
 * What a side's system and database have done so far, counters to difference over a window:
 * the CPU of the system's process and of the database's backends (ticks of 10 ms; a backend
 * that ends within the window loses its ticks), and the database's statistics. `blocksRead`:
 * the blocks its backends asked of the operating system (its page cache or the disk), not
 * found in PostgreSQL's shared buffers; `readMs`: the time they waited for them
 * (track_io_timing, on for the benchmark's databases).
 */
interface Activity {
  nodeTicks: number;
  pgTicks: Map<number, number>;
  commits: number;
  blocksHit: number;
  blocksRead: number;
  readMs: number;
  rowsRead: number;
  rowsWritten: number;
}

async function activityOf(side: Side): Promise<Activity> {
  const backends = await side.check.query(`select pid from pg_stat_activity where datname = current_database()`);
  const s = (
    await side.check.query(
      `select xact_commit + xact_rollback as commits, blks_hit, blks_read, blk_read_time,
              tup_returned + tup_fetched as rows_read, tup_inserted + tup_updated + tup_deleted as rows_written
       from pg_stat_database where datname = current_database()`,
    )
  ).rows[0];
  return {
    nodeTicks: cpuTicks(side.system.child.pid!),
    pgTicks: new Map((backends.rows as { pid: number }[]).map((r) => [r.pid, cpuTicks(r.pid)])),
    commits: Number(s.commits),
    blocksHit: Number(s.blks_hit),
    blocksRead: Number(s.blks_read),
    readMs: Number(s.blk_read_time),
    rowsRead: Number(s.rows_read),
    rowsWritten: Number(s.rows_written),
  };
}

/** Between two readings: CPU in ms, the rest as counted. */
function activityBetween(a: Activity, b: Activity) {
  let pgTicks = 0;
  for (const [pid, t] of b.pgTicks) pgTicks += t - (a.pgTicks.get(pid) ?? 0);
  return {
    node_cpu_ms: (b.nodeTicks - a.nodeTicks) * 10,
    postgres_cpu_ms: pgTicks * 10,
    commits: b.commits - a.commits,
    blocks_hit: b.blocksHit - a.blocksHit,
    blocks_read: b.blocksRead - a.blocksRead,
    read_ms: Math.round(b.readMs - a.readMs),
    rows_read: b.rowsRead - a.rowsRead,
    rows_written: b.rowsWritten - a.rowsWritten,
  };
}

/**
 * What a page's rows cost on the history, apart from the history: three lists read with
 * `limit=1` and with their default page (50 rows), the calls alternated, RUNS each. The
 * difference is what the empty database's pages (a few rows, or none) do not pay.
 */
async function pageCost(
  side: Side,
): Promise<Record<string, { one_row_p50_ms: number; page_p50_ms: number; rows: number }>> {
  const { f } = side;
  const lists: [string, string, string][] = [
    ["operations, no filter", "/v1/operations?limit=1", "/v1/operations"],
    ["unmatched queue", "/v1/evidences?unmatched=true&limit=1", "/v1/evidences?unmatched=true"],
    ["audit log page", "/v1/audit?limit=1", "/v1/audit"],
  ];
  const out: Record<string, { one_row_p50_ms: number; page_p50_ms: number; rows: number }> = {};
  log(
    `\n${"a page's rows on the history (p50)".padEnd(44)} ${"1 row".padStart(10)} ${"page".padStart(12)} ${"rows".padStart(7)} ${"a row".padStart(9)}`,
  );
  for (const [name, one, page] of lists) {
    const ones: number[] = [];
    const pages: number[] = [];
    let rows = 0;
    for (let i = -2; i < RUNS; i++) {
      for (const url of i % 2 === 0 ? [one, page] : [page, one]) {
        const r = await call(f.base, "GET", url, f.admin);
        ok(`${name} ${url}`, r);
        if (i < 0) continue;
        if (url === one) ones.push(r.ms);
        else {
          pages.push(r.ms);
          rows = rowsOf(r.body) ?? 0;
        }
      }
    }
    const a = p50(ones);
    const b = p50(pages);
    out[name] = { one_row_p50_ms: Number(a.toFixed(2)), page_p50_ms: Number(b.toFixed(2)), rows };
    log(
      `${name.padEnd(44)} ${`${a.toFixed(1)} ms`.padStart(10)} ${`${b.toFixed(1)} ms`.padStart(12)} ${String(rows).padStart(7)} ${rows > 1 ? `${(((b - a) / (rows - 1)) * 1000).toFixed(0)} µs`.padStart(9) : "-".padStart(9)}`,
    );
  }
  return out;
}

/**
 * A side: a fresh database (auto_explain where it can log), the system on it (one process,
 * BENCH_TOPOLOGY=single), the benchmark's admin, agent, handsets and SIMs through the API, and
 * the history's fleet (100 SIMs, 51 agents) written around them.
 */
async function startSide(
  admin: pg.Client,
  label: Side["label"],
  phase: number,
  explaining: boolean,
  historyEnd: Date,
  children: ChildProcess[],
  databases: string[],
): Promise<Side> {
  const dbName = `history_bench_${randomBytes(4).toString("hex")}`;
  await admin.query(`create database ${dbName}`);
  databases.push(dbName);
  // The time its backends wait for the blocks they read (activityOf): both sides alike.
  await admin.query(`alter database ${dbName} set track_io_timing = on`);
  if (explaining) {
    // Both sides pay auto_explain's instrumentation alike; only slow statements are logged.
    await admin.query(`alter database ${dbName} set session_preload_libraries = 'auto_explain'`);
    await admin.query(`alter database ${dbName} set auto_explain.log_min_duration = ${EXPLAIN_MS}`);
    await admin.query(`alter database ${dbName} set auto_explain.log_analyze = on`);
    await admin.query(`alter database ${dbName} set auto_explain.log_buffers = on`);
  }
  const url = new URL(ADMIN_DB);
  url.pathname = `/${dbName}`;
  const check = new pg.Client({ connectionString: url.toString() });
  // Dropping the database at the end ends its connections: expected, not a failure.
  check.on("error", () => undefined);
  const system = await startChild("system.ts", {
    BENCH_TOPOLOGY: "single",
    NODE_ENV: "development",
    LOG_LEVEL: "warn",
    DATABASE_URL: url.toString(),
    API_KEYS: API_KEY,
    BOOTSTRAP_TOKEN: BOOTSTRAP,
    RATE_LIMIT_RPS: "1000000",
    RATE_LIMIT_BURST: "1000000",
    DEVICE_COOLDOWN_S: "0",
    // The history's closed days are kept by the day keeper before the history's paths are
    // measured, as a running system kept each day after it closed (waitForKeptDays); a pass a
    // second rather than every 5 minutes, so that takes the summing's time, not the interval's.
    EVIDENCE_DAY_KEEP_INTERVAL_MS: "1000",
  });
  children.push(system.child);
  const f = await fixtures(system.line.gatewayUrl);
  await check.connect();
  // Fleet's view of the new agent and SIMs reaches dispatch asynchronously: wait for it.
  for (const until = performance.now() + 60_000; ;) {
    const probe = await call(f.base, "POST", "/v1/operations", f.agent, {
      request_id: `bench-probe-${randomUUID()}`,
      operator: "operator_b",
      montant: 1,
      client: { msisdn: "690000001", nom: "Probe" },
    });
    if (probe.status === 202) {
      // Its queued operation would be claimed by a measured poll: cancelled.
      const cancel = await call(f.base, "POST", `/v1/operations/${probe.body.operation_id}/cancel`, f.admin, {});
      if (cancel.status !== 200)
        throw new Error(`probe not cancelled: ${cancel.status} ${JSON.stringify(cancel.body)}`);
      break;
    }
    if (performance.now() > until)
      throw new Error(`creation never succeeded: ${probe.status} ${JSON.stringify(probe.body)}`);
    await new Promise((res) => setTimeout(res, 500));
  }
  const fleetMs = await buildFleet(check, {
    end: historyEnd,
    sims: f.devices.map((d) => ({ simId: d.simId, deviceId: d.deviceId, msisdn: d.msisdn })),
    agentId: f.agentId,
  });
  log(
    `${label} database ${dbName}: the history's fleet (100 SIMs, 51 agents) written in ${(fleetMs / 1000).toFixed(1)} s`,
  );
  await check.query(`vacuum analyze`);
  return { label, dbName, url, check, system, f, phase, samples: new Map(), rows: new Map(), created: [] };
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const admin = new pg.Client({ connectionString: ADMIN_DB });
  await admin.connect();
  // Refused before anything is written when the history would fill PostgreSQL's disk.
  try {
    log(
      checkDiskRoom(
        OPERATIONS + SMALL,
        MESSAGES + SMALL_MESSAGES,
        await serverFreeBytes(admin, new URL(ADMIN_DB).hostname),
      ),
    );
  } catch (err) {
    await admin.end();
    throw err;
  }
  // auto_explain where the server has it and its log can be read here.
  const explaining =
    existsSync(PG_LOG) &&
    (await admin.query(`load 'auto_explain'`).then(
      () => true,
      () => false,
    ));
  const historyEnd = new Date(Date.now() - 60_000);
  const sides: Side[] = [];
  const databases: string[] = [];
  let checkEnded = false;
  try {
    const hello = await startChild("hello.ts", {});
    children.push(hello.child);
    const ref = await saturate(3, 64, () => call(hello.line.url, "GET", "/"));
    hello.child.kill("SIGTERM");
    log(
      `reference: express hello-world ${ref.rps.toFixed(0)} req/s (p50 ${ref.p50.toFixed(2)} ms, p99 ${ref.p99.toFixed(2)} ms)`,
    );

    const empty = await startSide(admin, "empty", 1, explaining, historyEnd, children, databases);
    sides.push(empty);
    const small = SMALL ? await startSide(admin, "small", 3, explaining, historyEnd, children, databases) : undefined;
    if (small) sides.push(small);
    const hist = await startSide(admin, "history", 2, explaining, historyEnd, children, databases);
    sides.push(hist);
    const { check, f, url, dbName, system } = hist;
    const emptySize = Number((await empty.check.query(`select pg_database_size(current_database()) as n`)).rows[0].n);
    const sizeOf = (side: Side, operations: number, messages: number, days: number) => ({
      operations,
      messages,
      days,
      end: historyEnd,
      sims: side.f.devices.map((d) => ({ simId: d.simId, deviceId: d.deviceId, msisdn: d.msisdn })),
      agentId: side.f.agentId,
    });
    // The small history first (a minute at 300,000 operations), built as the history is; its
    // closed days kept by its own system's keeper meanwhile.
    let smallUnkept = 0;
    let smallBuiltAt = 0;
    if (small) {
      log(
        `\nbuilding the small history: ${SMALL.toLocaleString("en")} operations, ${SMALL_MESSAGES.toLocaleString("en")} messages over the last ${SMALL_DAYS} days`,
      );
      const t = performance.now();
      await buildHistory(small.url.toString(), sizeOf(small, SMALL, SMALL_MESSAGES, SMALL_DAYS), () => undefined);
      smallBuiltAt = performance.now();
      smallUnkept = await unkeptSimDays(small.check);
      await small.check.query(`vacuum analyze`);
      const bytes = Number((await small.check.query(`select pg_database_size(current_database()) as n`)).rows[0].n);
      log(
        `small history built in ${((performance.now() - t) / 1000).toFixed(1)} s, ${(bytes / 1048576).toFixed(0)} MB`,
      );
    }

    log(
      `\nbuilding the history: ${OPERATIONS.toLocaleString("en")} operations, ${MESSAGES.toLocaleString("en")} messages over ${DAYS} days`,
    );
    const built = performance.now();
    const loadBefore = loadavg()[0];
    const { steps, indexes } = await buildHistory(url.toString(), sizeOf(hist, OPERATIONS, MESSAGES, DAYS), log);
    const buildS = (performance.now() - built) / 1000;
    const builtAt = performance.now();
    const unkept = await unkeptSimDays(check);
    const loadAfter = loadavg()[0];
    const vacuumed = performance.now();
    await check.query(`vacuum analyze`);
    const vacuumS = (performance.now() - vacuumed) / 1000;
    // Two connections write at once: the steps' seconds add up to more than the build's.
    for (const s of steps)
      log(
        `  ${s.step.padEnd(46)} ${s.rows.toLocaleString("en").padStart(12)} rows ${(s.ms / 1000).toFixed(1).padStart(7)} s`,
      );
    for (const x of indexes.sort((p, q) => q.s - p.s).slice(0, 8))
      log(`  index ${x.name.padEnd(40)} ${x.s.toFixed(1).padStart(7)} s`);
    const sizes = (
      await check.query(
        `select n.nspname || '.' || c.relname as name, pg_total_relation_size(c.oid) as bytes, c.reltuples::bigint as rows
         from pg_class c join pg_namespace n on n.oid = c.relnamespace
         where c.relkind = 'r' and n.nspname in ('dispatch','evidence','fleet','intake','analytics','messaging')
         order by 2 desc limit 12`,
      )
    ).rows as { name: string; bytes: string; rows: string }[];
    const dbSize = Number((await check.query(`select pg_database_size(current_database()) as n`)).rows[0].n);
    const mb = (b: number) => `${(b / 1048576).toFixed(0)} MB`;
    log(
      `history built in ${buildS.toFixed(1)} s (load average ${loadBefore.toFixed(1)} at its start, ${loadAfter.toFixed(1)} at its end), vacuum analyze ${vacuumS.toFixed(1)} s; database ${mb(dbSize)} (empty: ${mb(emptySize)}; estimated before the build: ${mb(emptySize + estimateHistoryBytes(OPERATIONS, MESSAGES))})`,
    );
    for (const s of sizes)
      log(
        `  ${s.name.padEnd(36)} ${mb(Number(s.bytes)).padStart(9)} ${Number(s.rows).toLocaleString("en").padStart(12)} rows`,
      );
    // An operation from the middle of each built history (its detail read).
    const middleOp = async (side: Side, operations: number) =>
      (
        await side.check.query(`select operation_id from dispatch.operations where request_id = 'history-' || $1`, [
          Math.floor(operations / 2),
        ])
      ).rows[0]?.operation_id as string | undefined;
    const historyOps = new Map<Side, string | undefined>([[hist, await middleOp(hist, OPERATIONS)]]);
    if (small) historyOps.set(small, await middleOp(small, SMALL));

    if (flags["migrate-under-load"]) await migrateUnderLoad(f, url.toString(), check);

    if (small) await waitForKeptDays(small, smallBuiltAt, smallUnkept);
    await waitForKeptDays(hist, builtAt, unkept);

    // What each side does on its own, no call made (its system's jobs, relays and sweeps), then
    // while its paths are measured: where a path is slower on the history on every call, even
    // one that answers nothing, this says whether its process or its database was busier
    // meanwhile, or its blocks came from outside PostgreSQL's memory.
    const reading = async () => new Map(await Promise.all(sides.map(async (s) => [s, await activityOf(s)] as const)));
    await statsReported();
    const idleFrom = await reading();
    await new Promise((res) => setTimeout(res, IDLE_S * 1000));
    const idleTo = await reading();
    const sectorsFrom = diskSectorsRead();
    let logFrom = 0;
    if (explaining) logFrom = statSync(PG_LOG).size;
    log(`\n${sides.length} databases, their calls alternated: ${RUNS} runs of each path on each`);
    await measureAll(sides, historyOps);
    const sectorsTo = diskSectorsRead();
    await statsReported();
    const measuredTo = await reading();
    const activity = Object.fromEntries(
      sides.map((s) => [
        s.label,
        {
          idle: activityBetween(idleFrom.get(s)!, idleTo.get(s)!),
          paths: activityBetween(idleTo.get(s)!, measuredTo.get(s)!),
        },
      ]),
    );
    const diskReadMb =
      sectorsFrom === undefined || sectorsTo === undefined ? undefined : ((sectorsTo - sectorsFrom) * 512) / 1048576;
    log(
      `\nwhat each side did, ${IDLE_S} s with no call, then while its paths were measured (CPU of its system's process and of its database's backends; blocks its database read outside its shared buffers, and the time it waited for them)`,
    );
    const n = (x: number) => x.toLocaleString("en").padStart(11);
    log(
      `${"".padEnd(8)} ${"idle: node".padStart(11)} ${"postgres".padStart(11)} ${"commits".padStart(11)} ${"blk read".padStart(11)}  ${"paths: node".padStart(11)} ${"postgres".padStart(11)} ${"commits".padStart(11)} ${"blk hit".padStart(11)} ${"blk read".padStart(11)} ${"read ms".padStart(11)} ${"rows read".padStart(11)} ${"written".padStart(11)}`,
    );
    for (const s of sides) {
      const { idle, paths } = activity[s.label];
      log(
        `${s.label.padEnd(8)} ${n(idle.node_cpu_ms)} ${n(idle.postgres_cpu_ms)} ${n(idle.commits)} ${n(idle.blocks_read)}  ${n(paths.node_cpu_ms)} ${n(paths.postgres_cpu_ms)} ${n(paths.commits)} ${n(paths.blocks_hit)} ${n(paths.blocks_read)} ${n(paths.read_ms)} ${n(paths.rows_read)} ${n(paths.rows_written)}`,
      );
    }
    if (diskReadMb !== undefined)
      log(`the machine's disks read ${diskReadMb.toFixed(0)} MB while the paths were measured (every process)`);

    // A list's rows on each side: a page of the history holds more rows than the empty
    // database has (50 against a few), which a path pays for per row, whatever the history's
    // size. The small history's pages hold what the history's hold: its ratio is what the
    // months behind them cost.
    const col = (x: string, w: number) => x.padStart(w);
    const ms = (x: number | undefined) => (x === undefined ? "-" : `${x.toFixed(1)} ms`);
    const span = (x: [number, number] | undefined) => (x ? `${x[0].toFixed(2)}-${x[1].toFixed(2)}` : "-");
    const header = () =>
      log(
        `\n${"path".padEnd(44)} ${col("empty p95", 10)} ${small ? col("small p95", 10) : ""}${col("history p95", 12)} ${col("ratio", 7)} ${col("90 %", 10)}${small ? `${col("to small", 9)} ${col("90 %", 10)}` : ""} ${col("rows", small ? 13 : 9)}${small ? col("goal", 6) : ""}`,
      );
    const line = (name: string, x: Figure) => {
      const rows = [x.empty_rows, x.small_rows, x.history_rows];
      const shownRows = rows[2] === undefined ? "-" : (small ? rows : [rows[0], rows[2]]).join("/");
      const toSmall = x.ratio_to_small;
      log(
        `${name.padEnd(44)} ${col(ms(x.empty_p95_ms), 10)} ${small ? col(ms(x.small_p95_ms), 10) : ""}${col(ms(x.history_p95_ms), 12)} ${col(x.ratio.toFixed(2), 7)} ${col(span(x.ratio_interval), 10)}${small ? `${col(toSmall?.toFixed(2) ?? "-", 9)} ${col(span(x.ratio_to_small_interval), 10)}` : ""} ${col(shownRows, small ? 13 : 9)}${small ? col(x.reference, 6) : ""}${x.ratio > 1.5 ? "  above 1.5" : ""}${toSmall !== undefined && toSmall > 1.5 ? " (to small)" : ""}`,
      );
    };
    header();
    const figures: Record<string, Figure> = {};
    for (const [name, xs] of hist.samples) {
      const before = empty.samples.get(name);
      const smaller = small?.samples.get(name);
      if (!before) {
        // An operation of the history has no counterpart on the empty database.
        const h = p95(xs);
        log(
          `${name.padEnd(44)} ${col("-", 10)} ${small ? col(ms(smaller && p95(smaller)), 10) : ""}${col(ms(h), 12)} ${col("-", 7)}${small ? col(smaller ? (h / p95(smaller)).toFixed(2) : "-", 9) : ""}`,
        );
        continue;
      }
      figures[name] = figureOf(xs, before, smaller, [empty.rows.get(name), small?.rows.get(name), hist.rows.get(name)]);
      line(name, figures[name]);
    }
    const worst = Math.max(0, ...Object.values(figures).map((x) => x.ratio));
    const worstToSmall = Math.max(0, ...Object.values(figures).map((x) => x.ratio_to_small ?? 0));
    // How many paths keep within the goal's 1.5, at p95 and at p50, against each side; and, at
    // p95, how many are above it beyond the run's doubt (the 90 % interval's low end above 1.5)
    // and how many the run cannot place (the interval holds 1.5).
    const counts = (goal: ReturnType<typeof goalOf>) =>
      `${goal.within} of ${goal.of} paths at p95 (${goal.above.length} above it beyond the run's doubt${goal.above.length ? `: ${goal.above.join(", ")}` : ""}, ${goal.undecided.length} the run cannot place${goal.undecided.length ? `: ${goal.undecided.join(", ")}` : ""}), ${goal.at_p50} at p50`;
    log(
      `\nwithin 1.5 of the empty database: ${counts(goalOf(figures, "empty"))}` +
        (small ? `\nwithin 1.5 of the small history: ${counts(goalOf(figures, "small"))}` : ""),
    );
    const goal = goalOf(figures);
    log(
      `\nthe goal, each path against the database without the months that answers its rows (the empty database; the small history where only it does): ${counts(goal)}` +
        (goal.outside.length ? `\nabove 1.5 of their reference at p95: ${goal.outside.join(", ")}` : ""),
    );
    // The paths the run cannot place, measured a second time with more calls (--again-runs),
    // on every side, their calls alternated as before, and judged on the second measurement's
    // calls alone: its interval is narrower, and a path is not judged on the calls that made it
    // doubtful. A path the second measurement cannot place either is said so, not counted
    // within (docs/decisions/history.md, "A path the run cannot place").
    let again: { runs: number; paths: Record<string, Figure>; goal: ReturnType<typeof goalOf> } | undefined;
    if (goal.undecided.length > 0 && AGAIN_RUNS > 0) {
      log(
        `\nthe ${goal.undecided.length} paths the run cannot place, measured again: ${AGAIN_RUNS} runs of each on each database, their calls alternated`,
      );
      const fresh = new Map(sides.map((s) => [s, new Map() as Samples]));
      // A write path again: transfers after the first measurement's (their own amounts and
      // numbers), one on each side in turn.
      if (goal.undecided.some((name) => TRANSFER_PATHS.includes(name)))
        for (let i = 0; i < AGAIN_RUNS; i++)
          for (const side of turn(sides, i)) await transfer(side, RUNS + i, fresh.get(side)!);
      const reads = new Map(
        sides.map((s) => [s, readsOf(s, historyOps.get(s)).filter(([name]) => goal.undecided.includes(name))]),
      );
      await measureReads(sides, reads, AGAIN_RUNS, (s) => fresh.get(s)!);
      header();
      const paths: Record<string, Figure> = {};
      for (const name of goal.undecided) {
        const xs = fresh.get(hist)!.get(name);
        const before = fresh.get(empty)!.get(name);
        if (!xs || !before) continue;
        paths[name] = figureOf(xs, before, small && fresh.get(small)!.get(name), [
          empty.rows.get(name),
          small?.rows.get(name),
          hist.rows.get(name),
        ]);
        line(name, paths[name]);
      }
      again = { runs: AGAIN_RUNS, paths, goal: goalOf({ ...figures, ...paths }) };
      log(`\nthe goal, each path the run could not place judged by its second measurement: ${counts(again.goal)}`);
    }
    const pages = await pageCost(hist);
    if (explaining) {
      const plans = plansSince(PG_LOG, logFrom, dbName);
      mkdirSync(path.join(root, ".cache"), { recursive: true });
      const file = path.join(root, ".cache", `history-explain-${OPERATIONS}.txt`);
      // The slowest run of each statement (told apart by its text), slowest first.
      const distinct = new Map<string, { ms: number; text: string }>();
      for (const p of plans) {
        const key = (/Query Text: ([\s\S]*?)\n\s+(?:->\s)?[A-Z][a-zA-Z ]+ {2}\(cost/.exec(p.text)?.[1] ?? p.text).slice(
          0,
          2000,
        );
        if (!distinct.has(key)) distinct.set(key, p);
      }
      const slowest = [...distinct.values()].slice(0, 40);
      writeFileSync(file, slowest.map((p) => p.text).join("\n\n"));
      log(
        `\n${plans.length} runs of ${distinct.size} statements of the history's database over ${EXPLAIN_MS} ms while the paths were measured; the slowest run of the ${slowest.length} slowest (explain analyze, buffers): ${file}`,
      );
    } else log(`\nno plans saved: ${PG_LOG} (BENCH_PG_LOG) does not exist`);
    if (process.env.BENCH_HISTORY_DUMP === "1") {
      const t = performance.now();
      const dump = `/tmp/${dbName}.dump`;
      execFileSync("pg_dump", ["-Fc", "-Z", "1", "-f", dump, url.toString()]);
      const dumpS = (performance.now() - t) / 1000;
      // A restore beside the source needs the database's size again: where the disk would keep
      // less than the floor, the source (already measured) is dropped first and the restore
      // stands in for it.
      const free = await serverFreeBytes(admin, new URL(ADMIN_DB).hostname);
      const dropSource = free !== undefined && free - dbSize < FREE_FLOOR_BYTES;
      if (dropSource) {
        system.child.kill("SIGTERM");
        await new Promise((res) => (system.child.exitCode !== null ? res(null) : system.child.once("exit", res)));
        await check.end().catch(() => undefined);
        checkEnded = true;
        await admin.query(`drop database ${dbName} with (force)`);
      }
      const restoreDb = `${dbName}_restore`;
      await admin.query(`create database ${restoreDb}`);
      const restoreUrl = new URL(ADMIN_DB);
      restoreUrl.pathname = `/${restoreDb}`;
      const r = performance.now();
      execFileSync("pg_restore", ["-j", "2", "-d", restoreUrl.toString(), dump]);
      const restoreS = (performance.now() - r) / 1000;
      const restored = Number((await admin.query(`select pg_database_size($1) as n`, [restoreDb])).rows[0].n);
      log(
        `pg_dump -Fc -Z 1: ${dumpS.toFixed(1)} s, ${mb(statSync(dump).size)}; pg_restore -j 2: ${restoreS.toFixed(1)} s, restored database ${mb(restored)}` +
          (dropSource ? ` (the source was dropped before the restore: the disk had ${mb(free!)} free)` : ""),
      );
      await admin.query(`drop database ${restoreDb} with (force)`);
      execFileSync("rm", ["-f", dump]);
    }
    log(
      JSON.stringify({
        operations: OPERATIONS,
        messages: MESSAGES,
        days: DAYS,
        build_s: Number(buildS.toFixed(1)),
        database_bytes: dbSize,
        hello_world_rps: Math.round(ref.rps),
        worst_ratio: Number(worst.toFixed(2)),
        goal,
        ...(again ? { measured_again: again } : {}),
        ...(small
          ? { small_operations: SMALL, small_days: SMALL_DAYS, worst_ratio_to_small: round(worstToSmall) }
          : {}),
        paths: figures,
        page_cost: pages,
        activity,
        ...(diskReadMb !== undefined ? { disk_read_mb: Math.round(diskReadMb) } : {}),
      }),
    );
    if (MAX_RATIO !== undefined && worst > MAX_RATIO) process.exitCode = 1;
    for (const side of sides) {
      side.system.child.kill("SIGTERM");
      await new Promise((res) =>
        side.system.child.exitCode !== null ? res(null) : side.system.child.once("exit", res),
      );
    }
  } finally {
    for (const c of children) if (c.exitCode === null) c.kill("SIGTERM");
    closeConnections();
    for (const side of sides)
      if (side.label !== "history" || !checkEnded) await side.check.end().catch(() => undefined);
    // --keep-db keeps the history's database (its name is printed when its side starts).
    const kept = flags["keep-db"] ? sides.find((s) => s.label === "history")?.dbName : undefined;
    for (const name of databases) if (name !== kept) await admin.query(`drop database if exists ${name} with (force)`);
    await admin.end();
  }
}

await main();
