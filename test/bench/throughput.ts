// The write-path benchmark (`npm run bench`, after the poll benchmark). Not a test: it
// measures and prints, each figure beside a reference measured in the same run, and the
// CPU time the system's processes and its PostgreSQL backends spent on each phase (a
// figure that hardly moves with what else the machine runs, unlike latency).
//
//   1. references: a bare express hello-world saturated with the same client, and pgbench
//      on the same PostgreSQL, select-only and simple-update (durable commits/s);
//   2. the create burst: IDS request_ids each sent REPEATS times at once (default 310 × 5):
//      p50/p99, one operation stored per request_id, every answer naming it; then the same
//      burst sent by SESSION_AGENTS agents signed in at the board (sessions, default 30: each
//      request_id by one agent), its p99 printed over the API-key burst's; measured after
//      a warm-up (WARMUP creates, default 300, 32 at a time, then 100 request_ids × REPEATS
//      at once) so that it meets a running system, not one whose code is still being
//      compiled and whose connection pools are still opening;
//   3. creations/s with 10 % replays (closed loop, CONCURRENCY callers);
//   4. claims/s: the queue filled to QUEUED operations over the handsets, then drained by
//      the handsets polling and reporting as fast as they can (cooldown 0);
//   5. SMS to confirmation at SMS_PER_S: created, dialled by simulated handsets, proven by
//      the operator's SMS the handset forwards.
//
//   On a PostgreSQL with autovacuum off, the database is vacuumed and analysed before the
//   drain and before the SMS phase (what autovacuum does meanwhile in production), unmeasured.
//
//   npm run bench:throughput -- --ids 310 --repeats 5 --queued 20000 --duration-s 5
//   --bursts N runs the burst N times in a row; --warmup 0 sends the first to a system just started;
//   --phases burst,rate,claims,sms runs only those; BENCH_SYSTEM_LOG=<file> keeps the system's logs.

import { execFileSync, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { createWriteStream, readdirSync, readFileSync } from "node:fs";
import { parseArgs } from "node:util";
import pg from "pg";
import { OperatorSms } from "../simulator/operator-sms.ts";
import { SimulatedHandset } from "../simulator/handset.ts";
import { SimulatedOperator } from "../simulator/operator.ts";
import { addHandset, type BenchHandset } from "./fleet.ts";
import { call, closeConnections, percentile, pool, saturate, setConnections, startChild } from "./http.ts";
import { cpuTicks, statsReported } from "./proc.ts";

const { values: flags } = parseArgs({
  options: {
    ids: { type: "string" },
    bursts: { type: "string" },
    warmup: { type: "string" },
    repeats: { type: "string" },
    queued: { type: "string" },
    handsets: { type: "string" },
    "duration-s": { type: "string" },
    concurrency: { type: "string" },
    "sms-per-s": { type: "string" },
    "sms-s": { type: "string" },
    phases: { type: "string" },
    "session-agents": { type: "string" },
  },
});
// --phases burst,rate,claims,sms runs only those (the references always run).
const PHASES = new Set((flags.phases ?? "burst,rate,claims,sms").split(","));
const IDS = Number(flags.ids ?? 310);
const BURSTS = Number(flags.bursts ?? 1);
const WARMUP = Number(flags.warmup ?? 300);
const REPEATS = Number(flags.repeats ?? 5);
const QUEUED = Number(flags.queued ?? 20_000);
const HANDSETS = Number(flags.handsets ?? 20);
const DURATION_S = Number(flags["duration-s"] ?? 5);
const CONCURRENCY = Number(flags.concurrency ?? 32);
const SESSION_AGENTS = Number(flags["session-agents"] ?? 30);
const SMS_PER_S = Number(flags["sms-per-s"] ?? 50);
const SMS_S = Number(flags["sms-s"] ?? 10);
const PIN = "52918374";
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const API_KEY = `bench-${randomBytes(8).toString("hex")}`;
const BOOTSTRAP = `bench-${randomBytes(8).toString("hex")}`;
const log = (s: string) => process.stdout.write(`${s}\n`);
const ms = (v: number) => `${v.toFixed(1)} ms`;

setConnections(Math.max(256, IDS * REPEATS));

/**
 * pgbench on the benchmark's own database: select-only (`-S`) and simple-update (`-N`, one
 * durable commit per transaction: what bounds every write path here, shared with whatever
 * else writes to the same PostgreSQL).
 */
function pgbench(url: string): { text: string; simpleUpdate?: number } {
  try {
    execFileSync("pgbench", ["-i", "-s", "1", "-q", url], { stdio: "ignore" });
    // pgbench's tables stay in the benchmark's own database, dropped at the end.
    const run = (mode: string) => {
      const out = execFileSync("pgbench", [mode, "-c", "4", "-j", "2", "-T", String(DURATION_S), url], {
        stdio: ["ignore", "pipe", "ignore"],
      }).toString();
      const tps = /tps = ([\d.]+)/.exec(out)?.[1];
      return tps ? Math.round(Number(tps)) : undefined;
    };
    const [selectOnly, simpleUpdate] = [run("-S"), run("-N")];
    const text = `${selectOnly ?? "no figure"} select-only tx/s, ${simpleUpdate ?? "no figure"} simple-update tx/s (4 clients each)`;
    return { text, simpleUpdate };
  } catch (err) {
    return { text: `unavailable (${(err as Error).message.split("\n")[0]})` };
  }
}

// CPU time (user + system) the system's processes and its database backends spent in a
// phase: unlike latency, it hardly depends on what else the machine is running.
const TICKS_PER_S = 100;

/**
 * The kernel's count of connections refused because a listening socket's accept queue was
 * full (TcpExt ListenOverflows, machine-wide); each costs its client a SYN resent a second
 * later. Undefined where /proc/net/netstat does not exist.
 */
function listenOverflows(): number | undefined {
  try {
    const lines = readFileSync("/proc/net/netstat", "utf8").split("\n");
    const i = lines.findIndex((l) => l.startsWith("TcpExt:"));
    const names = lines[i]!.split(/\s+/);
    const values = lines[i + 1]!.split(/\s+/);
    const v = Number(values[names.indexOf("ListenOverflows")]);
    return Number.isFinite(v) ? v : undefined;
  } catch {
    return undefined;
  }
}

/**
 * CPU ticks by process, keyed `part pid`: each descendant of `root` named by its script, and
 * PostgreSQL's backends of `db` (a backend that ends between two readings loses its ticks).
 */
async function cpuByPart(root: number, db: pg.Client, dbName: string): Promise<Map<string, number>> {
  const parents = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parents.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // gone meanwhile
    }
  }
  const parts = new Map<string, number>();
  const add = (part: string, pid: number) => parts.set(`${part} ${pid}`, cpuTicks(pid));
  for (const pid of parents.keys()) {
    let p: number | undefined = pid;
    while (p && p !== root) p = parents.get(p);
    if (p !== root) continue;
    const cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8");
    const script = /(?:services\/(\w+)|(gateway))\/src\/main\.ts/.exec(cmd);
    add(script ? (script[1] ?? script[2]) : "other", pid);
  }
  const backends = await db.query(`select pid from pg_stat_activity where datname = $1`, [dbName]);
  for (const r of backends.rows as { pid: number }[]) add("postgres", r.pid);
  // Not CPU: transactions committed in the database (its statistics lag by up to a second).
  const tx = await db.query(`select xact_commit + xact_rollback as n from pg_stat_database where datname = $1`, [
    dbName,
  ]);
  parts.set("transactions", Number(tx.rows[0].n));
  return parts;
}

/**
 * What each part spent between two readings, largest first; `per`: also the CPU-ms of one
 * unit of the phase's work (a figure to compare across machines' loads). `own`: transactions
 * the benchmark itself ran in the database meanwhile (not the system's).
 */
function cpuSpent(
  before: Map<string, number>,
  after: Map<string, number>,
  per?: { n: number; what: string },
  own = 0,
): { text: string; cpuMs: number; transactions: number } {
  const transactions = (after.get("transactions") ?? 0) - (before.get("transactions") ?? 0) - own;
  const byPart = new Map<string, number>();
  for (const [key, t] of after) {
    if (key === "transactions") continue;
    const part = key.split(" ")[0];
    byPart.set(part, (byPart.get(part) ?? 0) + (t - (before.get(key) ?? 0)) / TICKS_PER_S);
  }
  const spent = [...byPart];
  const total = spent.reduce((sum, [, s]) => sum + s, 0);
  const each = per && per.n > 0 ? `; ${((total * 1000) / per.n).toFixed(2)} CPU-ms ${per.what}` : "";
  const text = `${transactions} database transactions, ${total.toFixed(2)} CPU-s (${spent
    .filter(([, s]) => s >= 0.05)
    .sort((a, b) => b[1] - a[1])
    .map(([part, s]) => `${part} ${s.toFixed(2)}`)
    .join(", ")})${each}`;
  return { text, cpuMs: total * 1000, transactions };
}

async function main(): Promise<void> {
  const children: ChildProcess[] = [];
  const admin = new pg.Client({ connectionString: ADMIN_DB });
  await admin.connect();
  const dbName = `bench_tp_${Date.now().toString(36)}`;
  await admin.query(`create database ${dbName}`);
  // BENCH_LOG_STATEMENTS=1: PostgreSQL logs every statement of this database (its server log,
  // lines tagged with the database's name): how the statements per transfer were counted.
  if (process.env.BENCH_LOG_STATEMENTS === "1") await admin.query(`alter database ${dbName} set log_statement = 'all'`);
  const dbUrl = new URL(ADMIN_DB);
  dbUrl.pathname = `/${dbName}`;
  try {
    const hello = await startChild("hello.ts", {});
    children.push(hello.child);
    const ref = await saturate(DURATION_S, 64, () => call(hello.line.url, "GET", "/"));
    log(`reference: express hello-world ${ref.rps.toFixed(0)} req/s (p50 ${ms(ref.p50)}, p99 ${ms(ref.p99)})`);
    const reference = pgbench(dbUrl.toString());
    log(`reference: pgbench on the same PostgreSQL: ${reference.text}`);

    const system = await startChild("system.ts", {
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      DATABASE_URL: dbUrl.toString(),
      API_KEYS: API_KEY,
      BOOTSTRAP_TOKEN: BOOTSTRAP,
      RATE_LIMIT_RPS: "1000000",
      RATE_LIMIT_BURST: "1000000",
      DEVICE_COOLDOWN_S: "0",
    });
    children.push(system.child);
    // BENCH_SYSTEM_LOG=<file>: the system's stderr (its logs) also goes there.
    if (process.env.BENCH_SYSTEM_LOG) system.child.stderr!.pipe(createWriteStream(process.env.BENCH_SYSTEM_LOG));
    const base: string = system.line.gatewayUrl;
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
    const auth = { authorization: `Bearer ${login.body.token}` };
    const agentId: string = (
      await call(base, "POST", "/v1/agents/admin", auth, {
        login: "bench-agent",
        full_name: "Bench Agent",
        password: "bench-password-1",
      })
    ).body.agent_id;
    const devices: BenchHandset[] = [];
    await pool(
      Array.from({ length: HANDSETS }, (_, i) => i),
      8,
      async (i) => {
        devices.push(
          await addHandset(
            base,
            auth,
            { label: `tp ${i}`, msisdn: `69${String(2_000_000 + i).padStart(7, "0")}`, pin: PIN },
            { key, amount: 1_000_000_000_000 },
          ),
        );
      },
    );
    await call(base, "PATCH", `/v1/admin/agents/${agentId}/access`, auth, {
      allowed_sim_ids: devices.map((d) => d.simId),
      allowed_op_types: ["deposit"],
      max_amount: 500_000,
    });
    // The board's agents, each signed in (a session) and granted the same SIMs.
    const sessions: Record<string, string>[] = [];
    if (PHASES.has("burst")) {
      await pool(
        Array.from({ length: SESSION_AGENTS }, (_, i) => i),
        8,
        async (i) => {
          const login = `bench-board-${i}`;
          const id = (
            await call(base, "POST", "/v1/agents/admin", auth, {
              login,
              full_name: `Board ${i}`,
              password: "bench-password-1",
            })
          ).body.agent_id;
          await call(base, "PATCH", `/v1/admin/agents/${id}/access`, auth, {
            allowed_sim_ids: devices.map((d) => d.simId),
            allowed_op_types: ["deposit"],
            max_amount: 500_000,
          });
          const token = (await call(base, "POST", "/v1/agents/login", {}, { login, password: "bench-password-1" })).body
            .token;
          sessions.push({ authorization: `Bearer ${token}` });
        },
      );
    }
    const body = (requestId: string, montant = 1000, msisdn = "690000001", agent: string | null = agentId) => ({
      request_id: requestId,
      ...(agent ? { agent_id: agent } : {}),
      operator: "operator_b",
      montant,
      client: { msisdn, nom: "Bench" },
    });
    const create = (requestId: string, montant?: number, msisdn?: string) =>
      call(base, "POST", "/v1/operations", key, body(requestId, montant, msisdn));
    /** An agent's own create at the board, with its session. */
    const createBySession = (requestId: string, session: Record<string, string>) =>
      call(base, "POST", "/v1/operations", session, body(requestId, undefined, undefined, null));
    /** Each request_id REPEATS times, every request sent at once; by API key, or by the sessions (one per request_id). */
    const sendAtOnce = (ids: string[], bySession = false) =>
      Promise.all(
        ids.flatMap((id, i) =>
          Array.from({ length: REPEATS }, () =>
            bySession ? createBySession(id, sessions[i % sessions.length]) : create(id),
          ),
        ),
      );

    // Fleet's view of the new agent and SIMs reaches dispatch asynchronously: wait for it.
    for (const until = performance.now() + 60_000; ;) {
      const r = await create(`warmup-${randomUUID()}`);
      if (r.status >= 200 && r.status < 300) break;
      if (performance.now() > until) throw new Error(`creation never succeeded: ${r.status} ${JSON.stringify(r.body)}`);
      await new Promise((res) => setTimeout(res, 500));
    }

    const check = new pg.Client({ connectionString: dbUrl.toString() });
    await check.connect();
    const count = async (sql: string, params: unknown[] = []) => Number((await check.query(sql, params)).rows[0].n);
    const cpu = () => cpuByPart(system.child.pid!, check, dbName);
    // A PostgreSQL run with autovacuum off (this machine's, see conf.d) never cleans the dead
    // rows a drain leaves nor refreshes the planner's statistics: the phase after it would
    // measure a table no production server keeps. There, the benchmark does what autovacuum
    // would have done meanwhile, outside the measured time, and says so.
    const autovacuum = (await check.query("show autovacuum")).rows[0].autovacuum as string;
    const settle = async (before: string) => {
      if (autovacuum === "on") return;
      const t0 = performance.now();
      await check.query("vacuum analyze");
      log(
        `  autovacuum is off on this PostgreSQL: vacuum analyze before ${before} (${((performance.now() - t0) / 1000).toFixed(1)} s, not measured)`,
      );
    };

    /** One burst; prints its figures and returns its p99 (ms). */
    const measureBurst = async (what: string, bySession: boolean): Promise<number> => {
      const prefix = bySession ? "sburst-" : "burst-";
      const ids = Array.from({ length: IDS }, () => `${prefix}${randomUUID()}`);
      const cpuBefore = await cpu();
      const overflowsBefore = listenOverflows();
      const burst = await sendAtOnce(ids, bySession);
      const overflows = (listenOverflows() ?? NaN) - (overflowsBefore ?? NaN);
      const cpuAfter = await cpu();
      const lat = burst.map((r) => r.ms).sort((a, b) => a - b);
      const statuses: Record<string, number> = {};
      for (const r of burst) statuses[r.status] = (statuses[r.status] ?? 0) + 1;
      const sample = burst.find((r) => r.status !== 202 && r.status !== 409);
      // Every answer for one request_id names the same operation (the first execution's).
      const named = new Map<string, Set<string>>();
      burst.forEach((r, i) => {
        const id = ids[Math.floor(i / REPEATS)];
        const op = r.body?.operation_id;
        if (op) named.set(id, (named.get(id) ?? new Set()).add(op));
      });
      const split = [...named.values()].filter((ops) => ops.size > 1).length;
      const stored = await count(`select count(*) as n from dispatch.operations where request_id = any($1)`, [ids]);
      const p99 = percentile(lat, 99);
      log(
        `${what}: ${IDS} ids × ${REPEATS} at once: p50 ${ms(percentile(lat, 50))}, p99 ${ms(p99)}, max ${ms(lat.at(-1) ?? NaN)}; ${statuses[202] ?? 0} created (202), ${statuses[409] ?? 0} replays (409); ${stored} operations stored, ${split} request_ids answered with two operations (goal: p99 <= 1000 ms, ${IDS} stored, 0 split)`,
      );
      log(
        `  answers by status ${JSON.stringify(statuses)}${sample ? `; e.g. ${JSON.stringify(sample.body).slice(0, 200)}` : ""}; ${Number.isNaN(overflows) ? "" : `${overflows} connections dropped by a full accept queue (machine-wide); `}${cpuSpent(cpuBefore, cpuAfter).text}`,
      );
      return p99;
    };

    // Each agent's grant reaches dispatch asynchronously too.
    await pool(sessions, 8, async (session) => {
      for (const until = performance.now() + 60_000; ;) {
        const r = await createBySession(`warmup-${randomUUID()}`, session);
        if (r.status >= 200 && r.status < 300) break;
        if (performance.now() > until)
          throw new Error(`creation by session never succeeded: ${r.status} ${JSON.stringify(r.body)}`);
        await new Promise((res) => setTimeout(res, 500));
      }
    });

    if (PHASES.has("burst") && WARMUP > 0) {
      const t0 = performance.now();
      let created = 0;
      await pool(Array.from({ length: WARMUP }), 32, async (_, i) => {
        const r =
          i % 2 === 0
            ? await create(`warmup-${randomUUID()}`)
            : await createBySession(`warmup-${randomUUID()}`, sessions[i % sessions.length]);
        if (r.status === 202) created++;
      });
      const ids = Array.from({ length: 100 }, () => `warmup-${randomUUID()}`);
      const answers = [
        ...(await sendAtOnce(ids)),
        ...(await sendAtOnce(
          ids.map((id) => `${id}-s`),
          true,
        )),
      ];
      created += answers.filter((r) => r.status === 202).length;
      log(
        `  warm-up: ${created} of ${WARMUP + 2 * ids.length} operations created in ${((performance.now() - t0) / 1000).toFixed(1)} s`,
      );
    }
    for (let round = 0; PHASES.has("burst") && round < BURSTS; round++) {
      // 2. The burst: every request sent at once, each request_id REPEATS times; by API key,
      // then by the board's sessions.
      const byKey = await measureBurst("create burst", false);
      const bySession = await measureBurst("create burst by session", true);
      log(
        `  session burst p99 over the API-key burst's: ${(bySession / byKey).toFixed(2)} (goal <= 1.5; ${SESSION_AGENTS} agents signed in)`,
      );
    }

    if (PHASES.has("rate")) {
      // 3. Creations/s with 10 % replays.
      const recent: string[] = [];
      const cpuBefore = await cpu();
      const rate = await saturate(DURATION_S, CONCURRENCY, (i) => {
        const replay = recent.length > 0 && i % 10 === 0;
        const id = replay ? recent[Math.floor(Math.random() * recent.length)] : `rate-${randomUUID()}`;
        if (!replay) recent.push(id);
        return create(id);
      });
      const cpuAfter = await cpu();
      log(
        `creations: ${rate.rps.toFixed(0)} req/s with 10 % replays (${CONCURRENCY} callers; p50 ${ms(rate.p50)}, p99 ${ms(rate.p99)}; ${rate.errors} answers other than 2xx, replays' 409 included); ${cpuSpent(cpuBefore, cpuAfter).text} for ${rate.rps * DURATION_S} requests`,
      );
    }

    if (PHASES.has("claims")) {
      // 4. Claims/s draining the queue: QUEUED operations queued over the handsets, then
      //    each handset polls and reports as fast as it can (cooldown 0) until the
      //    database says nothing is queued on it (a 204 alone does not end its drain).
      const queuedNow = () => count(`select count(*) as n from dispatch.operations where status = 'queued'`);
      const toQueue = Math.max(0, QUEUED - (await queuedNow()));
      const fillStarted = performance.now();
      await pool(
        Array.from({ length: toQueue }, (_, i) => i),
        CONCURRENCY,
        async () => void (await create(`drain-${randomUUID()}`)),
      );
      const fillS = (performance.now() - fillStarted) / 1000;
      const queued = await queuedNow();
      log(`  queued ${toQueue} operations in ${fillS.toFixed(1)} s (${(toQueue / fillS).toFixed(0)} creations/s)`);
      await settle("the drain");
      await statsReported();
      const cpuBefore = await cpu();
      const started = performance.now();
      let claims = 0;
      let idlePolls = 0;
      await Promise.all(
        devices.map(async (d) => {
          const headers = { authorization: `Bearer ${d.token}` };
          for (;;) {
            const r = await call(base, "GET", "/v1/device/next", headers);
            if (r.status !== 200) {
              idlePolls++;
              const left = await count(
                `select count(*) as n from dispatch.operations where device_id = $1 and status = 'queued'`,
                [d.deviceId],
              );
              if (left === 0) break;
              await new Promise((res) => setTimeout(res, 20));
              continue;
            }
            claims++;
            await call(base, "POST", "/v1/device/outcome", headers, {
              operation_id: r.body.operation_id,
              outcome: "ussd_ok",
              ussd_response: "ok",
              executed_at: new Date().toISOString(),
            });
          }
        }),
      );
      const drainS = (performance.now() - started) / 1000;
      const cpuAfter = await cpu();
      await statsReported();
      cpuAfter.set("transactions", (await cpu()).get("transactions")!);
      log(
        `claims: ${(claims / drainS).toFixed(0)} claims/s draining ${queued} queued operations over ${HANDSETS} handsets in ${drainS.toFixed(1)} s (each claim followed by its outcome; ${idlePolls} polls without work meanwhile; goal >= 300/s at 20000); ${cpuSpent(cpuBefore, cpuAfter, { n: claims, what: "a claim and its outcome" }).text}`,
      );
    }

    if (PHASES.has("sms")) {
      await settle("the SMS phase");
      // What the system spends with nothing to do (the relays' passes every 250 ms, periodic
      // jobs), measured before the phase: a fixed cost a second, so its share of a transfer
      // grows as the phase slows; the cost per transfer is also printed without it.
      const IDLE_S = 3;
      await statsReported();
      const idleBefore = await cpu();
      await new Promise((res) => setTimeout(res, IDLE_S * 1000));
      const idle = cpuSpent(idleBefore, await cpu());
      // 5. SMS to confirmation: SMS_PER_S deposits a second, dialled by simulated handsets,
      //    each proven by the operator's SMS forwarded by the handset; measured from the SMS
      //    leaving the handset to the operation being confirmed.
      const operator = new SimulatedOperator();
      operator.registerCustomer("690000001", "Bench", 0);
      const smsSentAt = new Map<string, number>();
      const confirmedAt = new Map<string, number>();
      const smsSenders: OperatorSms[] = [];
      const recipients = new Set<string>();
      const forwarding: Promise<unknown>[] = [];
      const handsets = devices.map((d) => {
        operator.registerSim(d.msisdn, "operator_b", { pin: PIN, balance: 1_000_000_000_000 });
        const sms = new OperatorSms({ baseUrl: base, token: d.token });
        smsSenders.push(sms);
        return new SimulatedHandset({
          baseUrl: base,
          token: d.token,
          operator,
          sims: new Map([[d.simId, { msisdn: d.msisdn, operator: "operator_b" }]]),
          onDialled: (op, result) => {
            // Operations left queued by earlier phases are dialled too, but not measured.
            if (recipients.has(op.msisdn_dest)) smsSentAt.set(op.operation_id, performance.now());
            // The operator's SMS reaches the phone while it goes on polling: not awaited here.
            forwarding.push(sms.onDialled(op, result));
          },
        });
      });
      // Every create answered, then every created operation dialled and confirmed, or
      // SETTLE_MS after the feed.
      const createdIds = new Set<string>();
      let answered = false;
      let feedEnded = Number.POSITIVE_INFINITY;
      const SETTLE_MS = 30_000;
      const settling = () => performance.now() - feedEnded < SETTLE_MS;
      const dialling = handsets.map(async (h) => {
        while (settling() && !(answered && smsSentAt.size >= createdIds.size)) {
          const r = await h.pollOnce().catch(() => ({ status: 0 }));
          if (r.status !== 200) await new Promise((res) => setTimeout(res, 100));
        }
      });
      // The watcher's reads are transactions of the database too: counted, to be left out.
      let watcherReads = 0;
      const watcher = (async () => {
        while (settling() && !(answered && confirmedAt.size >= createdIds.size)) {
          const pending = [...smsSentAt.keys()].filter((id) => !confirmedAt.has(id));
          if (pending.length) {
            watcherReads++;
            const rows = (
              await check.query(
                `select operation_id from dispatch.operations where operation_id = any($1) and status = 'confirmed'`,
                [pending],
              )
            ).rows as { operation_id: string }[];
            const now = performance.now();
            for (const r of rows) confirmedAt.set(r.operation_id, now);
          }
          await new Promise((res) => setTimeout(res, 25));
        }
      })();
      const cpuBefore = await cpu();
      const feedStarted = performance.now();
      const creations: Promise<void>[] = [];
      const refused: Record<string, number> = {};
      for (let k = 0; k < SMS_PER_S * SMS_S; k++) {
        const due = feedStarted + (k * 1000) / SMS_PER_S - performance.now();
        if (due > 0) await new Promise((res) => setTimeout(res, due));
        // A distinct amount and recipient each, and no amount of the earlier phases (1000 FCFA,
        // still awaiting evidence on the same SIMs): the SMS must prove one operation. Two
        // candidates of one amount on one SIM are ambiguous by design (a person decides).
        const msisdn = `69${String(5_000_000 + k).padStart(7, "0")}`;
        operator.registerCustomer(msisdn, "Bench", 0);
        recipients.add(msisdn);
        creations.push(
          create(`sms-${randomUUID()}`, 1001 + k, msisdn).then((r) => {
            if (r.status === 202) createdIds.add(r.body.operation_id);
            else refused[r.status] = (refused[r.status] ?? 0) + 1;
          }),
        );
      }
      feedEnded = performance.now();
      await Promise.all(creations);
      answered = true;
      await watcher;
      await Promise.all(dialling);
      await Promise.allSettled(forwarding);
      const cpuAfter = await cpu();
      const phaseS = (performance.now() - feedStarted) / 1000;
      // The phase's transactions once every backend has reported them (its CPU is read above).
      await statsReported();
      cpuAfter.set("transactions", (await cpu()).get("transactions")!);
      const countedS = (performance.now() - feedStarted) / 1000;
      const confirmedIn = [...confirmedAt].map(([id, at]) => at - smsSentAt.get(id)!).sort((a, b) => a - b);
      const spent = cpuSpent(
        cpuBefore,
        cpuAfter,
        { n: confirmedAt.size, what: "per confirmed transfer" },
        watcherReads,
      );
      log(
        `SMS to confirmation at ${SMS_PER_S} SMS/s for ${SMS_S} s: p50 ${ms(percentile(confirmedIn, 50))}, p99 ${ms(percentile(confirmedIn, 99))}, max ${ms(confirmedIn.at(-1) ?? NaN)}; ${createdIds.size} created${Object.keys(refused).length ? ` (refused ${JSON.stringify(refused)})` : ""}, ${smsSentAt.size} dialled, ${confirmedAt.size} confirmed (goal p99 <= 2000 ms, all confirmed); ${spent.text}`,
      );
      // The cost of one transfer end to end: its create, claim, outcome and SMS proof, with the
      // events each writes and relays, in the system's processes and its PostgreSQL backends.
      const n = Math.max(1, confirmedAt.size);
      const beyond = (total: number, idleTotal: number, seconds = phaseS) =>
        ((total - (idleTotal / IDLE_S) * seconds) / n).toFixed(1);
      log(
        `per confirmed transfer: ${(spent.cpuMs / n).toFixed(1)} CPU-ms, ${(spent.transactions / n).toFixed(1)} database transactions (create, claim, outcome, SMS proof and their events; goal <= 20 CPU-ms and <= 8 transactions); beyond the idle system's ${(idle.cpuMs / IDLE_S).toFixed(0)} CPU-ms and ${(idle.transactions / IDLE_S).toFixed(1)} transactions a second: ${beyond(spent.cpuMs, idle.cpuMs)} CPU-ms, ${beyond(spent.transactions, idle.transactions, countedS)} transactions; reference pgbench simple-update ${reference.simpleUpdate ?? "unavailable"} tx/s in this run${confirmedAt.size < createdIds.size ? ` (only ${confirmedAt.size} of ${createdIds.size} confirmed in time: the figure also carries the others' work, so it overstates)` : ""}`,
      );
      const delivered = smsSenders.flatMap((x) => x.deliveries);
      const answers: Record<string, number> = {};
      for (const d of delivered) {
        const key = `${d.status} ${(d.body as { outcome?: string } | undefined)?.outcome ?? ""}`.trim();
        answers[key] = (answers[key] ?? 0) + 1;
      }
      log(`  SMS forwarded: ${delivered.length}, answers by status and outcome ${JSON.stringify(answers)}`);
      const missing = [...createdIds].filter((id) => !confirmedAt.has(id));
      if (missing.length) {
        const states = (
          await check.query(
            `select status, count(*)::int as n from dispatch.operations where operation_id = any($1) group by status`,
            [missing],
          )
        ).rows as { status: string; n: number }[];
        log(
          `  not confirmed: ${missing.length}, by status ${JSON.stringify(Object.fromEntries(states.map((r) => [r.status, r.n])))}`,
        );
      }
    }
    await check.end();
  } finally {
    for (const c of children) c.kill("SIGTERM");
    closeConnections();
    await new Promise((r) => setTimeout(r, 1500));
    await admin.query(`drop database if exists ${dbName} with (force)`).catch(() => undefined);
    await admin.end();
  }
}

await main();
