// The handset poll benchmark (`npm run bench:poll`). Not a test: it measures and prints.
//
// N simulated handsets (default 3000) each poll GET /v1/device/next every 4 s through the
// gateway, most finding no work, while a stream of operation creations (with replays of
// the same request_id, some of them concurrent) feeds the few handsets that hold SIMs;
// those dial with the simulated operator and report their outcome. It prints polls/s,
// p50/p99 latency, errors, creations/s, whether empty polls wrote anything to dispatch's
// tables, and, in the same run, the throughput of a bare express hello-world on this
// machine as the reference.
//
// By default it starts the whole system itself (child process, in-process event bus) on a
// fresh database of the PostgreSQL at BENCH_DATABASE_ADMIN_URL (default the machine's,
// postgres://postgres@127.0.0.1:5432/postgres), and stops by itself.
//
//   npm run bench:poll
//   npm run bench:poll -- --handsets 3000 --duration-s 30 --creations-per-s 10
//   BENCH_HANDSETS=1000 BENCH_DURATION_S=20 npm run bench:poll
//
// Options (flag, env): --handsets BENCH_HANDSETS (3000), --interval-ms BENCH_INTERVAL_MS
// (4000), --duration-s BENCH_DURATION_S (30), --warmup-s (4), --workers BENCH_WORKERS
// (handsets holding a SIM, default 10 %, at most 300), --creations-per-s
// BENCH_CREATIONS_PER_S (10), --replay-share (0.3), --connections (256), --reference-s (5),
// --no-reference, --capacity-only (the references and the empty-poll capacity, no load), --keep-db, --metrics BENCH_METRICS=1 (every process serves /metrics, scraped
// every 5 s during the load like Prometheus; the series each one shows are printed at the end).
// Traces: the processes inherit the environment, so `TRACING=on` (or OTEL_EXPORTER_OTLP_ENDPOINT)
// turns them on in every component (docs/decisions/deploy.md, "Cost of observability").

import { execFileSync, type ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { randomBytes, randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import { SimulatedHandset, type DispatchPayload } from "../simulator/handset.ts";
import { SimulatedOperator } from "../simulator/operator.ts";

const { values: flags } = parseArgs({
  options: {
    handsets: { type: "string" },
    "interval-ms": { type: "string" },
    "duration-s": { type: "string" },
    "warmup-s": { type: "string" },
    workers: { type: "string" },
    "creations-per-s": { type: "string" },
    "replay-share": { type: "string" },
    connections: { type: "string" },
    "reference-s": { type: "string" },
    "no-reference": { type: "boolean", default: false },
    "keep-db": { type: "boolean", default: false },
    topology: { type: "string" },
    "auth-cache-ttl-ms": { type: "string" },
    metrics: { type: "boolean", default: false },
    "capacity-only": { type: "boolean", default: false },
  },
});
const num = (flag: string | undefined, env: string | undefined, fallback: number) => Number(flag ?? env ?? fallback);
const HANDSETS = num(flags.handsets, process.env.BENCH_HANDSETS, 3000);
const INTERVAL_MS = num(flags["interval-ms"], process.env.BENCH_INTERVAL_MS, 4000);
const DURATION_S = num(flags["duration-s"], process.env.BENCH_DURATION_S, 30);
const WARMUP_S = num(flags["warmup-s"], undefined, 4);
const WORKERS = Math.min(
  HANDSETS,
  num(flags.workers, process.env.BENCH_WORKERS, Math.min(300, Math.ceil(HANDSETS / 10))),
);
const CREATIONS_PER_S = num(flags["creations-per-s"], process.env.BENCH_CREATIONS_PER_S, 10);
const REPLAY_SHARE = num(flags["replay-share"], undefined, 0.3);
const CONNECTIONS = num(flags.connections, undefined, 256);
const REFERENCE_S = num(flags["reference-s"], undefined, 5);
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";
const API_KEY = `bench-${randomBytes(8).toString("hex")}`;
const BOOTSTRAP = `bench-${randomBytes(8).toString("hex")}`;
const PIN = "5291";

const log = (s: string) => process.stdout.write(`${s}\n`);

import { call, closeConnections, percentile, pool, saturate, setConnections, startChild } from "./http.ts";

setConnections(CONNECTIONS);

// ---------------------------------------------------------------------------------------
// CPU per component (Linux /proc): where a poll's time goes.

function cpuTicks(dbName: string): Map<string, number> {
  const out = new Map<string, number>();
  let listing = "";
  try {
    listing = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
  } catch {
    return out;
  }
  for (const line of listing.split("\n")) {
    const m = /^\s*(\d+)\s+(.*)$/.exec(line);
    if (!m) continue;
    const args = m[2];
    let name: string | undefined;
    if (args.includes(dbName) && args.startsWith("postgres")) name = "postgresql";
    else if (/gateway\/src\/main\.ts/.test(args)) name = "gateway";
    else {
      const svc = /services\/(\w+)\/src\/main\.ts/.exec(args);
      if (svc) name = svc[1];
      else if (/test\/bench\/system\.ts/.test(args) && process.env.BENCH_TOPOLOGY === "single")
        name = "system (one process)";
    }
    if (Number(m[1]) === process.pid) name = "load generator";
    if (!name) continue;
    try {
      const stat = readFileSync(`/proc/${m[1]}/stat`, "utf8").split(") ")[1].split(" ");
      out.set(name, (out.get(name) ?? 0) + Number(stat[11]) + Number(stat[12]));
    } catch {
      /* gone */
    }
  }
  return out;
}

/** CPU microseconds per request of each component between two readings (ticks are 10 ms). */
function cpuPerRequest(before: Map<string, number>, after: Map<string, number>, requests: number) {
  return Object.fromEntries(
    [...after.entries()]
      .map(([k, v]) => [k, Math.round(((v - (before.get(k) ?? 0)) * 10_000) / Math.max(1, requests))] as const)
      .filter(([, us]) => us > 0)
      .sort((a, b) => b[1] - a[1]),
  );
}

// ---------------------------------------------------------------------------------------
// Fleet's calls by kind (its /metrics): which call a regression of the poll comes from.

interface RpcCount {
  count: number;
  sum: number;
}

async function rpcCalls(url: string | undefined): Promise<Map<string, RpcCount>> {
  const out = new Map<string, RpcCount>();
  if (!url) return out;
  const text = await fetch(url)
    .then((r) => r.text())
    .catch(() => "");
  for (const line of text.split("\n")) {
    const m = /^transferops_rpc_duration_seconds_(count|sum)\{([^}]*)\} (\S+)$/.exec(line);
    if (!m) continue;
    const method = /method="([^"]*)"/.exec(m[2])?.[1] ?? "?";
    const entry = out.get(method) ?? { count: 0, sum: 0 };
    entry[m[1] as "count" | "sum"] += Number(m[3]);
    out.set(method, entry);
  }
  return out;
}

function callsPerS(before: Map<string, RpcCount>, after: Map<string, RpcCount>, seconds: number) {
  return [...after.entries()]
    .map(([method, a]) => {
      const b = before.get(method) ?? { count: 0, sum: 0 };
      const n = a.count - b.count;
      return { method, perS: n / seconds, meanMs: n > 0 ? ((a.sum - b.sum) * 1000) / n : 0 };
    })
    .filter((c) => c.perS > 0)
    .sort((x, y) => y.perS - x.perS);
}

// ---------------------------------------------------------------------------------------
// Database counters: what dispatch wrote

interface Writes {
  ins: number;
  upd: number;
  del: number;
}

async function dispatchWrites(url: string): Promise<Writes> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `select coalesce(sum(n_tup_ins), 0)::bigint as ins, coalesce(sum(n_tup_upd), 0)::bigint as upd, coalesce(sum(n_tup_del), 0)::bigint as del
         from pg_stat_user_tables where schemaname = 'dispatch' and relname = 'operations'`,
    );
    return { ins: Number(rows[0].ins), upd: Number(rows[0].upd), del: Number(rows[0].del) };
  } finally {
    await client.end();
  }
}

/** Statistics reach pg_stat_user_tables within about ten seconds of a backend going idle. */
async function settledWrites(url: string, expected: (w: Writes) => boolean): Promise<Writes> {
  let last = await dispatchWrites(url);
  for (let i = 0; i < 24 && !expected(last); i += 1) {
    await new Promise((r) => setTimeout(r, 500));
    last = await dispatchWrites(url);
  }
  // Let anything still pending arrive: a stable reading for 1.5 s.
  await new Promise((r) => setTimeout(r, 1500));
  return dispatchWrites(url);
}

// ---------------------------------------------------------------------------------------

/** Scrapes every component's /metrics every 5 s during the load, as Prometheus would. */
class MetricsScraper {
  private timer?: NodeJS.Timeout;
  private readonly last = new Map<string, string>();
  private readonly times: number[] = [];
  private failures = 0;
  constructor(private readonly urls: Record<string, string>) {}
  start(): void {
    if (Object.keys(this.urls).length) this.timer = setInterval(() => void this.scrapeAll(), 5000);
  }
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    if (Object.keys(this.urls).length) await this.scrapeAll();
  }
  private async scrapeAll(): Promise<void> {
    await Promise.all(
      Object.entries(this.urls).map(async ([name, url]) => {
        const started = performance.now();
        try {
          const res = await fetch(url);
          this.last.set(name, await res.text());
          this.times.push(performance.now() - started);
        } catch {
          this.failures += 1;
        }
      }),
    );
  }
  /** One line per component: how many transferops_ samples, and the families the dashboard reads. */
  report(): string[] {
    if (!Object.keys(this.urls).length) return [];
    const families = [
      "http_request_duration_seconds",
      "rpc_duration_seconds",
      "outbox_backlog",
      "outbox_oldest_age_seconds",
      "consumer_lag",
      "queue_depth",
      "proof_delay_seconds",
      "webhook_deliveries_total",
    ];
    const sorted = [...this.times].sort((a, b) => a - b);
    const lines = [
      `metrics            ${this.times.length} scrapes, p50 ${(sorted[Math.floor(sorted.length / 2)] ?? 0).toFixed(1)} ms, max ${(sorted.at(-1) ?? 0).toFixed(1)} ms, ${this.failures} failed`,
    ];
    for (const [name, text] of this.last) {
      const samples = text.split("\n").filter((l) => l.startsWith("transferops_"));
      const shown = families.filter((f) => samples.some((l) => l.startsWith(`transferops_${f}`)));
      lines.push(`  ${name.padEnd(10)} ${samples.length} samples; ${shown.join(", ") || "process series only"}`);
    }
    return lines;
  }
}

async function main(): Promise<void> {
  log(
    `poll benchmark: ${HANDSETS} handsets every ${INTERVAL_MS} ms (target ${((HANDSETS * 1000) / INTERVAL_MS).toFixed(0)} polls/s), ${WORKERS} with a SIM, ${CREATIONS_PER_S} creations/s (${Math.round(REPLAY_SHARE * 100)} % replays), ${DURATION_S} s measured after ${WARMUP_S} s warm-up`,
  );
  const children: ChildProcess[] = [];
  const admin = new pg.Client({ connectionString: ADMIN_DB });
  await admin.connect();
  const dbName = `bench_poll_${Date.now().toString(36)}`;
  await admin.query(`create database ${dbName}`);
  const dbUrl = new URL(ADMIN_DB);
  dbUrl.pathname = `/${dbName}`;
  const databaseUrl = dbUrl.toString();
  const authCacheTtl = flags["auth-cache-ttl-ms"] ?? process.env.AUTH_CACHE_TTL_MS;
  try {
    const system = await startChild("system.ts", {
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      DATABASE_URL: databaseUrl,
      API_KEYS: API_KEY,
      BOOTSTRAP_TOKEN: BOOTSTRAP,
      RATE_LIMIT_RPS: "100000",
      RATE_LIMIT_BURST: "100000",
      DEVICE_COOLDOWN_S: "2",
      BENCH_TOPOLOGY: flags.topology ?? process.env.BENCH_TOPOLOGY ?? "processes",
      // Every process serves /metrics: fleet's calls by kind are read before and after the load.
      BENCH_METRICS: "1",
      // The gateway's authentication cache; its own default applies unless a TTL is given (0 disables it).
      ...(authCacheTtl !== undefined ? { AUTH_CACHE_TTL_MS: authCacheTtl } : {}),
    });
    children.push(system.child);
    const base: string = system.line.gatewayUrl;
    log(
      `system up at ${base} (${system.line.topology === "single" ? "one process" : "one process per service"}, database ${dbName}); gateway authentication cache: ${authCacheTtl ?? "default (30000)"} ms`,
    );

    // Provisioning through the real routes.
    const boot = await call(
      base,
      "POST",
      "/v1/agents/bootstrap",
      { "x-bootstrap-token": BOOTSTRAP },
      { login: "bench", full_name: "Bench Admin", password: "bench-password-1" },
    );
    if (boot.status !== 201) throw new Error(`bootstrap failed: ${boot.status} ${JSON.stringify(boot.body)}`);
    const login = await call(base, "POST", "/v1/agents/login", {}, { login: "bench", password: "bench-password-1" });
    const adminAuth = { authorization: `Bearer ${login.body.token}` };
    const agentRes = await call(base, "POST", "/v1/agents/admin", adminAuth, {
      login: "bench-agent",
      full_name: "Bench Agent",
      password: "bench-password-1",
    });
    const agentId: string = agentRes.body.agent_id;
    const provisionStarted = performance.now();
    const devices: { deviceId: string; token: string; simId?: string; msisdn?: string }[] = new Array(HANDSETS);
    await pool(
      Array.from({ length: HANDSETS }, (_, i) => i),
      32,
      async (i) => {
        const d = await call(base, "POST", "/v1/devices", adminAuth, { label: `bench ${i}` });
        if (d.status !== 201) throw new Error(`device registration failed: ${d.status} ${JSON.stringify(d.body)}`);
        devices[i] = { deviceId: d.body.device_id, token: d.body.device_token };
      },
    );
    await pool(devices.slice(0, WORKERS), 16, async (d, i) => {
      const msisdn = `69${String(1_000_000 + i).padStart(7, "0")}`;
      const sim = await call(base, "POST", "/v1/sims", adminAuth, {
        operator: "operator_b",
        msisdn,
        pin: PIN,
        device_id: d.deviceId,
        subscription_slot: "0",
      });
      if (sim.status !== 201) throw new Error(`SIM creation failed: ${sim.status} ${JSON.stringify(sim.body)}`);
      const bal = await call(
        base,
        "PATCH",
        `/v1/sims/${sim.body.sim_id}/balance`,
        { "x-api-key": API_KEY },
        { balance: 1_000_000_000 },
      );
      if (bal.status !== 200) throw new Error(`balance failed: ${bal.status}`);
      d.simId = sim.body.sim_id;
      d.msisdn = msisdn;
    });
    const grant = await call(base, "PATCH", `/v1/admin/agents/${agentId}/access`, adminAuth, {
      allowed_sim_ids: devices.slice(0, WORKERS).map((d) => d.simId),
      allowed_op_types: ["deposit"],
      max_amount: 500_000,
    });
    if (grant.status !== 200) throw new Error(`grant failed: ${grant.status} ${JSON.stringify(grant.body)}`);
    log(
      `provisioned ${HANDSETS} handsets and ${WORKERS} SIMs in ${((performance.now() - provisionStarted) / 1000).toFixed(1)} s`,
    );

    // The reference: a bare express hello-world, and the poll route saturated, same client.
    let reference: Awaited<ReturnType<typeof saturate>> | undefined;
    let capacity: Awaited<ReturnType<typeof saturate>> | undefined;
    if (!flags["no-reference"]) {
      const hello = await startChild("hello.ts", {});
      children.push(hello.child);
      reference = await saturate(REFERENCE_S, 64, () => call(hello.line.url, "GET", "/"));
      hello.child.kill("SIGTERM");
      const idle = devices.slice(WORKERS);
      const emptyPoll = (i: number) =>
        call(base, "GET", "/v1/device/next", { authorization: `Bearer ${idle[i % idle.length].token}` });
      // A handset's first poll (its token not yet known to the gateway, its queue not yet
      // known idle to dispatch) costs an authentication and one read; every later poll of a
      // steady fleet is the empty poll the capacity is about. Both are measured.
      const coldStarted = performance.now();
      const coldLatencies: number[] = [];
      await pool(
        idle.map((_, i) => i),
        64,
        async (i) => void coldLatencies.push((await emptyPoll(i)).ms),
      );
      const coldRps = idle.length / ((performance.now() - coldStarted) / 1000);
      coldLatencies.sort((a, b) => a - b);
      const capacityCpuBefore = cpuTicks(dbName);
      capacity = await saturate(REFERENCE_S, 64, emptyPoll);
      const capacityCpu = cpuPerRequest(capacityCpuBefore, cpuTicks(dbName), capacity.rps * REFERENCE_S);
      log(
        `reference: express hello-world ${reference.rps.toFixed(0)} req/s (p50 ${reference.p50.toFixed(1)} ms); empty poll saturated ${capacity.rps.toFixed(0)} req/s (p50 ${capacity.p50.toFixed(1)} ms, p99 ${capacity.p99.toFixed(1)} ms, ${capacity.errors} errors); a handset's first poll ${coldRps.toFixed(0)} req/s (p99 ${percentile(coldLatencies, 99).toFixed(1)} ms)`,
      );
      log(
        `  CPU per empty poll (µs): ${Object.entries(capacityCpu)
          .map(([k, v]) => `${k} ${v}`)
          .join(", ")}`,
      );
      if (flags["capacity-only"]) return;
    }

    // The load.
    const operator = new SimulatedOperator();
    const handsets = devices.map((d) => {
      if (d.msisdn) operator.registerSim(d.msisdn, "operator_b", { pin: PIN, balance: 1_000_000_000 });
      return new SimulatedHandset({
        baseUrl: base,
        token: d.token,
        operator,
        sims: d.simId ? new Map([[d.simId, { msisdn: d.msisdn!, operator: "operator_b" as const }]]) : new Map(),
      });
    });
    const before = await dispatchWrites(databaseUrl);
    const stats = {
      polls: 0,
      empty: 0,
      claims: 0,
      busy: 0,
      pollErrors: 0,
      pollErrorSamples: [] as string[],
      latencies: [] as number[],
      /** The polls' latencies by the second of the measured window they ended in. */
      windows: [] as number[][],
      emptyLatencies: [] as number[],
      outcomes: 0,
      created: 0,
      replays: 0,
      createErrors: 0,
      createErrorSamples: [] as string[],
      duplicateViolations: 0,
      creationLatencies: [] as number[],
    };
    // Every piece of non-empty work since the load started (warm-up included), to explain the writes.
    const work = { created: 0, claims: 0, outcomes: 0 };
    let measuring = false;
    let measureStart = 0;
    let stopping = false;
    const inflight = new Set<Promise<unknown>>();
    const track = <T>(p: Promise<T>) => {
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
      return p;
    };

    async function pollOnce(i: number): Promise<void> {
      const r = await call(base, "GET", "/v1/device/next", { authorization: `Bearer ${devices[i].token}` });
      if (measuring) {
        stats.polls += 1;
        stats.latencies.push(r.ms);
        ((stats.windows[Math.floor((performance.now() - measureStart) / 1000)] ??= []) as number[]).push(r.ms);
        if (r.status === 204) {
          stats.empty += 1;
          stats.emptyLatencies.push(r.ms);
        } else if (r.status === 200) stats.claims += 1;
        else if (r.status === 409) stats.busy += 1;
        else {
          stats.pollErrors += 1;
          if (stats.pollErrorSamples.length < 5) stats.pollErrorSamples.push(`${r.status} ${JSON.stringify(r.body)}`);
        }
      }
      if (r.status === 200) {
        work.claims += 1;
        const op = r.body as DispatchPayload;
        const result = await handsets[i].dial(op);
        const rep = await handsets[i].report(op, result);
        if (rep.status === 200) work.outcomes += 1;
        if (measuring && rep.status === 200) stats.outcomes += 1;
      }
    }

    const t0 = performance.now();
    const timers: NodeJS.Timeout[] = [];
    devices.forEach((_, i) => {
      const phase = Math.random() * INTERVAL_MS;
      const tick = (k: number) => {
        if (stopping) return;
        void track(pollOnce(i));
        const next = t0 + phase + (k + 1) * INTERVAL_MS - performance.now();
        timers[i] = setTimeout(() => tick(k + 1), Math.max(0, next));
      };
      timers[i] = setTimeout(() => tick(0), phase);
    });

    // Creations with replays: a share repeats a recent request_id (409 expected); every
    // tenth new request is sent three times at once (exactly one 202 expected).
    const recent: string[] = [];
    const createBody = (requestId: string) => ({
      request_id: requestId,
      agent_id: agentId,
      operator: "operator_b",
      client: { msisdn: `69${String(Math.floor(Math.random() * 1e7)).padStart(7, "0")}`, nom: "Bench Customer" },
      montant: 1000,
    });
    // A replay sends the very body its request id was first sent with (another body is
    // `request_id_reused`, an error this benchmark counts as one).
    const bodies = new Map<string, ReturnType<typeof createBody>>();
    const createOne = async (requestId: string) => {
      let body = bodies.get(requestId);
      if (!body) bodies.set(requestId, (body = createBody(requestId)));
      const r = await call(base, "POST", "/v1/operations", { "x-api-key": API_KEY }, body);
      if (r.status === 202) work.created += 1;
      if (measuring) stats.creationLatencies.push(r.ms);
      return r;
    };
    let creationIndex = 0;
    const creationTimer = setInterval(() => {
      if (stopping) return;
      creationIndex += 1;
      if (recent.length > 0 && Math.random() < REPLAY_SHARE) {
        const requestId = recent[Math.floor(Math.random() * recent.length)];
        void track(
          createOne(requestId).then((r) => {
            if (!measuring) return;
            if (r.status === 409 && r.body?.request_id === requestId) stats.replays += 1;
            else {
              stats.createErrors += 1;
              if (stats.createErrorSamples.length < 5)
                stats.createErrorSamples.push(`replay ${r.status} ${JSON.stringify(r.body)}`);
            }
          }),
        );
        return;
      }
      const requestId = randomUUID();
      const copies = creationIndex % 10 === 0 ? 3 : 1;
      void track(
        Promise.all(Array.from({ length: copies }, () => createOne(requestId))).then((answers) => {
          // Replayed later only once its first answer is in.
          recent.push(requestId);
          if (recent.length > 200) bodies.delete(recent.shift()!);
          if (!measuring) return;
          const accepted = answers.filter((a) => a.status === 202).length;
          const replayed = answers.filter((a) => a.status === 409).length;
          if (accepted !== 1 || accepted + replayed !== copies) {
            stats.duplicateViolations += accepted > 1 ? 1 : 0;
            stats.createErrors += copies - accepted - replayed;
            for (const a of answers)
              if (a.status !== 202 && a.status !== 409 && stats.createErrorSamples.length < 5)
                stats.createErrorSamples.push(`${a.status} ${JSON.stringify(a.body)}`);
          }
          stats.created += accepted;
          stats.replays += replayed;
        }),
      );
    }, 1000 / CREATIONS_PER_S);

    const periodic = flags.metrics || process.env.BENCH_METRICS === "1";
    const scrapes = new MetricsScraper(periodic ? (system.line.metrics ?? {}) : {});
    const fleetMetrics: string | undefined = system.line.metrics?.fleet;
    scrapes.start();
    await new Promise((r) => setTimeout(r, WARMUP_S * 1000));
    measureStart = performance.now();
    measuring = true;
    const cpuBefore = cpuTicks(dbName);
    const callsBefore = await rpcCalls(fleetMetrics);
    await new Promise((r) => setTimeout(r, DURATION_S * 1000));
    const cpuAfter = cpuTicks(dbName);
    const callsAfter = await rpcCalls(fleetMetrics);
    measuring = false;
    const measured = (performance.now() - measureStart) / 1000;
    const fleetCalls = callsPerS(callsBefore, callsAfter, measured);
    const cpu = Object.fromEntries(
      [...cpuAfter.entries()]
        .map(([k, v]) => [k, Number((((v - (cpuBefore.get(k) ?? 0)) / 100 / measured) * 100).toFixed(0))] as const)
        .filter(([, pct]) => pct > 0)
        .sort((a, b) => b[1] - a[1]),
    );
    stopping = true;
    await scrapes.stop();
    clearInterval(creationTimer);
    for (const t of timers) clearTimeout(t);
    await Promise.allSettled([...inflight]);

    // Rows of dispatch.operations written while measuring, against what the non-empty work
    // explains: one insert per accepted creation, one update per claim and per outcome.
    const expectedUpdates = work.claims + work.outcomes;
    const after = await settledWrites(
      databaseUrl,
      (w) => w.ins - w.del - (before.ins - before.del) >= work.created && w.upd - before.upd >= expectedUpdates,
    );
    const writes = { ins: after.ins - before.ins, upd: after.upd - before.upd, del: after.del - before.del };

    stats.latencies.sort((a, b) => a - b);
    stats.emptyLatencies.sort((a, b) => a - b);
    stats.creationLatencies.sort((a, b) => a - b);
    const pollsPerS = stats.polls / measured;
    const p99 = percentile(stats.latencies, 99);
    const summary = {
      handsets: HANDSETS,
      interval_ms: INTERVAL_MS,
      measured_s: Number(measured.toFixed(1)),
      polls_per_s: Number(pollsPerS.toFixed(1)),
      poll_p50_ms: Number(percentile(stats.latencies, 50).toFixed(1)),
      poll_p99_ms: Number(p99.toFixed(1)),
      poll_max_ms: Number((stats.latencies.at(-1) ?? NaN).toFixed(1)),
      poll_p99_window_median_ms: Number(medianWindowP99(stats.windows).toFixed(1)),
      empty_poll_p99_ms: Number(percentile(stats.emptyLatencies, 99).toFixed(1)),
      polls: stats.polls,
      empty_polls: stats.empty,
      claims: stats.claims,
      busy_409: stats.busy,
      poll_errors: stats.pollErrors,
      outcomes_reported: stats.outcomes,
      creations_per_s: Number((stats.created / measured).toFixed(1)),
      created_202: stats.created,
      replays_409: stats.replays,
      creation_errors: stats.createErrors,
      duplicate_executions: stats.duplicateViolations,
      creation_p99_ms: Number(percentile(stats.creationLatencies, 99).toFixed(1)),
      dispatch_operations_rows_written: writes,
      writes_explained_by_work: { inserts: work.created, updates: expectedUpdates },
      // A racing repeat of one request_id inserts speculatively and PostgreSQL removes the
      // loser's tuple (counted as one insert and one delete): net inserts are what counts.
      empty_polls_wrote_nothing: writes.ins - writes.del === work.created && writes.upd === expectedUpdates,
      hello_world_rps: reference ? Number(reference.rps.toFixed(0)) : null,
      poll_capacity_rps: capacity ? Number(capacity.rps.toFixed(0)) : null,
      poll_load_vs_hello_world: reference ? Number((pollsPerS / reference.rps).toFixed(3)) : null,
      poll_capacity_vs_hello_world: reference && capacity ? Number((capacity.rps / reference.rps).toFixed(3)) : null,
      cpu_percent_of_one_core: cpu,
      fleet_calls_per_s: Object.fromEntries(fleetCalls.map((c) => [c.method, Number(c.perS.toFixed(1))])),
    };
    const goal = pollsPerS >= 750 * 0.98 && p99 <= 150 && stats.pollErrors === 0 && summary.empty_polls_wrote_nothing;
    log("");
    log(`polls/s            ${summary.polls_per_s} (target ${((HANDSETS * 1000) / INTERVAL_MS).toFixed(0)})`);
    log(
      `poll latency       p50 ${summary.poll_p50_ms} ms, p99 ${summary.poll_p99_ms} ms, max ${summary.poll_max_ms} ms (empty polls p99 ${summary.empty_poll_p99_ms} ms)`,
    );
    log(
      `poll p99 by second median ${summary.poll_p99_window_median_ms} ms of ${stats.windows.filter(Boolean).length} one-second windows (a stall moves one or two of them)`,
    );
    log(
      `polls              ${stats.polls}: ${stats.empty} empty (204), ${stats.claims} claimed (200), ${stats.busy} busy (409), ${stats.pollErrors} errors`,
    );
    log(
      `creations/s        ${summary.creations_per_s} (${stats.created} accepted 202, ${stats.replays} replays answered 409, ${stats.createErrors} errors, ${stats.duplicateViolations} double executions; p99 ${summary.creation_p99_ms} ms)`,
    );
    log(
      `dispatch writes    operations: ${writes.ins} inserted (${writes.del} of them speculative, removed by a racing repeat), ${writes.upd} updated; the load's work (warm-up included) explains ${work.created} inserts and ${expectedUpdates} updates -> empty polls wrote ${summary.empty_polls_wrote_nothing ? "nothing" : "SOMETHING"}`,
    );
    if (reference) {
      log(
        `reference          express hello-world ${summary.hello_world_rps} req/s; empty-poll capacity ${summary.poll_capacity_rps} req/s (${summary.poll_capacity_vs_hello_world} of hello-world); this load used ${summary.poll_load_vs_hello_world} of hello-world's throughput`,
      );
    }
    log(
      `CPU (% of one core) ${Object.entries(cpu)
        .map(([k, v]) => `${k} ${v}`)
        .join(", ")}`,
    );
    const fleetCpuMs = ((cpu.fleet ?? 0) / 100) * 1000; // CPU-ms a second
    const fleetCallTotal = fleetCalls.reduce((n, c) => n + c.perS, 0);
    log(
      `fleet calls/s      ${fleetCallTotal.toFixed(1)} in all, ${fleetCallTotal ? (fleetCpuMs / fleetCallTotal).toFixed(2) : "-"} CPU-ms each on average (fleet ${cpu.fleet ?? 0} % of a core); by kind (calls/s, mean ms served): ${
        fleetCalls.map((c) => `${c.method} ${c.perS.toFixed(1)} (${c.meanMs.toFixed(1)} ms)`).join(", ") || "none"
      }`,
    );
    for (const line of scrapes.report()) log(line);
    for (const s of stats.pollErrorSamples) log(`  poll error sample: ${s}`);
    for (const s of stats.createErrorSamples) log(`  creation error sample: ${s}`);
    log(`goal (>= 750 polls/s, p99 <= 150 ms, no errors, empty polls write nothing): ${goal ? "met" : "NOT met"}`);
    log(JSON.stringify(summary));
  } finally {
    for (const c of children) c.kill("SIGTERM");
    closeConnections();
    await new Promise((r) => setTimeout(r, 500));
    if (!flags["keep-db"]) {
      await admin
        .query(`drop database if exists ${dbName} with (force)`)
        .catch((err: unknown) => log(`could not drop ${dbName}: ${String(err)}`));
    }
    await admin.end();
  }
}

await main();
process.exit(0);

/**
 * The median of the one-second windows' p99 (windows of at least 20 polls): a stall of a few
 * hundred milliseconds makes one or two windows slow and moves the whole run's p99, but not
 * this; a poll slow every time (the regression of issue 36) moves every window.
 */
function medianWindowP99(windows: number[][]): number {
  const p99s = windows
    .filter((w) => w && w.length >= 20)
    .map((w) =>
      percentile(
        [...w].sort((a, b) => a - b),
        99,
      ),
    )
    .sort((a, b) => a - b);
  return p99s.length === 0 ? NaN : p99s[Math.floor(p99s.length / 2)];
}
