// Faults under load (`npm run test:chaos`). Not a vitest file: it owns its Kafka broker (to
// restart it) and runs minutes, printing a table; it exits 1 when a check fails.
//
// The system runs as deployed, one process per service and one for the gateway, on a
// database of its own (dropped at the end) and a Kafka broker of its own from the Maven
// Central jars (test/infra/kafka.ts; needs java, and mvn unless the jars are cached).
// Under a steady load (creates through the API key; handsets polling, dialling with the
// simulated operator, reporting and forwarding the operator's SMS), it injects in turn:
//   1. every database connection of the services killed (pg_terminate_backend);
//   2. the Kafka broker restarted (SIGTERM, then started again on the same port and data);
//   3. `kill -9` of fleet, dispatch, evidence, intake, messaging, analytics, then the
//      gateway; each is started again at once.
// After each fault:
//   - throughput: every kind of call (create, poll, SMS) is answered at >= 90 % of its
//     reference rate within 60 s: the time to recover is the start of the first such window
//     after the fault. The reference is the baseline measured at the start of the same run,
//     or the rate just before the fault when lower (the machine got busier since);
//   - no acknowledged write lost: every create answered 2xx has its operation, every SMS
//     answered 2xx is stored;
//   - no operation stuck `running` past its lease (RUNNING_TIMEOUT_S) and the sweep's pass;
//   - no double confirmation: an operation proven by one message at most, a message proving
//     one operation at most, dispatch and evidence naming the same pairs;
//   - after the Kafka restart (and after every fault with --profile full): every outbox row
//     published and every consumer group caught up with what was produced, within 60 s of
//     the broker serving again.
// At the end, with the load stopped: every acknowledged SMS confirmed the operation it is the
// receipt of, and the events have all been consumed.
//
//   npm run test:chaos                      # the full profile (about 8 minutes)
//   npm run test:chaos -- --profile short   # what CI runs (about 4 minutes)
//   npm run test:chaos -- --only postgres,kafka,dispatch --keep-logs
// Environment: CHAOS_PROFILE=short|full; DATABASE_URL as for the tests (test/infra/postgres.ts).

import { randomBytes } from "node:crypto";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { parseArgs } from "node:util";
import { closeConnections } from "../bench/http.ts";
import { startKafkaFromJars, type KafkaHandle } from "../infra/kafka.ts";
import { createDatabase, dropStaleTestDatabases, ensurePostgres, type TestDatabase } from "../infra/postgres.ts";
import { sleep } from "../infra/util.ts";
import { Api } from "../support/api.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "../support/credentials.ts";
import { grantAccess, provisionHandset } from "../support/fleet-fixtures.ts";
import { SimulatedOperator } from "../simulator/operator.ts";
import { cleanupsOnSignal, type Cleanups } from "./cleanup.ts";
import { Checks, EventFlow } from "./checks.ts";
import { KINDS, Load, type Kind, type LoadHandset } from "./load.ts";
import {
  SERVICES,
  startProcesses,
  waitServing,
  type ChaosSystem,
  type ComponentName,
  describeExit,
} from "./processes.ts";

const PROFILES = {
  short: {
    handsets: 16,
    createsPerS: 3,
    pollIntervalMs: 1000,
    warmupS: 5,
    baselineS: 10,
    /** Length of the window whose rates must be back to 90 % of the reference. */
    windowS: 5,
    /** Throughput measured for this long once recovered (and before the next fault). */
    afterS: 5,
    leaseS: 15,
    /** Events checked after every fault, not only after the Kafka restart. */
    eventsEachFault: false,
  },
  full: {
    handsets: 24,
    createsPerS: 5,
    pollIntervalMs: 1000,
    warmupS: 10,
    baselineS: 30,
    windowS: 5,
    afterS: 15,
    leaseS: 30,
    eventsEachFault: true,
  },
};
const RECOVERY_LIMIT_S = 60;
const THRESHOLD = 0.9;
const SWEEP_INTERVAL_S = 1;
const BALANCE = 1_000_000_000_000;
const DATABASE_PREFIX = "tops_chaos";

const { values: flags } = parseArgs({
  options: { profile: { type: "string" }, only: { type: "string" }, "keep-logs": { type: "boolean", default: false } },
});
const profileName = flags.profile ?? process.env.CHAOS_PROFILE ?? "full";
if (!(profileName in PROFILES)) throw new Error(`unknown profile ${profileName}: short or full`);
const P = PROFILES[profileName as keyof typeof PROFILES];

const log = (s: string) => process.stdout.write(`${s}\n`);
const elapsed = (() => {
  const t0 = performance.now();
  return () => `${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s`;
})();
const step = (s: string) => log(`[chaos ${elapsed()}] ${s}`);

interface Fault {
  key: string;
  name: string;
  inject(): Promise<string | void>;
  events: boolean;
}

interface Row {
  fault: string;
  recoveredS?: number;
  before: Record<Kind, number>;
  /** The rates to come back to: per kind, the lower of the baseline and `before`. */
  reference: Record<Kind, number>;
  after?: Record<Kind, number>;
  acked: number;
  lost: number;
  problems: string[];
  notes: string[];
}

const total = (r: Record<Kind, number>) => KINDS.reduce((s, k) => s + r[k], 0);

async function main(): Promise<number> {
  step(
    `profile ${profileName}: ${P.handsets} handsets polling every ${P.pollIntervalMs} ms, ${P.createsPerS} creates/s`,
  );
  const cleanups = cleanupsOnSignal(log);
  const logDir = mkdtempSync(path.join(os.tmpdir(), "tops-chaos-"));
  let failed = true;
  try {
    const [postgres, kafka] = await Promise.all([ensurePostgres(step), startKafkaFromJars(step)]);
    cleanups.push(
      () => kafka.stop(),
      () => postgres.stop(),
    );
    step(`PostgreSQL: ${postgres.description}`);
    step(`Kafka: ${kafka.description}`);
    await dropStaleTestDatabases(postgres.adminUrl, DATABASE_PREFIX);
    const db = await createDatabase(postgres.adminUrl, DATABASE_PREFIX);
    cleanups.push(() => db.drop());
    step(`database ${db.name}; component logs in ${logDir}`);
    const rows = await run(db, kafka, logDir, cleanups);
    printTable(rows);
    failed = rows.some((r) => r.problems.length > 0);
    return failed ? 1 : 0;
  } finally {
    await cleanups.run();
    closeConnections();
    if (failed) printLogTails(logDir);
    if (failed || flags["keep-logs"]) log(`component logs kept in ${logDir}`);
    else rmSync(logDir, { recursive: true, force: true });
  }
}

async function run(db: TestDatabase, kafka: KafkaHandle, logDir: string, cleanups: Cleanups): Promise<Row[]> {
  const topicPrefix = `chaos${Date.now().toString(36)}${randomBytes(3).toString("hex")}.`;
  const system = await startProcesses(
    {
      NODE_ENV: "test",
      LOG_LEVEL: "warn",
      DATABASE_URL: db.url,
      KAFKA_BROKERS: kafka.brokers,
      KAFKA_TOPIC_PREFIX: topicPrefix,
      API_KEYS: TEST_API_KEY,
      BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
      RATE_LIMIT_RPS: "100000",
      RATE_LIMIT_BURST: "100000",
      DEVICE_COOLDOWN_S: "0",
      RUNNING_TIMEOUT_S: String(P.leaseS),
      SWEEP_INTERVAL_S: String(SWEEP_INTERVAL_S),
      EVIDENCE_REDRIVE_INTERVAL_MS: "500",
      EVIDENCE_REDRIVE_GRACE_MS: "2000",
    },
    logDir,
  );
  cleanups.push(() => system.stop());
  await waitServing(system.gatewayUrl, 180_000);
  step(`system serving at ${system.gatewayUrl} (6 services and the gateway, one process each)`);

  const checks = new Checks(db.url, "chaos-checks");
  cleanups.push(() => checks.close());
  const flow = new EventFlow(kafka.brokers, topicPrefix);
  const load = await provision(system);
  cleanups.push(() => load.stop());

  load.start();
  await sleep(P.warmupS * 1000);
  for (const e of system.unexpectedExits) step(`before the faults: ${describeExit(e)}`);
  const t0 = performance.now();
  await sleep(P.baselineS * 1000);
  const baseline = rates(load, t0, performance.now());
  const medians = KINDS.map((k) => `${k} ${load.ledger.median(k, t0, performance.now()).toFixed(0)} ms`);
  step(`baseline over ${P.baselineS} s: ${describe(baseline)}; median latency ${medians.join(", ")}`);
  // Before any fault, the system must carry the load: every kind answered, and the consumers
  // keeping up with the events (else the checks after the faults would blame them).
  const problems = KINDS.filter((k) => baseline[k] <= 0).map((k) => `no successful ${k} during the baseline`);
  const started = performance.now();
  problems.push(...(await eventsCaughtUp(checks, flow, started, RECOVERY_LIMIT_S)));
  if (problems.length) {
    const row = { fault: "baseline (no fault)", before: baseline, reference: baseline, acked: 0, lost: 0 };
    return [{ ...row, problems: problems.map((p) => `before any fault: ${p}`), notes: [] }];
  }
  step(`events caught up with the load in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  const rows: Row[] = [];

  const only = flags.only?.split(",");
  const faults = allFaults(system, kafka, checks).filter((f) => !only || only.includes(f.key));
  for (const fault of faults) {
    const exits = system.unexpectedExits.length;
    const row = await inject(fault, load, baseline, checks, flow);
    for (const e of system.unexpectedExits.slice(exits)) row.problems.push(describeExit(e));
    rows.push(row);
  }

  step("load stopped; waiting for every SMS to be applied and every event consumed");
  const exits = system.unexpectedExits.length;
  await load.stop();
  const row = await settle(load, baseline, checks, flow);
  for (const e of system.unexpectedExits.slice(exits)) row.problems.push(describeExit(e));
  rows.push(row);
  return rows;
}

/** An admin, an agent allowed on every SIM, and the handsets, each with one SIM. */
async function provision(system: ChaosSystem): Promise<Load> {
  const api = new Api(system.gatewayUrl);
  const admin = await api.bootstrapAdmin();
  const agent = await api.createAgent(admin.token, { login: "chaos-agent" });
  const operator = new SimulatedOperator();
  const handsets: LoadHandset[] = [];
  for (let i = 0; i < P.handsets; i++) {
    const { device, sims } = await provisionHandset(api, admin.token, { balance: BALANCE, label: `chaos ${i}` });
    operator.registerSim(sims[0].msisdn, "operator_a", { pin: sims[0].pin, balance: BALANCE });
    handsets.push({ token: device.token, simId: sims[0].simId, msisdn: sims[0].msisdn });
  }
  await grantAccess(api, admin.token, agent.agentId, {
    simIds: handsets.map((h) => h.simId),
    opTypes: ["deposit"],
    maxAmount: 10_000_000,
  });
  // Fleet's SIMs and grants reach dispatch through Kafka: creates succeed once they have.
  for (const until = Date.now() + 60_000; ;) {
    const r = await api.post("/v1/operations", {
      apiKey: true,
      body: {
        request_id: `chaos-ready-${randomBytes(4).toString("hex")}`,
        agent_id: agent.agentId,
        operator: "operator_a",
        type_op: "deposit",
        // Below every amount of the load, which counts up from 1000.
        montant: 999,
        client: { msisdn: "670000001", nom: "Chaos Load" },
      },
    });
    if (r.status === 202) break;
    if (Date.now() > until) throw new Error(`creates never succeeded: ${r.status} ${JSON.stringify(r.body)}`);
    await sleep(500);
  }
  step(`provisioned ${P.handsets} handsets; creates accepted`);
  return new Load({
    baseUrl: system.gatewayUrl,
    apiKey: TEST_API_KEY,
    agentId: agent.agentId,
    operator,
    handsets,
    createsPerS: P.createsPerS,
    pollIntervalMs: P.pollIntervalMs,
  });
}

function allFaults(system: ChaosSystem, kafka: KafkaHandle, checks: Checks): Fault[] {
  const components: ComponentName[] = [...SERVICES, "gateway"];
  return [
    {
      key: "postgres",
      name: "PostgreSQL connections killed",
      inject: async () => `${await checks.killServiceConnections()} connections terminated`,
      events: P.eventsEachFault,
    },
    {
      key: "kafka",
      name: "Kafka broker restarted",
      inject: async () => {
        const started = performance.now();
        await kafka.restart!();
        return `broker back in ${((performance.now() - started) / 1000).toFixed(1)} s`;
      },
      events: true,
    },
    ...components.map((c) => ({
      key: c,
      name: `kill -9 ${c}`,
      inject: () => system.component(c).killAndRestart(),
      events: P.eventsEachFault,
    })),
  ];
}

function rates(load: Load, from: number, to: number): Record<Kind, number> {
  return Object.fromEntries(KINDS.map((k) => [k, load.ledger.rate(k, from, to)])) as Record<Kind, number>;
}

const describe = (r: Record<Kind, number>) => KINDS.map((k) => `${k} ${r[k].toFixed(1)}/s`).join(", ");

/** The start of the first window after `from` in which every kind is back to THRESHOLD × its reference rate. */
async function recovery(
  load: Load,
  baseline: Record<Kind, number>,
  from: number,
): Promise<{ at?: number; best: Record<Kind, number>; last: Record<Kind, number> }> {
  const window = P.windowS * 1000;
  const worst = (r: Record<Kind, number>) => Math.min(...KINDS.map((k) => r[k] / baseline[k]));
  let best = rates(load, from, from + window);
  let last = best;
  for (let s = from; s <= from + RECOVERY_LIMIT_S * 1000; s += 100) {
    while (performance.now() < s + window) await sleep(200);
    last = rates(load, s, s + window);
    if (process.env.CHAOS_DEBUG && Math.round(s - from) % 1000 === 0)
      step(`  window +${((s - from) / 1000).toFixed(0)} s: ${describe(last)}`);
    if (worst(last) >= THRESHOLD) return { at: s, best: last, last };
    if (worst(last) > worst(best)) best = last;
  }
  return { best, last };
}

/** Waits (up to the recovery limit after `from`) until the outbox is drained and every group caught up. */
async function eventsCaughtUp(checks: Checks, flow: EventFlow, from: number, limitS: number): Promise<string[]> {
  const producedBefore = new Date();
  const ends = await flow.ends();
  let late: string[] = [];
  let unpublished = 0;
  for (;;) {
    unpublished = await checks.unpublished(producedBefore);
    late = await flow.behind(ends).catch((err: unknown) => [`broker: ${String(err)}`]);
    if (unpublished === 0 && late.length === 0) return [];
    if (process.env.CHAOS_DEBUG) step(`events: ${unpublished} unpublished; behind: ${late.join(", ")}`);
    await sleep(process.env.CHAOS_DEBUG ? 4500 : 0);
    if (performance.now() > from + limitS * 1000) break;
    await sleep(500);
  }
  return [
    ...(unpublished ? [`${unpublished} outbox rows still unpublished`] : []),
    ...(late.length ? [`consumers behind: ${late.slice(0, 5).join(", ")}${late.length > 5 ? ", ..." : ""}`] : []),
  ];
}

async function inject(
  fault: Fault,
  load: Load,
  baseline: Record<Kind, number>,
  checks: Checks,
  flow: EventFlow,
): Promise<Row> {
  const ledger = load.ledger;
  const phaseStart = performance.now();
  const creates0 = ledger.creates.length;
  const sms0 = ledger.sms.length;
  const before = rates(load, phaseStart - P.afterS * 1000, phaseStart);
  step(`${fault.name} ...`);
  // The rate to come back to: the run's baseline, or what the system did just before the
  // fault if that was less (a machine busier than at the start slows every kind alike).
  const reference = Object.fromEntries(KINDS.map((k) => [k, Math.min(baseline[k], before[k])])) as Record<Kind, number>;
  const row: Row = { fault: fault.name, before, reference, acked: 0, lost: 0, problems: [], notes: [] };
  const detail = await fault.inject();
  const injected = performance.now();
  if (detail) row.notes.push(detail);
  const { at: recovered, best, last } = await recovery(load, reference, phaseStart);
  if (recovered === undefined) {
    row.problems.push(
      `throughput not back to ${THRESHOLD * 100} % of ${describe(reference)} within ${RECOVERY_LIMIT_S} s (best ${P.windowS} s window: ${describe(best)}; last: ${describe(last)})`,
    );
  } else {
    row.recoveredS = (recovered - phaseStart) / 1000;
    while (performance.now() < recovered + P.afterS * 1000) await sleep(200);
    row.after = rates(load, recovered, recovered + P.afterS * 1000);
  }
  if (fault.events) {
    // Counted from the end of the injection: a broker's own restart time is not the system's.
    const problems = await eventsCaughtUp(checks, flow, injected, RECOVERY_LIMIT_S);
    if (problems.length) row.problems.push(...problems);
    else
      row.notes.push(
        `events caught up ${((performance.now() - injected) / 1000).toFixed(1)} s after the fault ended (every outbox row published, every consumer group at the end offsets)`,
      );
  }
  await checkWrites(row, checks, ledger.creates.slice(creates0), ledger.sms.slice(sms0));
  step(
    `${fault.name}: ${row.recoveredS === undefined ? "not recovered" : `recovered in ${row.recoveredS.toFixed(1)} s`}; ${row.problems.length ? row.problems.join("; ") : "checks pass"}`,
  );
  return row;
}

async function checkWrites(
  row: Row,
  checks: Checks,
  creates: Load["ledger"]["creates"],
  sms: Load["ledger"]["sms"],
): Promise<void> {
  const lostCreates = await checks.lostCreates(creates);
  const lostSms = await checks.lostSms(sms);
  row.acked += creates.length + sms.length;
  row.lost += lostCreates.length + lostSms.length;
  if (lostCreates.length)
    row.problems.push(`${lostCreates.length} acknowledged creates lost, e.g. ${lostCreates[0].requestId}`);
  if (lostSms.length) row.problems.push(`${lostSms.length} acknowledged SMS lost, e.g. ${lostSms[0].clientMessageId}`);
  const stuck = await checks.stuckRunning(P.leaseS, SWEEP_INTERVAL_S + 5);
  if (stuck.length)
    row.problems.push(`${stuck.length} operations running past their ${P.leaseS} s lease, e.g. ${stuck[0]}`);
  const doubles = await checks.doubleConfirmations();
  if (doubles.length) row.problems.push(`double confirmation: ${doubles.slice(0, 3).join("; ")}`);
}

/** With the load stopped: every acknowledged write checked once more, SMS applied, events consumed. */
async function settle(load: Load, baseline: Record<Kind, number>, checks: Checks, flow: EventFlow): Promise<Row> {
  const started = performance.now();
  const row: Row = {
    fault: "end of run (all writes)",
    before: baseline,
    reference: baseline,
    acked: 0,
    lost: 0,
    problems: [],
    notes: [],
  };
  const sms = load.ledger.sms;
  let unproven = await checks.unprovenBySms(sms);
  while (unproven.length && performance.now() < started + RECOVERY_LIMIT_S * 1000) {
    await sleep(500);
    unproven = await checks.unprovenBySms(sms);
  }
  if (unproven.length)
    row.problems.push(`${unproven.length} acknowledged SMS did not confirm their operation: ${unproven[0]}`);
  row.problems.push(...(await eventsCaughtUp(checks, flow, started, RECOVERY_LIMIT_S)));
  await checkWrites(row, checks, load.ledger.creates, sms);
  const f = load.ledger.failures;
  row.notes.push(
    `${load.ledger.creates.length} creates and ${sms.length} SMS acknowledged; calls that failed (retried by the handsets): create ${f.create}, poll ${f.poll}, outcome ${f.outcome}, sms ${f.sms}`,
  );
  return row;
}

function printTable(rows: Row[]): void {
  const header = [
    "fault",
    "time to recover",
    "throughput before → after, answers/s (worst kind after / reference)",
    "writes acked / lost",
    "verdict",
  ];
  const lines = rows.map((r) => [
    r.fault,
    r.fault.startsWith("end of run") ? "-" : r.recoveredS === undefined ? "> 60 s" : `${r.recoveredS.toFixed(1)} s`,
    r.fault.startsWith("end of run")
      ? "-"
      : `${total(r.before).toFixed(1)} → ${r.after ? `${total(r.after).toFixed(1)} (${(100 * Math.min(...KINDS.map((k) => r.after![k] / r.reference[k]))).toFixed(0)} %)` : "-"}`,
    `${r.acked} / ${r.lost}`,
    r.problems.length ? "FAIL" : "pass",
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i].length)));
  const fmt = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i])).join(" | ")} |`;
  log("");
  log(fmt(header));
  log(`|${widths.map((w) => "-".repeat(w + 2)).join("|")}|`);
  for (const l of lines) log(fmt(l));
  log("");
  for (const r of rows) {
    const detail = r.after ? [`before ${describe(r.before)}; after ${describe(r.after)}`] : [];
    for (const n of [...detail, ...r.notes]) log(`  ${r.fault}: ${n}`);
    for (const p of r.problems) log(`  ${r.fault}: FAIL ${p}`);
  }
  const failed = rows.filter((r) => r.problems.length).length;
  log(
    `\nchaos: ${rows.length - failed} passed, ${failed} failed (threshold ${THRESHOLD * 100} % of the reference rate within ${RECOVERY_LIMIT_S} s)`,
  );
}

function printLogTails(logDir: string): void {
  for (const name of [...SERVICES, "gateway"]) {
    let text = "";
    try {
      text = readFileSync(path.join(logDir, `${name}.log`), "utf8");
    } catch {
      continue;
    }
    const tail = text.trimEnd().split("\n").slice(-15);
    if (tail.length && tail[0]) log(`--- ${name}.log (last ${tail.length} lines) ---\n${tail.join("\n")}`);
  }
}

process.exit(
  await main().catch((err: unknown) => {
    log(`chaos: ${err instanceof Error ? (err.stack ?? err.message) : String(err)}`);
    return 1;
  }),
);
