// A seeded simulation of the whole business (`npm run test:sim`). Not a vitest file: like
// test:chaos it owns its Kafka broker and database and runs minutes; it exits 1 when an
// invariant is violated.
//
// The system runs as deployed (one process per service, two gateways; `--replicas`: two of
// every service behind round-robin proxies, as test:replicas) on a database of its own and a
// Kafka broker from the Maven Central jars (test/chaos/processes.ts, test/infra). Every
// actor acts through the gateways only, each action and its inputs drawn from one seed
// (test/sim/actors.ts); the money invariants (test/sim/invariants.ts) are checked every few
// seconds and at the end. `--faults` adds, at random (from the same seed), `kill -9` of a
// process, the services' database connections killed and the Kafka broker restarted.
//
//   npm run test:sim -- --seed 42 --minutes 2            # the short profile (about 3 minutes)
//   npm run test:sim -- --seed 42 --minutes 10 --faults --replicas --keep-logs
// On a violation it prints the seed, the invariant and the history of the entities involved
// (what each actor did to them, then what the tables hold), shortest history first.

import { randomBytes, randomInt } from "node:crypto";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { startKafkaFromJars, type KafkaHandle } from "../infra/kafka.ts";
import { createDatabase, dropStaleTestDatabases, ensurePostgres } from "../infra/postgres.ts";
import { sleep } from "../infra/util.ts";
import { Api } from "../support/api.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "../support/credentials.ts";
import { LOCAL_WEBHOOKS } from "../support/constants.ts";
import { grantAccess, provisionHandset } from "../support/fleet-fixtures.ts";
import { SimulatedHandset } from "../simulator/handset.ts";
import { OperatorSms } from "../simulator/operator-sms.ts";
import { SimulatedOperator } from "../simulator/operator.ts";
import { cleanupsOnSignal } from "../chaos/cleanup.ts";
import { SERVICES, startProcesses, waitServing, type ChaosSystem, type ComponentName } from "../chaos/processes.ts";
import { ACTOR_OF, Actors, type Answer, type OperationRow, type SimHandset } from "./actors.ts";
import { Agreement } from "./agreement.ts";
import { CUSTOMERS, CUSTOMERS_B } from "./context.ts";
import { INVARIANTS, Invariants } from "./invariants.ts";
import { Scope } from "./scope.ts";
import { Random } from "./random.ts";
import { WebhookChecks } from "./webhook-checks.ts";
import { WebhookReceiver } from "./webhook-receiver.ts";

const { values: flags } = parseArgs({
  options: {
    seed: { type: "string" },
    minutes: { type: "string", default: "2" },
    replicas: { type: "boolean", default: false },
    faults: { type: "boolean", default: false },
    "keep-logs": { type: "boolean", default: false },
    /** Milliseconds between two actions. */
    "tick-ms": { type: "string", default: "300" },
    handsets: { type: "string", default: "4" },
    /** Handsets whose SIM is operator_b's (their deposit texts print the fee), besides those. */
    "handsets-b": { type: "string", default: "2" },
  },
});
const seed = flags.seed !== undefined ? Number(flags.seed) >>> 0 : randomInt(1, 2 ** 31);
const minutes = Number(flags.minutes);
const tickMs = Number(flags["tick-ms"]);
const HANDSETS = Number(flags.handsets);
const HANDSETS_B = Number(flags["handsets-b"]);
/** Balances are tight (a few creates drain a SIM), so that the free-balance rule is exercised. */
const SIM_BALANCE = 150_000;
const LEASE_S = 20;
const SWEEP_S = 1;
const CHECK_EVERY_MS = 10_000;
const FAULT_GRACE_MS = 20_000;
const DATABASE_PREFIX = "tops_sim";
/** Fleet's webhook timeout: the receiver now and then answers only after it (a delivery tried again). */
const WEBHOOK_TIMEOUT_MS = 2000;

const log = (s: string): void => void process.stdout.write(`${s}\n`);
const t0 = performance.now();
const elapsed = () => `${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
/** When the actions started (s since the process started). */
let actionsStartS = 0;
const step = (s: string): void => log(`[sim ${elapsed()}] ${s}`);

async function main(): Promise<number> {
  log(
    `sim: seed ${seed} (replay with --seed ${seed}), ${minutes} minutes${flags.faults ? ", faults" : ""}${flags.replicas ? ", replicas" : ""}`,
  );
  const cleanups = cleanupsOnSignal(log);
  const logDir = mkdtempSync(path.join(os.tmpdir(), "tops-sim-"));
  let failed = true;
  try {
    // KAFKA_BROKERS: a broker already running (shared; topics of the run's own prefix), never restarted.
    const external = process.env.KAFKA_BROKERS;
    const [postgres, kafka] = await Promise.all([
      ensurePostgres(step),
      external
        ? ({ brokers: external, stop: async () => undefined } as unknown as KafkaHandle)
        : startKafkaFromJars(step),
    ]);
    cleanups.push(
      () => kafka.stop(),
      () => postgres.stop(),
    );
    await dropStaleTestDatabases(postgres.adminUrl, DATABASE_PREFIX);
    const db = await createDatabase(postgres.adminUrl, DATABASE_PREFIX);
    cleanups.push(() => db.drop());
    step(`database ${db.name}; component logs in ${logDir}`);
    const system = await startProcesses(
      {
        NODE_ENV: "test",
        LOG_LEVEL: "warn",
        DATABASE_URL: db.url,
        KAFKA_BROKERS: kafka.brokers,
        KAFKA_TOPIC_PREFIX: `sim${Date.now().toString(36)}${randomBytes(3).toString("hex")}.`,
        API_KEYS: TEST_API_KEY,
        BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
        RATE_LIMIT_RPS: "100000",
        RATE_LIMIT_BURST: "100000",
        DEVICE_COOLDOWN_S: "0",
        // Short windows, so that in minutes transfers go no_evidence and late proofs come in.
        EVIDENCE_WINDOW_S: "6",
        LATE_EVIDENCE_S: "90",
        RUNNING_TIMEOUT_S: String(LEASE_S),
        SWEEP_INTERVAL_S: String(SWEEP_S),
        EVIDENCE_REDRIVE_INTERVAL_MS: "500",
        EVIDENCE_REDRIVE_GRACE_MS: "2000",
        // Webhooks to the simulation's receiver on 127.0.0.1, tried again within seconds.
        ...LOCAL_WEBHOOKS,
        WEBHOOK_POLL_MS: "500",
        WEBHOOK_TIMEOUT_MS: String(WEBHOOK_TIMEOUT_MS),
        WEBHOOK_RETRY_BASE_MS: "1000",
        WEBHOOK_RETRY_MAX_MS: "4000",
        ...(flags.replicas ? { DB_POOL_MAX: "4", EVIDENCE_DB_POOL_MAX: "4" } : {}),
      },
      logDir,
      { replicas: flags.replicas ? 2 : 1, gateways: 2 },
    );
    cleanups.push(() => system.stop());
    await Promise.all(system.gatewayUrls.map((u) => waitServing(u, 180_000)));
    step(`serving: ${flags.replicas ? "2 replicas" : "one process"} of each service, 2 gateways`);
    const violations = await simulate(system, kafka, db.url, logDir, cleanups.push);
    failed = violations > 0;
    return failed ? 1 : 0;
  } finally {
    await cleanups.run();
    if (failed || flags["keep-logs"]) log(`component logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
    log(`sim: seed ${seed}`);
  }
}

async function simulate(
  system: ChaosSystem,
  kafka: KafkaHandle,
  databaseUrl: string,
  logDir: string,
  onCleanup: (...fns: (() => Promise<unknown>)[]) => void,
): Promise<number> {
  const random = new Random(seed);
  const api = new Api(system.gatewayUrl);
  const admin = await api.bootstrapAdmin();
  // A rule that can confirm (DEP, BAL) is activated by an admin other than its author.
  const secondAdmin = await api.createAgent(admin.token, { login: "sim-admin-2", role: "admin" });
  const operator = new SimulatedOperator();
  const agents = [];
  for (let i = 0; i < 3; i++) {
    const a = await api.createAgent(admin.token, { login: `sim-agent-${i}`, role: i === 2 ? "supervisor" : "agent" });
    agents.push({
      ...a,
      login: `sim-agent-${i}`,
      active: true,
      role: i === 2 ? ("supervisor" as const) : ("agent" as const),
    });
  }
  const faultWindows: { from: number; to: number }[] = [];
  // Times are counted from the start of the process, as the history's.
  const invariants = new Invariants(databaseUrl, t0, {
    leaseS: LEASE_S,
    sweepS: SWEEP_S,
    faultWindows: () => faultWindows,
  });
  onCleanup(() => invariants.close());
  const agreement: Agreement = new Agreement(
    (sql, params) => invariants.query(sql, params),
    (gw, method, p, auth, body): Promise<Answer> => actors.http(gw, method, p, auth, body),
    () => system.gatewayUrl,
    admin.token,
    TEST_API_KEY,
  );
  invariants.agreement = agreement;
  const scope = new Scope((sql, params) => invariants.query(sql, params));
  invariants.scope = { watch: scope, agents, gateways: system.gatewayUrls };
  onCleanup(() => scope.stop());
  // The simulation's webhook endpoint; its answers from a generator of their own.
  const receiver = new WebhookReceiver(new Random(seed ^ 0x0eb400c5), WEBHOOK_TIMEOUT_MS + 500);
  const webhookBaseUrl = await receiver.start();
  onCleanup(() => receiver.stop());
  const rows = new Map<string, OperationRow>();
  const notes = new Map<string, { at: number; line: string }[]>();
  /** Every step of every actor, in order (written to history.log in the log directory). */
  const timeline: string[] = [];
  const handsets: SimHandset[] = [];
  const actors: WatchedActors = new WatchedActors(scope, {
    gatewayUrls: system.gatewayUrls,
    apiKey: TEST_API_KEY,
    random,
    operator,
    handsets,
    adminToken: admin.token,
    secondAdminToken: secondAdmin.token,
    agents,
    webhookBaseUrl,
    contactOf: (msisdn): string | undefined => agreement.contacts.get(msisdn),
    rows: () => rows,
    snapshotBalances: async () => {
      const r = await invariants
        .query<{ id: string; balance: string | null; at: Date | null }>(
          `select id::text, balance_mirror::text as balance, balance_updated_at as at from fleet.sims`,
        )
        .catch(() => []);
      return new Map(
        r.map((x) => [
          x.id,
          { balance: x.balance === null ? null : Number(x.balance), at: x.at?.toISOString() ?? null },
        ]),
      );
    },
    onCreate: (c) => invariants.onCreate(c),
    note: (ids, line) => {
      timeline.push(`${elapsed()} ${line} [${ids.filter(Boolean).join(" ")}]`);
      for (const id of new Set(ids.filter(Boolean))) {
        const list = notes.get(id) ?? [];
        list.push({ at: performance.now(), line: `${elapsed()} ${line}` });
        notes.set(id, list);
      }
    },
    log: step,
  });
  // Automation's operations name these contacts (contact_id): messaging counts their transfers.
  await agreement.setUp([...CUSTOMERS, ...CUSTOMERS_B]);
  // The handsets of operator_a, then those of operator_b (its deposit texts print the fee).
  for (let i = 0; i < HANDSETS + HANDSETS_B; i++) {
    const network = i < HANDSETS ? "operator_a" : "operator_b";
    const { device, sims } = await provisionHandset(api, admin.token, {
      balance: SIM_BALANCE,
      label: `sim ${i}`,
      operators: [network],
    });
    operator.registerSim(sims[0].msisdn, network, { pin: sims[0].pin, balance: SIM_BALANCE });
    const h = {
      index: i,
      deviceId: device.deviceId,
      token: device.token,
      simId: sims[0].simId,
      msisdn: sims[0].msisdn,
      operator: network,
      revoked: false,
      busy: false,
    } as SimHandset;
    h.handset = new SimulatedHandset({
      baseUrl: system.gatewayUrl,
      token: device.token,
      operator,
      sims: new Map([[h.simId, { msisdn: h.msisdn, operator: network }]]),
    });
    h.sms = new OperatorSms({
      baseUrl: system.gatewayUrl,
      token: device.token,
      seed: seed + i,
      transport: actors.transportFor(h, () => system.gatewayUrls[i % system.gatewayUrls.length]),
    });
    handsets.push(h);
  }
  for (const a of agents)
    await grantAccess(api, admin.token, a.agentId, {
      simIds: handsets.map((h) => h.simId),
      opTypes: ["deposit", "balance"],
      maxAmount: 100_000,
    });
  // Fleet's SIMs and grants reach dispatch through Kafka: wait until a balance check is accepted.
  for (const until = Date.now() + 60_000; ; await sleep(500)) {
    const r = await api.post("/v1/operations", {
      apiKey: true,
      body: {
        request_id: `sim-ready-${randomBytes(4).toString("hex")}`,
        agent_id: agents[0].agentId,
        operator: "operator_a",
        type_op: "balance",
        montant: 1,
        client: { msisdn: "670000001", nom: "Sim Ready" },
      },
    });
    if (r.status === 202) break;
    if (Date.now() > until) throw new Error(`creates never succeeded: ${r.status} ${JSON.stringify(r.body)}`);
  }
  // Every confirmation and failure from now on is owed to the standing webhook (invariant 15).
  await actors.admins.webhooks.registerAtStart(system.gatewayUrl);
  const webhookChecks = new WebhookChecks({
    query: (sql, params) => invariants.query(sql, params),
    http: (gw, method, p, auth, body) => actors.http(gw, method, p, auth, body),
    gateway: () => system.gatewayUrl,
    adminToken: admin.token,
    admin: actors.admins.webhooks,
    receiver,
  });
  invariants.webhooks = webhookChecks;
  step(
    `provisioned ${HANDSETS} handsets of operator_a and ${HANDSETS_B} of operator_b (one SIM each, ${SIM_BALANCE} F), 3 agents, 2 admins, 2 webhooks; actions every ${tickMs} ms`,
  );

  let running = true;
  const refresher = (async () => {
    while (running) {
      const r = await invariants
        .query<OperationRow & { montant: string }>(
          `select operation_id::text, status, sim_id, montant::text, op_type, agent_id::text from dispatch.operations`,
        )
        .catch(() => undefined);
      if (r) for (const x of r) rows.set(x.operation_id, { ...x, montant: Number(x.montant) });
      await scope.snapshot();
      await sleep(1000);
    }
  })();

  // Faults, from a generator of their own (the actions' sequence does not depend on them).
  const faultRandom = new Random(seed ^ 0x5eed5eed);
  const faults: string[] = [];
  const faulter = (async () => {
    if (!flags.faults) return;
    while (running) {
      await sleep(20_000 + faultRandom.int(20_000));
      if (!running) break;
      const kind = faultRandom.weighted({ kill: 6, postgres: 2, kafka: 1, gateway: 3 });
      const components: ComponentName[] = [...SERVICES, "gateway"];
      const name = components[faultRandom.int(components.length)];
      const replica = faultRandom.int(flags.replicas || name === "gateway" ? 2 : 1);
      const gatewayIndex = faultRandom.int(system.gatewayUrls.length);
      const signal = faultRandom.chance(0.5) ? "SIGKILL" : "SIGTERM";
      const window = { from: performance.now(), to: Infinity };
      faultWindows.push(window);
      let what: string;
      if (kind === "kill") {
        what = `kill -9 ${name}${replica ? ` #${replica + 1}` : ""}`;
        await system.component(name, replica).killAndRestart();
      } else if (kind === "postgres" || (kind === "kafka" && !kafka.restart)) {
        what = `${await invariants.killServiceConnections()} database connections killed`;
      } else if (kind === "kafka") {
        what = "Kafka broker restarted";
        await kafka.restart!();
      } else {
        what = await stopGatewayMidRequest(system, actors, gatewayIndex, signal);
      }
      await Promise.all(system.gatewayUrls.map((u) => waitServing(u, 120_000).catch(() => undefined)));
      window.to = performance.now() + FAULT_GRACE_MS;
      faults.push(what);
      step(`fault: ${what}; serving again`);
    }
  })();

  // Each agent at the board keeps an event stream open (a replaced agent's too): invariant 14.
  scope.watch(system.gatewayUrls, agents);
  // The actions: chosen one per tick, run concurrently (bounded).
  actionsStartS = (performance.now() - t0) / 1000;
  const until = performance.now() + minutes * 60_000;
  const inFlight = new Set<Promise<void>>();
  let lastCheck = performance.now();
  let actions = 0;
  while (performance.now() < until) {
    const { action, run } = actors.next();
    actions += 1;
    const p = run()
      .catch((err: unknown) => void step(`${action}: ${String(err)}`))
      .finally(() => void inFlight.delete(p));
    inFlight.add(p);
    while (inFlight.size >= 8) await Promise.race(inFlight);
    if (performance.now() - lastCheck > CHECK_EVERY_MS) {
      lastCheck = performance.now();
      scope.watch(system.gatewayUrls, agents);
      await invariants.run(actors, { final: false, notes }).catch((err: unknown) => step(`checks: ${String(err)}`));
      const v = invariants.violations.size;
      step(
        `${actions} actions (${inFlight.size} in flight), ${rows.size} operations${v ? `, ${v} violations so far` : ""}`,
      );
    }
    await sleep(tickMs);
  }
  step("actions stopped; waiting for those in flight and for the sweep");
  await Promise.all(inFlight);
  running = false;
  await Promise.all([refresher, faulter]);
  // A last read of the agents' rights once the actions are done: an action still in flight when
  // the refresher stopped (a deactivated agent's replacement, created and granted then) would
  // otherwise reach the final checks unknown to the rights timeline, and its every answer be
  // judged a leak (seed 568662945).
  await scope.snapshot();
  await sleep((SWEEP_S + 5) * 1000);
  // Drained: every outbox published, every event analytics and messaging take consumed, and
  // nothing left for the sweep or the running timeout to move.
  invariants.drainedInTime = await agreement.drained(90_000);
  if (!invariants.drainedInTime) step("not drained within 90 s: analytics and reconciliation not compared");
  if (!(await webhookChecks.settled(60_000)))
    step("webhooks not settled within 60 s (fleet has events to take or deliveries pending): judged as they stand");
  await invariants.run(actors, { final: true, notes });
  await scope.stop();
  writeFileSync(path.join(logDir, "history.log"), `seed ${seed}\n${timeline.join("\n")}\n`);
  step(`every step of every actor: ${path.join(logDir, "history.log")}`);
  const counted = await Promise.all(
    [...agreement.contacts.values()].map((id) =>
      actors
        .http(system.gatewayUrl, "GET", `/v1/contacts/${id}`, { token: TEST_API_KEY })
        .then((r) => Number(r.body?.transfer_count ?? 0)),
    ),
  );
  step(
    `event streams: ${scope.hints.length} hints judged; ${scope.probesAtOnce} reads at once after a change of rights; contacts: ${counted.reduce((a, b) => a + b, 0)} transfers counted`,
  );
  const [fees] = await invariants.query<{ fees: string; texts: number }>(
    `select coalesce(sum(fee), 0)::text as fees, (count(*) filter (where fee > 0))::int as texts
       from evidence.messages where link = 'proof'`,
  );
  const viaConflict = actors.intake.created.filter((t) => t.via !== "201").length;
  step(
    `fees: ${fees.fees} F printed by ${fees.texts} proving texts; transactions acknowledged: ${actors.intake.created.length} (${viaConflict} by a 409 request_id_exists); ${webhookChecks.summary()}`,
  );
  step(await restartsAndDrift(actors, invariants));
  return report(actors, invariants, notes, faults, actions);
}

/** The app restarts (where the kills landed, how the lost outcomes ended) and the drifted texts. */
async function restartsAndDrift(actors: Actors, invariants: Invariants): Promise<string> {
  const rs = actors.restarts;
  const ended = await invariants.query<{ status: string; n: number }>(
    `select status || coalesce(' ' || failure_reason, '') as status, count(*)::int as n from dispatch.operations
      where operation_id::text = any($1) group by 1 order by 1`,
    [rs.lost.map((l) => l.operationId)],
  );
  const proving = await invariants.query<{ n: number }>(
    `select count(*)::int as n from evidence.messages where client_message_id = any($1) and link = 'proof'`,
    [actors.drifted.map((d) => d.clientMessageId)],
  );
  const byDrift: Record<string, number> = {};
  for (const d of actors.drifted) byDrift[`${d.kind} ${d.drift}`] = (byDrift[`${d.kind} ${d.drift}`] ?? 0) + 1;
  const list = (o: Record<string, number>) =>
    Object.entries(o)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ") || "none";
  return (
    `app restarts: killed ${list(rs.byStage)}; outcomes lost ${rs.lost.length}, now ${list(Object.fromEntries(ended.map((e) => [e.status, e.n])))}; ` +
    `reported again ${rs.reReported}, SMS forwarded again ${rs.reForwarded}; drifted operator texts ${actors.drifted.length} ` +
    `(${list(byDrift)}), ${proving[0]?.n ?? 0} of them proving`
  );
}

/**
 * The actors, whose every call the scope invariant sees go out and come back: a change of an
 * agent's rights (grant, role, deactivation) is entered in its timeline as it goes out, and when
 * it is acknowledged the agent reads its lists at once (test/sim/scope.ts).
 */
class WatchedActors extends Actors {
  constructor(
    private readonly scope: Scope,
    o: ConstructorParameters<typeof Actors>[0],
  ) {
    super(o);
  }

  override async http(
    gateway: string,
    method: string,
    path: string,
    auth: { token?: string; apiKey?: boolean },
    body?: unknown,
    route?: string,
  ): Promise<Answer> {
    const answered = this.scope.calling((gw, m, p, a, b) => this.http(gw, m, p, a, b), gateway, method, path, body);
    const a = await super.http(gateway, method, path, auth, body, route);
    answered?.(a);
    return a;
  }
}

/**
 * A gateway stopped while calls are in flight through it (waits up to 5 s for one), by SIGKILL
 * or SIGTERM (its graceful stop), then started again: the clients see a reset connection or a
 * 503 and call again with the same id (Actors.http).
 */
async function stopGatewayMidRequest(
  system: ChaosSystem,
  actors: Actors,
  index: number,
  signal: "SIGKILL" | "SIGTERM",
): Promise<string> {
  const url = system.gatewayUrls[index];
  for (const until = performance.now() + 5000; performance.now() < until && !actors.inFlight.get(url);) await sleep(20);
  const inFlight = actors.inFlight.get(url) ?? 0;
  const gateway = system.component("gateway", index);
  if (signal === "SIGKILL") await gateway.killAndRestart();
  else {
    await gateway.stop();
    gateway.start();
  }
  return `gateway #${index + 1} stopped (${signal}) with ${inFlight} calls in flight`;
}

async function report(
  actors: Actors,
  invariants: Invariants,
  notes: Map<string, { at: number; line: string }[]>,
  faults: string[],
  actions: number,
): Promise<number> {
  const byActor: Record<string, number> = {};
  for (const [a, n] of Object.entries(actors.counts))
    byActor[ACTOR_OF[a as keyof typeof ACTOR_OF]] = (byActor[ACTOR_OF[a as keyof typeof ACTOR_OF]] ?? 0) + n;
  const perMin = (n: number) => (n / minutes).toFixed(1);
  log("");
  log(`sim: seed ${seed}: ${actions} actions in ${minutes} min (${perMin(actions)}/min)`);
  log(
    `  by actor/min: ${Object.entries(byActor)
      .map(([k, n]) => `${k} ${perMin(n)}`)
      .join(", ")}`,
  );
  log(
    `  by action: ${Object.entries(actors.counts)
      .map(([k, n]) => `${k} ${n}`)
      .join(", ")}`,
  );
  log(
    `  answers: ${actors.answers.length}; acknowledged creates ${actors.creates.length}, SMS ${actors.sms.length}, decisions ${actors.decisions.length}`,
  );
  const byRoute = new Map<string, Map<string, number>>();
  for (const a of actors.answers) {
    const m = byRoute.get(a.route) ?? new Map<string, number>();
    const reason =
      a.status >= 400 ? (a.body as { context?: { reason?: string } } | undefined)?.context?.reason : undefined;
    const key = reason ? `${a.status} ${reason}` : String(a.status);
    m.set(key, (m.get(key) ?? 0) + 1);
    byRoute.set(a.route, m);
  }
  log(`  answers by route and status:`);
  for (const [route, m] of [...byRoute].sort(([a], [b]) => a.localeCompare(b)))
    log(`    ${route}: ${[...m].map(([st, n]) => `${st}×${n}`).join(" ")}`);
  log(
    `  faults injected: ${faults.length ? faults.join("; ") : "none"}; calls tried again (reset or 503): ${actors.retries}`,
  );
  log(`  invariants evaluated: ${INVARIANTS.map((i) => `${invariants.evaluated[i] ?? 0}× ${i}`).join(" | ")}`);
  const violations = [...invariants.violations.values()];
  if (!violations.length) {
    log(`sim: seed ${seed}: no invariant violated`);
    return 0;
  }
  // Each violation with the history of its entities: the notes of the ids it names, and of the
  // messages (by client id) linked to them; shortest history first.
  const withHistory = await Promise.all(
    violations.map(async (v) => {
      const facts = await invariants.facts(v.ids).catch(() => [] as string[]);
      const clientIds = facts.flatMap((f) => [...f.matchAll(/"client_id":"([^"]+)"/g)].map((m) => m[1]));
      const lines = [...new Set([...v.ids, ...clientIds])]
        .flatMap((id) => notes.get(id) ?? [])
        .sort((a, b) => a.at - b.at)
        .map((n) => n.line);
      return { v, history: [...new Set(lines)], facts };
    }),
  );
  withHistory.sort((a, b) => a.history.length - b.history.length);
  log(`\nsim: seed ${seed}: ${violations.length} invariant violations`);
  const byInvariant = new Map<string, number>();
  for (const { v } of withHistory) byInvariant.set(v.invariant, (byInvariant.get(v.invariant) ?? 0) + 1);
  for (const [inv, n] of byInvariant) log(`  ${n}× ${inv}`);
  for (const { v, history, facts } of withHistory.slice(0, 8)) {
    const into = v.foundAtS - actionsStartS;
    log(
      `\nVIOLATION (seed ${seed}, first seen at ${v.foundAtS.toFixed(0)} s, ${into.toFixed(0)} s into the actions): ${v.invariant}`,
    );
    log(`  ${v.detail}`);
    log(`  history (${history.length} steps):`);
    for (const l of history.slice(0, 40)) log(`    ${l}`);
    for (const f of facts.slice(0, 12)) log(f);
  }
  if (withHistory.length > 8) {
    log(`\n... ${withHistory.length - 8} more (shown: the 8 shortest histories); the others, in a line each:`);
    for (const { v } of withHistory.slice(8, 48)) log(`  - ${v.invariant}: ${v.detail}`);
  }
  return violations.length;
}

process.exit(
  await main().catch((err: unknown) => {
    log(`sim (seed ${seed}): ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }),
);
