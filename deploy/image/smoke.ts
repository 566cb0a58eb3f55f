// End-to-end smoke of the container image (CI: deploy/image/smoke.sh).
//
// Runs the migrations, the six services and the gateway as seven podman containers of IMAGE
// (read-only root filesystem, every capability dropped, no privilege escalation, uid 1000)
// against a fresh database on the machine's PostgreSQL and a real Kafka broker (KAFKA_BROKERS,
// else one from the Maven Central jars, test/infra/kafka.ts), then drives one transfer
// through the containers: bootstrap the first admin, provision a handset and its SIM, create an
// operation with the API key, the handset polls, dials and reports, the operator's SMS proves
// it, the operation is confirmed. Every container's HEALTHCHECK must pass. Everything it
// started is removed at the end; the database is dropped.
//
//   IMAGE=localhost/transferops:dev tsx deploy/image/smoke.ts
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { Kafka, logLevel } from "kafkajs";
import { Topics } from "@transferops/kit";
import { ensureKafka } from "../../test/infra/kafka.ts";
import { createDatabase, LOCAL_POSTGRES_URL } from "../../test/infra/postgres.ts";
import { freePorts } from "../../test/infra/util.ts";
import { eventually } from "../../test/support/eventually.ts";
import { runTransferJourney } from "../../test/support/journey.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "../../test/support/credentials.ts";

const run = promisify(execFile);
const IMAGE = process.env.IMAGE ?? "localhost/transferops:dev";
const SERVICES = ["fleet", "dispatch", "evidence", "intake", "analytics", "messaging"] as const;
const t0 = Date.now();
const log = (s: string) => console.log(`[smoke +${((Date.now() - t0) / 1000).toFixed(1)}s] ${s}`);
const podman = async (...args: string[]) => (await run("podman", args, { maxBuffer: 64 << 20 })).stdout.trim();

const runId = randomBytes(4).toString("hex");
const started: string[] = [];
let envDir: string | undefined;

async function main(): Promise<void> {
  const kafka = await ensureKafka(log);
  log(`kafka: ${kafka.description}`);
  const db = await createDatabase(process.env.SMOKE_ADMIN_DATABASE_URL ?? LOCAL_POSTGRES_URL, "tops_smoke");
  log(`database: ${db.name}`);
  let failed = false;
  try {
    await smoke(kafka.brokers, db.url);
  } catch (err) {
    failed = true;
    throw err;
  } finally {
    await cleanup(failed);
    await db.drop().catch((err) => log(`drop database failed: ${String(err)}`));
    await kafka.stop();
  }
}

async function smoke(brokers: string, databaseUrl: string): Promise<void> {
  const ports = await freePorts(2 * (SERVICES.length + 1));
  const gatewayPort = ports[SERVICES.length];
  const metricsPorts: Record<string, number> = {};
  const env: Record<string, string> = {
    NODE_ENV: "production",
    LOG_LEVEL: "info",
    DATABASE_URL: databaseUrl,
    KAFKA_BROKERS: brokers,
    KAFKA_TOPIC_PREFIX: `smoke-${runId}.`,
    API_KEYS: TEST_API_KEY,
    BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
    PIN_ENCRYPTION_KEYS: `smoke:${randomBytes(32).toString("base64")}`,
    DEVICE_COOLDOWN_S: "0",
  };
  SERVICES.forEach((s, i) => (env[`${s.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[i]}`));
  // Secrets go to the containers through a private env file, never on a command line.
  envDir = await mkdtemp(path.join(os.tmpdir(), "tops-smoke-"));
  const envFile = path.join(envDir, "env");
  await writeFile(
    envFile,
    Object.entries(env)
      .map(([k, v]) => `${k}=${v}\n`)
      .join(""),
    { mode: 0o600 },
  );

  // Production hardening, as the Helm chart runs it. Host networking: the containers reach the
  // machine's PostgreSQL and Kafka on 127.0.0.1 and each other on their ports.
  const hardened = ["--network", "host", "--read-only", "--tmpfs", "/tmp", "--cap-drop", "ALL"];
  hardened.push("--security-opt", "no-new-privileges", "--user", "1000:1000", "--env-file", envFile);

  let t = Date.now();
  // The Helm hook's topics job: every topic with 4 partitions, retention one day.
  const topics = Object.values(Topics).map((name) => ({
    name,
    partitions: 4,
    replicationFactor: 1,
    retentionMs: 86_400_000,
  }));
  await podman("run", "--rm", ...hardened, "-e", `KAFKA_TOPICS=${JSON.stringify(topics)}`, IMAGE, "topics");
  await checkTopics(brokers, env.KAFKA_TOPIC_PREFIX, topics);
  log(`kafka topics created by the image in ${Date.now() - t} ms`);

  t = Date.now();
  await podman("run", "--rm", "--name", `tops-smoke-${runId}-migrate`, ...hardened, IMAGE, "migrate");
  log(`migrations applied by the image in ${Date.now() - t} ms`);

  t = Date.now();
  const containers: Record<string, string> = {};
  for (const [i, name] of [...SERVICES, "gateway" as const].entries()) {
    const portEnv = name === "gateway" ? `PORT=${gatewayPort}` : `GRPC_PORT=${ports[i]}`;
    metricsPorts[name] = ports[SERVICES.length + 1 + i];
    const id = `tops-smoke-${runId}-${name}`;
    const metricsEnv = `METRICS_PORT=${metricsPorts[name]}`;
    await podman("run", "-d", "--name", id, ...hardened, "-e", portEnv, "-e", metricsEnv, IMAGE, name);
    started.push(id);
    containers[name] = id;
  }
  const url = `http://127.0.0.1:${gatewayPort}`;
  for (const [name, id] of Object.entries(containers)) {
    await eventually(
      async () => {
        const state = await podman("inspect", "--format", "{{.State.Status}}", id);
        if (state !== "running") throw new Error(`container ${name} is ${state}:\n${await podman("logs", id)}`);
        // The image's own HEALTHCHECK command (gRPC health for services, /v1/health for the gateway).
        return (
          (await run("podman", ["healthcheck", "run", id]).then(
            () => true,
            () => false,
          )) || undefined
        );
      },
      // Generous: on a busy 2-core machine each healthcheck run starts a Node process in the
      // container; a minute was seen to run out with the service already serving.
      180_000,
      `${name} healthy`,
    );
  }
  log(`7 containers healthy in ${Date.now() - t} ms (gateway ${url})`);

  const journey = await runTransferJourney(url, log);
  expect(
    journey.dial.outcome === "ussd_ok" && journey.dial.reportStatus === 200,
    `dial: ${JSON.stringify(journey.dial)}`,
  );
  expect(journey.smsStatuses.length > 0 && journey.smsStatuses.every((s) => s < 300), "SMS proof accepted");
  expect(journey.confirmed.evidence?.amount === 5000, `evidence: ${JSON.stringify(journey.confirmed.evidence)}`);
  expect(journey.confirmed.evidence.balance_after === journey.simBalanceAtOperator, "balance after = operator's");
  await checkMetrics(metricsPorts);

  // Rotating the PIN key: the image's re-encryption command re-seals the SIM's PIN under a new
  // first key (the old one still configured to open it).
  const rotated = `${randomBytes(4).toString("hex")}:${randomBytes(32).toString("base64")},${env.PIN_ENCRYPTION_KEYS}`;
  const rotatedFile = path.join(envDir!, "rotated");
  await writeFile(rotatedFile, `PIN_ENCRYPTION_KEYS=${rotated}\n`, { mode: 0o600 });
  const out = await podman("run", "--rm", ...hardened, "--env-file", rotatedFile, IMAGE, "reencrypt-pins");
  expect(/"sim_pins":1,"webhook_secrets":0/.test(out), `reencrypt-pins: ${out}`);
  log("reencrypt-pins re-sealed the SIM's PIN under the new key");
  log("PASS");
}

/** The topics exist with the partitions and retention the topics job was given. */
async function checkTopics(
  brokers: string,
  prefix: string,
  topics: { name: string; partitions: number; retentionMs: number }[],
) {
  const admin = new Kafka({ brokers: brokers.split(","), logLevel: logLevel.NOTHING }).admin();
  await admin.connect();
  try {
    const names = topics.map((t) => prefix + t.name);
    const meta = await admin.fetchTopicMetadata({ topics: names });
    for (const m of meta.topics) expect(m.partitions.length === 4, `${m.name} has ${m.partitions.length} partitions`);
    const configs = await admin.describeConfigs({
      includeSynonyms: false,
      resources: names.map((name) => ({
        type: 2 /* ConfigResourceTypes.TOPIC */,
        name,
        configNames: ["retention.ms"],
      })),
    });
    for (const r of configs.resources) {
      const retention = r.configEntries.find((e) => e.configName === "retention.ms")?.configValue;
      expect(retention === "86400000", `${r.resourceName} retention.ms ${retention}`);
    }
  } finally {
    await admin.disconnect();
  }
}

/** Each container's /metrics (METRICS_PORT) shows the series the journey must have produced. */
async function checkMetrics(ports: Record<string, number>): Promise<void> {
  const want: Record<string, RegExp[]> = {
    gateway: [
      /^transferops_http_request_duration_seconds_count\{method="POST",route="\/v1\/operations",status="202"\} 1$/m,
    ],
    fleet: [
      /^transferops_rpc_duration_seconds_count\{service="fleet",.*code="OK"\} \d+$/m,
      /^transferops_outbox_backlog\{service="fleet"\} \d+$/m,
    ],
    dispatch: [
      /^transferops_rpc_duration_seconds_count\{service="dispatch",method="CreateOperation",code="OK"\} 1$/m,
      /^transferops_proof_delay_seconds_count\{operator="operator_b",op_type="deposit"\} 1$/m,
      /^transferops_outbox_oldest_age_seconds\{service="dispatch"\} [\d.e+-]+$/m,
      /^transferops_consumer_lag\{group="smoke-[0-9a-f]+\.[^"]+",topic="[^"]+",partition="\d+"\} \d+$/m,
    ],
    evidence: [/^transferops_rpc_duration_seconds_count\{service="evidence",method="SubmitMessages",code="OK"\} 1$/m],
  };
  // Some series come from work after the answer (a consumer's batch of events the relays publish
  // within 200 ms of their commit): each component is read again for up to 20 s until it has them.
  for (const [name, port] of Object.entries(ports)) {
    const deadline = Date.now() + 20_000;
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${port}/metrics`);
      const text = await res.text();
      expect(res.status === 200 && /^transferops_process_cpu_seconds_total /m.test(text), `${name} /metrics answers`);
      const missing = (want[name] ?? []).filter((re) => !re.test(text));
      if (!missing.length) break;
      expect(Date.now() < deadline, `${name} /metrics has ${missing.map((re) => re.source).join(", ")}`);
      await new Promise((r) => setTimeout(r, 500));
    }
  }
  log(`metrics: the ${Object.keys(ports).length} components serve /metrics with the expected series`);
}

function expect(ok: boolean, what: string): asserts ok {
  if (!ok) throw new Error(`smoke: ${what}`);
}

async function cleanup(failed: boolean): Promise<void> {
  for (const id of started.reverse()) {
    if (failed) {
      const logs = await podman("logs", "--tail", "30", id).catch(() => "");
      console.log(`---- ${id} (last lines)\n${logs}`);
    }
    await podman("rm", "-f", "-t", "5", id).catch(() => undefined);
  }
  if (envDir) await rm(envDir, { recursive: true, force: true });
}

main().then(
  () => process.exit(0),
  async (err: unknown) => {
    console.error(`[smoke] FAIL: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  },
);
