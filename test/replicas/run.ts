// The system as the chart deploys it (`npm run test:replicas`). Not a vitest file: it runs
// minutes and prints a table; it exits 1 when a check fails.
//
// The chart's replicas of every service (two: each pair behind a round-robin TCP proxy on the
// service's address, as a Kubernetes Service) and of the gateway, with the chart's pools (its
// connection budget, values `database`: test/support/chart-values.ts), as separate processes
// on a fresh database and the real Kafka broker, all started at the same moment. Then, through
// both gateways, phase after phase:
//   load     right after readiness, a create burst (the profile's `burst` request ids at once,
//            each sent to both gateways), then creates (half by board sessions, half by the
//            API key), each request id sent to
//            both gateways at once; handsets polling the gateways in turn, dialling with the
//            simulated operator, reporting, and forwarding each SMS three times at once (the
//            app's retry with the same client id through the other gateway, and the
//            operator's repeat under a new id); intake transactions launched; a contact import;
//   rolling  the same load while each replica is stopped (SIGTERM) and started again, one at a
//            time, the next once the restarted one serves;
//   kill -9  the same load while one replica of each component is killed and started again;
//   settle   no load: waits for the re-drive.
// Requests go to the gateways as through the Service in front of them (a refused connection
// goes to the other gateway), and a 503 outcome_unknown is sent again with the same ids, as
// the handset app and automation do. It fails on any other 5xx or unanswered request, on a 503
// outcome_unknown outside the phases where replicas stop or die (from the moment every component
// reported ready: provisioning included), on a create burst right after readiness whose p99
// passes 10 s (the starved pools of the old chart gave 12-13 s; the goal, 3 s, is reported, and
// measured against a reference in `bench:smoke`: a timed limit here fails on a busy machine), on the
// database holding more connections than the chart's budget allows for the replicas run, any process exit at start, any double
// execution (a request id with two operations, replays answered with different operations)
// or double confirmation, any acknowledged create or SMS lost, any SMS still pending after
// the re-drive interval once the load stopped.
//
//   npm run test:replicas                      # the short profile (CI)
//   npm run test:replicas -- --profile full    # longer phases, more handsets
//   npm run test:replicas -- --keep-logs
//   npm run test:replicas -- --pgbouncer       # the pools through a real PgBouncer (transaction
//                                              # mode, the chart's database.pgbouncer; needs the
//                                              # pgbouncer binary: apt-get install pgbouncer)
// Environment: DATABASE_URL as for the tests (test/infra/postgres.ts); KAFKA_BROKERS to use a
// running broker, else one is started from the Maven Central jars (test/infra/kafka.ts).

import { randomBytes, randomUUID } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import pg from "pg";
import { call, closeConnections, percentile, type Reply } from "../bench/http.ts";
import { ensureKafka } from "../infra/kafka.ts";
import { createDatabase, dropStaleTestDatabases, ensurePostgres } from "../infra/postgres.ts";
import { sleep } from "../infra/util.ts";
import { Api } from "../support/api.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "../support/credentials.ts";
import { grantAccess, provisionHandset } from "../support/fleet-fixtures.ts";
import { SimulatedHandset, type DispatchPayload } from "../simulator/handset.ts";
import { OperatorSms, type OutgoingSms } from "../simulator/operator-sms.ts";
import { SimulatedOperator } from "../simulator/operator.ts";
import { cleanupsOnSignal, type Cleanups } from "../chaos/cleanup.ts";
import { Checks } from "../chaos/checks.ts";
import {
  SERVICES,
  describeExit,
  startProcesses,
  waitServing,
  type ChaosSystem,
  type ComponentName,
} from "../chaos/processes.ts";
import {
  chartValues,
  components,
  connectionBudget,
  merge,
  parseValues,
  startReplicas,
} from "../support/chart-values.ts";
import { startPgBouncer } from "./pgbouncer.ts";

const PROFILES = {
  short: { handsets: 6, agents: 4, createsPerS: 4, loadS: 20, faultGapS: 2, burst: 40 },
  full: { handsets: 16, agents: 10, createsPerS: 8, loadS: 60, faultGapS: 5, burst: 100 },
};
/**
 * The create burst's p99 right after readiness, on this 2-core machine: the goal (reported) and the
 * failure line, below the 12-13 s of the old chart's starved pools and above a busy machine's noise
 * (2.4-3.2 s quiet, 7.3 s at load average 17). Its speed is judged in `bench:smoke`, against a
 * reference measured in the same run.
 */
const BURST_P99_GOAL_MS = 3000;
const BURST_P99_LIMIT_MS = 10_000;
const REDRIVE_INTERVAL_MS = 1000;
const REDRIVE_GRACE_MS = 3000;
const CALL_TIMEOUT_MS = 15_000;
const BALANCE = 1_000_000_000_000;
const DATABASE_PREFIX = "tops_replicas";
/** The phases in which a replica stops or dies mid-call, so a 503 outcome_unknown is the right answer. */
const OUTCOME_UNKNOWN_ALLOWED = ["rolling restart", "kill -9"];

const { values: flags } = parseArgs({
  options: {
    profile: { type: "string" },
    "keep-logs": { type: "boolean", default: false },
    pgbouncer: { type: "boolean", default: false },
  },
});
const profileName = flags.profile ?? process.env.REPLICAS_PROFILE ?? "short";
if (!(profileName in PROFILES)) throw new Error(`unknown profile ${profileName}: short or full`);
const P = PROFILES[profileName as keyof typeof PROFILES];

const log = (s: string) => process.stdout.write(`${s}\n`);
const t0 = performance.now();
const step = (s: string) => log(`[replicas ${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}`);

interface Answer {
  phase: string;
  what: string;
  status: number;
  ms: number;
  /** `context.reason` of an error answer. */
  reason?: string;
  /** No answer: the connection was cut mid-request (a gateway that stopped or died). */
  cut?: boolean;
}

/** The connection was reset or closed before an answer: the outcome is unknown, as for a 503 outcome_unknown. */
const cutConnection = (r: Reply) => r.status === 0 && /ECONNRESET|socket hang up|EPIPE/.test(String(r.body));

/** Every answer, by the phase it was sent in. */
class Ledger {
  phase = "provision";
  gateways: string[] = [];
  readonly answers: Answer[] = [];
  readonly creates = new Map<string, Set<string>>();
  readonly sms: { simId: string; clientMessageId: string; operationId: string; at: number }[] = [];

  /**
   * Sends through `gateway` and records the answer. A connection the gateway refused carried
   * nothing (the gateway is stopped): like the Service in front of the gateways, the request
   * goes to the next gateway, and only the answer it gets counts.
   */
  async send(what: string, request: (gateway: string) => Promise<Reply>, gateway: string): Promise<Reply> {
    const phase = this.phase;
    let r = await request(gateway);
    for (const other of this.gateways.filter((g) => g !== gateway)) {
      if (!(r.status === 0 && /ECONNREFUSED/.test(String(r.body)))) break;
      r = await request(other);
    }
    const cut = cutConnection(r);
    this.answers.push({ phase, what, status: r.status, ms: r.ms, reason: r.body?.context?.reason, cut });
    if ((r.status === 0 && !cut) || (r.status >= 500 && r.body?.context?.reason !== "outcome_unknown"))
      step(`${phase}: ${what} answered ${r.status} ${JSON.stringify(r.body)}`);
    return r;
  }
}

interface Row {
  phase: string;
  requests: number;
  /** 5xx other than outcome_unknown, and requests no gateway answered: never allowed. */
  failed: number;
  /**
   * 503 outcome_unknown, or a connection cut before the answer (both sent again with the same
   * ids until answered): allowed only while replicas stop or die.
   */
  unknown: number;
  p50: number;
  p99: number;
  recovery: string;
}

async function main(): Promise<number> {
  step(`profile ${profileName}: ${JSON.stringify(P)}`);
  const cleanups = cleanupsOnSignal(log);
  const logDir = mkdtempSync(path.join(os.tmpdir(), "tops-replicas-"));
  let failed = true;
  try {
    const [postgres, kafka] = await Promise.all([ensurePostgres(step), ensureKafka(step)]);
    cleanups.push(
      () => kafka.stop(),
      () => postgres.stop(),
    );
    await dropStaleTestDatabases(postgres.adminUrl, DATABASE_PREFIX);
    const db = await createDatabase(postgres.adminUrl, DATABASE_PREFIX);
    cleanups.push(() => db.drop());
    step(`database ${db.name}; Kafka ${kafka.description}; component logs in ${logDir}`);
    let poolUrl: string | undefined;
    if (flags.pgbouncer) {
      const bouncer = await startPgBouncer(db.url, pgbouncerPoolSize(), path.join(logDir, "pgbouncer.log"));
      cleanups.push(() => bouncer.stop());
      poolUrl = bouncer.url;
      step(`PgBouncer (transaction mode, ${pgbouncerPoolSize()} server connections) at ${new URL(poolUrl).host}`);
    }
    const { rows, problems, goals } = await run(db.url, kafka.brokers, logDir, cleanups, poolUrl);
    printTable(rows);
    for (const g of goals) log(g);
    for (const p of problems) log(`FAIL ${p}`);
    failed = problems.length > 0;
    log(failed ? `${problems.length} problem(s)` : "every check passed");
    return failed ? 1 : 0;
  } finally {
    await cleanups.run();
    closeConnections();
    if (failed) printLogTails(logDir);
    if (failed || flags["keep-logs"]) log(`component logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

async function run(
  databaseUrl: string,
  brokers: string,
  logDir: string,
  cleanups: Cleanups,
  /** The pools' database through PgBouncer (--pgbouncer). */
  poolUrl?: string,
): Promise<{ rows: Row[]; problems: string[]; goals: string[] }> {
  const problems: string[] = [];
  const goals: string[] = [];
  const rows: Row[] = [];
  const topicPrefix = `replicas${Date.now().toString(36)}${randomBytes(3).toString("hex")}.`;
  // What a deployer installs: the chart's replicas and the pools its connection budget derives.
  const values = deployedValues();
  const budget = connectionBudget(values);
  const chart = new Map(components(values).map((c) => [c.name, c]));
  const serviceReplicas = new Set(SERVICES.map((s) => startReplicas(chart.get(s)!)));
  if (serviceReplicas.size !== 1) throw new Error(`the runner starts every service as often: ${[...serviceReplicas]}`);
  const replicas = [...serviceReplicas][0];
  const gateways = startReplicas(chart.get("gateway")!);
  const poolEnv = Object.fromEntries(
    SERVICES.map((s) => [
      s,
      Object.fromEntries(chart.get(s)!.database.poolEnv.map((v) => [v, String(budget.pools[s])])),
    ]),
  );
  // The most the processes may hold at once by the chart's arithmetic, at the replicas run.
  // Through PgBouncer the pools connect to it, and its server connections count instead.
  const allowed = SERVICES.reduce(
    (n, s) => n + replicas * ((poolUrl ? 0 : budget.pools[s]) + Math.max(1, chart.get(s)!.database.listen)),
    poolUrl ? pgbouncerPoolSize() : 0,
  );
  step(
    `chart: ${replicas} replicas of each service, ${gateways} gateways; pools ${JSON.stringify(budget.pools)}; ` +
      `${allowed} connections at most at these replicas (budget ${budget.connections}, ${budget.total} at the maximum replicas)`,
  );
  const connections = new ConnectionWatch(databaseUrl, "replicas-checks");
  cleanups.push(() => connections.stop());
  const started = performance.now();
  const system = await startProcesses(
    {
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      DATABASE_URL: databaseUrl,
      KAFKA_BROKERS: brokers,
      KAFKA_TOPIC_PREFIX: topicPrefix,
      API_KEYS: TEST_API_KEY,
      BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
      RATE_LIMIT_RPS: "100000",
      RATE_LIMIT_BURST: "100000",
      DEVICE_COOLDOWN_S: "0",
      // As the chart sets them with database.pgbouncer.enabled.
      ...(poolUrl ? { DATABASE_POOL_URL: poolUrl, DATABASE_PREPARED_STATEMENTS: "false" } : {}),
      EVIDENCE_REDRIVE_INTERVAL_MS: String(REDRIVE_INTERVAL_MS),
      EVIDENCE_REDRIVE_GRACE_MS: String(REDRIVE_GRACE_MS),
    },
    logDir,
    { replicas, gateways, env: poolEnv },
  );
  cleanups.push(() => system.stop());
  await Promise.all(system.gatewayUrls.map((u) => waitServing(u, 180_000)));
  const startS = (performance.now() - started) / 1000;
  step(
    `serving after ${startS.toFixed(1)} s: ${replicas} replicas of each service, ${system.gatewayUrls.length} gateways`,
  );
  for (const e of system.unexpectedExits) problems.push(`start: ${describeExit(e)}`);
  rows.push({
    phase: "start",
    requests: 0,
    failed: system.unexpectedExits.length,
    unknown: 0,
    p50: NaN,
    p99: NaN,
    recovery: `${startS.toFixed(1)} s`,
  });

  const ledger = new Ledger();
  ledger.gateways = system.gatewayUrls;
  const provisionFrom = ledger.answers.length;
  const world = await provision(system, ledger);
  rows.push(summarize("provision", ledger.answers.slice(provisionFrom), "-"));
  const load = new Load(system.gatewayUrls, world, ledger);
  cleanups.push(() => load.stop());
  const checks = new Checks(databaseUrl, "replicas-checks");
  cleanups.push(() => checks.close());

  // When each phase began, to say in which one a process exited by itself.
  const began: [string, number][] = [["provision", performance.now()]];
  const phaseAt = (at: number) => began.findLast(([, t]) => t <= at)?.[0] ?? "provision";
  const phase = async (name: string, during: () => Promise<string>) => {
    ledger.phase = name;
    began.push([name, performance.now()]);
    const from = ledger.answers.length;
    const recovery = await during();
    rows.push(summarize(name, ledger.answers.slice(from), recovery));
  };
  load.start(P.burst);
  await phase("load", async () => (await sleep(P.loadS * 1000), "-"));
  await phase("rolling restart", async () => {
    const times: number[] = [];
    for (const name of [...SERVICES, "gateway"] as ComponentName[]) {
      for (const [i, c] of system.replicas(name).entries()) {
        const t = performance.now();
        await c.stop();
        c.start();
        await untilServing(system, name, i);
        times.push((performance.now() - t) / 1000);
        await sleep(P.faultGapS * 1000);
      }
    }
    return `max ${Math.max(...times).toFixed(1)} s per replica`;
  });
  await phase("kill -9", async () => {
    const times: number[] = [];
    for (const name of [...SERVICES, "gateway"] as ComponentName[]) {
      const t = performance.now();
      await system.component(name, 1).killAndRestart();
      await untilServing(system, name, 1);
      times.push((performance.now() - t) / 1000);
      await sleep(P.faultGapS * 1000);
    }
    return `max ${Math.max(...times).toFixed(1)} s per replica`;
  });
  ledger.phase = "settle";
  began.push(["settle", performance.now()]);
  await load.stop();
  const settleFrom = performance.now();
  await sleep(REDRIVE_GRACE_MS + 3 * REDRIVE_INTERVAL_MS);
  rows.push({
    phase: "settle",
    requests: 0,
    failed: 0,
    unknown: 0,
    p50: NaN,
    p99: NaN,
    recovery: `${((performance.now() - settleFrom) / 1000).toFixed(1)} s`,
  });

  for (const r of rows) {
    if (r.failed && r.phase !== "start") problems.push(`${r.phase}: ${r.failed} answers 5xx or none`);
    // A replica that stops or dies in the middle of a call leaves its outcome unknown; the
    // gateway says so (503, retry with the same id) and the retry is answered. Anywhere else
    // an unknown outcome is a fault.
    if (r.unknown && !OUTCOME_UNKNOWN_ALLOWED.includes(r.phase))
      problems.push(`${r.phase}: ${r.unknown} answers 503 outcome_unknown or cut connections with no replica stopping`);
  }
  goals.push(...goalLines(ledger.answers.filter((a) => a.phase === "load")));
  // Every copy of the burst's creates, from the first send to the answer that took it.
  const burst = load.burstMs.sort((a, b) => a - b);
  const burstP99 = percentile(burst, 99);
  goals.push(
    `goal: create burst right after readiness within ${BURST_P99_GOAL_MS} ms p99: ${burst.length} answers, p50 ${percentile(burst, 50).toFixed(0)} ms, p99 ${burstP99.toFixed(0)} ms (${burstP99 <= BURST_P99_GOAL_MS ? "met" : "not met"}; fails above ${BURST_P99_LIMIT_MS} ms)`,
  );
  if (!(burstP99 <= BURST_P99_LIMIT_MS))
    problems.push(`create burst p99 ${burstP99.toFixed(0)} ms, above ${BURST_P99_LIMIT_MS} ms`);
  const peak = await connections.stop();
  goals.push(`database connections of the system: peak ${peak} (the chart allows ${allowed} at these replicas)`);
  if (peak > allowed) problems.push(`the system held ${peak} database connections, more than the chart's ${allowed}`);
  for (const e of system.unexpectedExits.slice(rows[0].failed ?? 0))
    problems.push(`${phaseAt(e.at)}: ${describeExit(e)}`);
  problems.push(...(await verify(checks, ledger)));
  return { rows, problems, goals };
}

/** The chart's values as installed: its defaults, with PgBouncer on under --pgbouncer. */
function deployedValues() {
  const values = chartValues();
  return flags.pgbouncer ? merge(values, parseValues("database:\n  pgbouncer:\n    enabled: true\n")) : values;
}

/** The server connections of the chart's PgBouncer (one process here). */
const pgbouncerPoolSize = () =>
  Number((deployedValues().database as { pgbouncer?: { poolSize?: number } }).pgbouncer?.poolSize ?? 15);

/** Until the restarted replica serves: a gateway's health, or the replica's own gRPC port. */
async function untilServing(system: ChaosSystem, name: ComponentName, replica: number): Promise<void> {
  if (name === "gateway") return waitServing(system.gatewayUrls[replica], 120_000);
  await system.component(name, replica).serving(120_000);
}

interface World {
  apiAgentId: string;
  sessions: { token: string; agentId: string }[];
  handsets: { token: string; simId: string; msisdn: string }[];
  operator: SimulatedOperator;
  adminToken: string;
}

async function provision(system: ChaosSystem, ledger: Ledger): Promise<World> {
  const api = new Api(system.gatewayUrl);
  const admin = await api.bootstrapAdmin();
  const operator = new SimulatedOperator();
  const handsets: World["handsets"] = [];
  for (let i = 0; i < P.handsets; i++) {
    const { device, sims } = await provisionHandset(api, admin.token, { balance: BALANCE, label: `replica ${i}` });
    operator.registerSim(sims[0].msisdn, "operator_a", { pin: sims[0].pin, balance: BALANCE });
    handsets.push({ token: device.token, simId: sims[0].simId, msisdn: sims[0].msisdn });
  }
  const grant = { simIds: handsets.map((h) => h.simId), opTypes: ["deposit"], maxAmount: 10_000_000 };
  const apiAgent = await api.createAgent(admin.token, { login: "replicas-automation" });
  await grantAccess(api, admin.token, apiAgent.agentId, grant);
  const sessions: World["sessions"] = [];
  for (let i = 0; i < P.agents; i++) {
    const a = await api.createAgent(admin.token, { login: `replicas-board-${i}` });
    await grantAccess(api, admin.token, a.agentId, grant);
    sessions.push({ token: a.token, agentId: a.agentId });
  }
  // Fleet's SIMs and grants reach dispatch through Kafka: creates succeed once they have.
  for (const until = Date.now() + 60_000; ; await sleep(500)) {
    const r = await ledger.send(
      "create (readiness)",
      (g) => call(g, "POST", "/v1/operations", { "x-api-key": TEST_API_KEY }, createBody(apiAgent.agentId, 999)),
      system.gatewayUrl,
    );
    if (r.status === 202) break;
    if (Date.now() > until) throw new Error(`creates never succeeded: ${r.status} ${JSON.stringify(r.body)}`);
  }
  step(`provisioned ${P.handsets} handsets, ${P.agents} board agents; creates accepted`);
  return { apiAgentId: apiAgent.agentId, sessions, handsets, operator, adminToken: admin.token };
}

const createBody = (agentId: string | undefined, montant: number, requestId = `replicas-${randomUUID()}`) => ({
  request_id: requestId,
  ...(agentId ? { agent_id: agentId } : {}),
  operator: "operator_a",
  type_op: "deposit",
  montant,
  client: { msisdn: "670000001", nom: "Replica Load" },
});

const ok = (r: Reply) => r.status >= 200 && r.status < 300;
const retryable = (r: Reply) => r.status === 0 || r.status === 429 || r.status >= 500;

class Load {
  private running = true;
  private readonly loops: Promise<void>[] = [];
  private readonly inFlight = new Set<Promise<unknown>>();
  private amount = 1000;
  private turn = 0;

  constructor(
    private readonly gateways: string[],
    private readonly world: World,
    private readonly ledger: Ledger,
  ) {}

  private gateway(): string {
    return this.gateways[this.turn++ % this.gateways.length];
  }

  /** How long each create of the burst took, every gateway's copy, retries included. */
  readonly burstMs: number[] = [];

  start(burst = 0): void {
    if (burst) this.loops.push(this.burst(burst));
    this.loops.push(this.createLoop());
    for (const h of this.world.handsets) this.loops.push(this.handsetLoop(h));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    await Promise.all(this.inFlight);
  }

  private track(p: Promise<unknown>): void {
    this.inFlight.add(p);
    void p.finally(() => this.inFlight.delete(p));
  }

  private async createLoop(): Promise<void> {
    const begun = performance.now();
    for (let k = 0; this.running; k++) {
      const due = begun + (k * 1000) / P.createsPerS - performance.now();
      if (due > 0) await sleep(due);
      if (this.inFlight.size < 200) this.track(this.createOne(k));
    }
  }

  /** `n` creates at once, as a deployer's clients right after the start. */
  private async burst(n: number): Promise<void> {
    await Promise.all(Array.from({ length: n }, (_, k) => this.createOne(k, this.burstMs)));
  }

  /** One request id sent to every gateway at once: one operation, the same one in every 2xx answer. */
  private async createOne(k: number, took?: number[]): Promise<void> {
    const session = k % 2 === 0 ? this.world.sessions[(k / 2) % this.world.sessions.length] : undefined;
    const headers: Record<string, string> = session
      ? { authorization: `Bearer ${session.token}` }
      : { "x-api-key": TEST_API_KEY };
    const body = createBody(session ? undefined : this.world.apiAgentId, this.amount++);
    const what = session ? "create (session)" : "create (API key)";
    const answers = await Promise.all(
      this.gateways.map(async (g) => {
        const from = performance.now();
        const r = await this.untilTaken(
          what,
          (to) => call(to, "POST", "/v1/operations", headers, body, CALL_TIMEOUT_MS),
          g,
        );
        took?.push(performance.now() - from);
        return r;
      }),
    );
    const ids = this.ledger.creates.get(body.request_id) ?? new Set<string>();
    for (const r of answers)
      if (ok(r) || r.status === 409) ids.add(r.body?.operation_id ?? r.body?.context?.operation_id);
    if (ids.size) this.ledger.creates.set(body.request_id, ids);
  }

  /**
   * Sends until an answer that is not "retry": what the handset app and automation do with a
   * 503 outcome_unknown (the same request again, same ids) or a lost connection.
   */
  private async untilTaken(what: string, send: (gateway: string) => Promise<Reply>, first?: string): Promise<Reply> {
    for (let attempt = 0; ; attempt++) {
      const r = await this.ledger.send(what, send, attempt === 0 && first ? first : this.gateway());
      if (!retryable(r) || !this.running) return r;
      await sleep(Math.min(1000, 100 * 2 ** attempt));
    }
  }

  private async handsetLoop(h: World["handsets"][number]): Promise<void> {
    const auth = { authorization: `Bearer ${h.token}` };
    const handset = new SimulatedHandset({
      baseUrl: this.gateways[0],
      token: h.token,
      operator: this.world.operator,
      sims: new Map([[h.simId, { msisdn: h.msisdn, operator: "operator_a" }]]),
    });
    const sms = new OperatorSms({ baseUrl: this.gateways[0], token: h.token });
    while (this.running) {
      const polled = await this.ledger.send(
        "poll",
        (g) => call(g, "GET", "/v1/device/next", auth, undefined, CALL_TIMEOUT_MS),
        this.gateway(),
      );
      if (polled.status !== 200) {
        await sleep(500);
        continue;
      }
      const op = polled.body as DispatchPayload;
      const result = await handset.dial(op);
      await this.untilTaken("outcome", (g) =>
        call(
          g,
          "POST",
          "/v1/device/outcome",
          auth,
          {
            operation_id: op.operation_id,
            outcome: result.outcome,
            ussd_response: result.ussd_response,
            executed_at: result.executed_at.toISOString(),
          },
          CALL_TIMEOUT_MS,
        ),
      );
      for (const text of sms.smsFor(op, result)) await this.deliverThrice(auth, text, op.operation_id);
    }
  }

  /**
   * One SMS three times at once: twice with its client id (the app's retry, through each
   * gateway) and once under a new id (the operator sending it again: a restatement).
   */
  private async deliverThrice(auth: Record<string, string>, text: OutgoingSms, operationId: string): Promise<void> {
    const body = (clientMessageId: string) => ({
      sim_id: text.simId,
      subscription_slot: 0,
      messages: [
        {
          sender: text.sender,
          raw: text.raw,
          received_at: text.receivedAt.toISOString(),
          device_received_at: new Date().toISOString(),
          client_message_id: clientMessageId,
        },
      ],
    });
    const copies = [text.clientMessageId, text.clientMessageId, randomUUID()];
    const answers = await Promise.all(
      copies.map((id) =>
        this.untilTaken("sms", (g) => call(g, "POST", "/v1/device/messages", auth, body(id), CALL_TIMEOUT_MS)),
      ),
    );
    if (ok(answers[0]) && text.about.kind === "deposit")
      this.ledger.sms.push({
        simId: text.simId,
        clientMessageId: text.clientMessageId,
        operationId,
        at: performance.now(),
      });
  }
}

async function verify(checks: Checks, ledger: Ledger): Promise<string[]> {
  const problems: string[] = [];
  for (const [requestId, ids] of ledger.creates)
    if (ids.size > 1) problems.push(`request ${requestId} answered with ${ids.size} different operations`);
  const acked = [...ledger.creates].map(([requestId, ids]) => ({ requestId, operationId: [...ids][0], at: 0 }));
  for (const lost of await checks.lostCreates(acked))
    problems.push(`create ${lost.requestId} acknowledged but not stored`);
  for (const lost of await checks.lostSms(ledger.sms))
    problems.push(`SMS ${lost.clientMessageId} acknowledged but not stored`);
  problems.push(...(await checks.doubleConfirmations()));
  problems.push(...(await checks.unprovenBySms(ledger.sms)));
  for (const m of await checks.pendingMessages(new Date(Date.now() - REDRIVE_GRACE_MS - 2 * REDRIVE_INTERVAL_MS)))
    problems.push(`message ${m} still pending past the re-drive interval`);
  return problems;
}

/**
 * The connections the system's processes hold on its database, sampled every 250 ms (the
 * runner's own checks, named `spare`, left out): `stop` answers the peak.
 */
class ConnectionWatch {
  private peak = 0;
  private readonly client: pg.Client;
  private readonly timer: NodeJS.Timeout;
  private busy = false;

  constructor(
    databaseUrl: string,
    private readonly spare: string,
  ) {
    this.client = new pg.Client({ connectionString: databaseUrl, application_name: spare });
    this.client.on("error", () => undefined);
    const connected = this.client.connect();
    this.timer = setInterval(() => {
      if (this.busy) return;
      this.busy = true;
      void connected
        .then(() =>
          this.client.query<{ n: number }>(
            `select count(*)::int as n from pg_stat_activity
              where datname = current_database() and application_name <> $1`,
            [this.spare],
          ),
        )
        .then((r) => (this.peak = Math.max(this.peak, r.rows[0].n)))
        .catch(() => undefined)
        .finally(() => (this.busy = false));
    }, 250);
  }

  async stop(): Promise<number> {
    clearInterval(this.timer);
    await this.client.end().catch(() => undefined);
    return this.peak;
  }
}

function summarize(phase: string, answers: Answer[], recovery: string): Row {
  const ms = answers.map((a) => a.ms).sort((a, b) => a - b);
  return {
    phase,
    requests: answers.length,
    failed: answers.filter((a) => (a.status === 0 && !a.cut) || (a.status >= 500 && a.reason !== "outcome_unknown"))
      .length,
    unknown: answers.filter((a) => a.cut || (a.status === 503 && a.reason === "outcome_unknown")).length,
    p50: percentile(ms, 50),
    p99: percentile(ms, 99),
    recovery,
  };
}

/** The goals of the load phase, printed beside their figures (not asserted: timings move with the machine). */
function goalLines(load: Answer[]): string[] {
  const times = (what: string) =>
    load
      .filter((a) => a.what === what && a.status >= 200 && a.status < 300)
      .map((a) => a.ms)
      .sort((a, b) => a - b);
  const ms = (t: number[], p: number) => percentile(t, p).toFixed(0);
  const sms = percentile(times("sms"), 99);
  const session = times("create (session)");
  const apiKey = times("create (API key)");
  const ratio = percentile(session, 99) / percentile(apiKey, 99);
  return [
    `goal: SMS answered within 2 s p99 with two replicas: ${sms.toFixed(0)} ms (${sms <= 2000 ? "met" : "not met"})`,
    `goal: session create p99 within 1.5x the API-key create's: ${ms(session, 99)} / ${ms(apiKey, 99)} ms = ${ratio.toFixed(2)} (${ratio <= 1.5 ? "met" : "not met"}; p50 ${ms(session, 50)} / ${ms(apiKey, 50)} ms; ${session.length} and ${apiKey.length} answers)`,
  ];
}

function printTable(rows: Row[]): void {
  const fmt = (n: number) => (Number.isNaN(n) ? "-" : `${n.toFixed(0)} ms`);
  const head = ["phase", "requests", "5xx/none", "unknown (503/cut)", "p50", "p99", "recovery"];
  const body = rows.map((r) => [
    r.phase,
    String(r.requests),
    String(r.failed),
    String(r.unknown),
    fmt(r.p50),
    fmt(r.p99),
    r.recovery,
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  for (const line of [head, ...body]) log(line.map((c, i) => c.padEnd(widths[i])).join("  "));
}

function printLogTails(logDir: string): void {
  for (const name of [...SERVICES, "gateway"])
    for (const r of [1, 2]) {
      const file = path.join(logDir, `${name}-${r}.log`);
      try {
        const lines = readFileSync(file, "utf8").trim().split("\n").slice(-8);
        log(`--- ${name}-${r} (last lines)\n${lines.join("\n")}`);
      } catch {
        // no log: never started
      }
    }
}

process.exitCode = await main();
