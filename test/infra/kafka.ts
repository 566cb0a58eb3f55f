// A REAL Apache Kafka broker for the tests. Never a mock, never skipped silently.
//
// Order:
//   (a) KAFKA_BROKERS=host:port[,host:port]  -> use that broker (source "env")
//   (b) a container runtime exists            -> apache/kafka image via testcontainers
//   (c) java + mvn                            -> broker from the Maven Central jars
//       (test/infra/kafka/pom.xml), cached in ${XDG_CACHE_HOME:-~/.cache}/transferops/kafka-<v>/libs,
//       run in KRaft combined mode (broker+controller) from a fresh temp dir.
// If none of these works, ensureKafka() throws an Error saying how to point the tests
// at an existing broker.

import { spawn, type ChildProcess } from "node:child_process";
import { randomBytes } from "node:crypto";
import { closeSync, existsSync, openSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { mkdir, mkdtemp, rename, rm, writeFile } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { Kafka, logLevel } from "kafkajs";
import { probeContainerRuntime, type Testcontainers } from "./runtime.ts";
import { freePorts, isAlive, isErrno, message, sleep, type Log } from "./util.ts";

/** Keep in sync with test/infra/kafka/pom.xml. */
export const KAFKA_VERSION = "4.3.0";
export const KAFKA_SCALA_VERSION = "2.13";

const HOW_TO_OVERRIDE = "set KAFKA_BROKERS=host:port to use an existing broker";
const READY_TIMEOUT_MS = 90_000;
const STOP_GRACE_MS = 10_000;
const TEMP_PREFIX = "tops-kafka-";
const POM = path.join(path.dirname(fileURLToPath(import.meta.url)), "kafka", "pom.xml");

export interface KafkaHandle {
  /** Comma separated bootstrap servers, e.g. "127.0.0.1:40123". */
  brokers: string;
  /** "env" | "testcontainers" | "maven-central" */
  source: string;
  /** Human readable one-liner for logs. */
  description: string;
  stop(): Promise<void>;
  /**
   * Stops the broker (SIGTERM, as an operator's restart) and starts it again on the same
   * ports and data: only the broker started from the Maven Central jars can.
   */
  restart?(): Promise<void>;
}

/**
 * Broker settings that make a single node broker behave well in tests
 * (shared by the jar-based broker and the container).
 */
const TEST_BROKER_SETTINGS: Record<string, string> = {
  "offsets.topic.replication.factor": "1",
  // fewer internal partitions: the first consumer group / transaction starts much faster
  "offsets.topic.num.partitions": "5",
  "transaction.state.log.num.partitions": "5",
  "transaction.state.log.replication.factor": "1",
  "transaction.state.log.min.isr": "1",
  "share.coordinator.state.topic.replication.factor": "1",
  "share.coordinator.state.topic.min.isr": "1",
  "group.initial.rebalance.delay.ms": "0",
  "num.partitions": "3",
  "auto.create.topics.enable": "true",
};

export async function ensureKafka(log: Log): Promise<KafkaHandle> {
  const fromEnv = process.env.KAFKA_BROKERS?.trim();
  if (fromEnv) {
    await waitForBroker(fromEnv, 20_000).catch((err: unknown) => {
      throw new Error(`KAFKA_BROKERS=${fromEnv} is set but no Kafka broker answered there: ${message(err)}`);
    });
    return { brokers: fromEnv, source: "env", description: `using KAFKA_BROKERS at ${fromEnv}`, stop: async () => {} };
  }

  const runtime = await probeContainerRuntime(log);
  if (runtime.available) {
    return startKafkaContainer(runtime.tc, log);
  }

  return startKafkaFromJars(log);
}

// ---------------------------------------------------------------------------
// readiness

/** Resolves once a kafkajs admin client can describe the cluster at `brokers`. */
export async function waitForBroker(
  brokers: string,
  timeoutMs: number,
  aborted?: () => Error | undefined,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    const abort = aborted?.();
    if (abort) throw abort;
    const kafka = new Kafka({
      clientId: "tops-infra-probe",
      brokers: brokers.split(",").map((b) => b.trim()),
      connectionTimeout: 2_000,
      requestTimeout: 5_000,
      retry: { retries: 0 },
      logLevel: logLevel.NOTHING,
    });
    const admin = kafka.admin();
    try {
      await admin.connect();
      const cluster = await admin.describeCluster();
      if (cluster.brokers.length > 0 && cluster.controller !== null) return;
      lastError = new Error("cluster has no brokers or no controller yet");
    } catch (err) {
      lastError = err;
    } finally {
      await admin.disconnect().catch(() => {});
    }
    if (Date.now() >= deadline) {
      throw new Error(
        `no Kafka broker ready at ${brokers} after ${Math.round(timeoutMs / 1000)} s: ${message(lastError)}`,
      );
    }
    await sleep(250);
  }
}

/**
 * The first consumer group makes the broker create __consumer_offsets; until that is done
 * clients see (and kafkajs logs at ERROR) "The group coordinator is not available".
 * Do it once here so tests start against a broker that is fully ready. Best effort.
 */
async function warmUpGroupCoordinator(brokers: string): Promise<void> {
  const kafka = new Kafka({
    clientId: "tops-infra-warmup",
    brokers: brokers.split(","),
    logLevel: logLevel.NOTHING,
    retry: { retries: 20, initialRetryTime: 100, maxRetryTime: 1_000 },
  });
  const admin = kafka.admin();
  try {
    await admin.connect();
    await admin.describeGroups(["tops-infra-warmup"]);
  } catch {
    // tests will retry on their own
  } finally {
    await admin.disconnect().catch(() => {});
  }
}

// ---------------------------------------------------------------------------
// (b) testcontainers

async function startKafkaContainer(tc: Testcontainers, log: Log): Promise<KafkaHandle> {
  const image = process.env.KAFKA_IMAGE ?? `apache/kafka:${KAFKA_VERSION}`;
  const startScript = "/tmp/tops_start_kafka.sh";
  const waitingMark = "tops-waiting-for-start-script";
  log(`[infra] Kafka: starting container ${image}`);

  const env: Record<string, string> = {
    KAFKA_NODE_ID: "1",
    KAFKA_PROCESS_ROLES: "broker,controller",
    KAFKA_LISTENERS: "PLAINTEXT://0.0.0.0:9092,BROKER://0.0.0.0:9093,CONTROLLER://0.0.0.0:9094",
    KAFKA_LISTENER_SECURITY_PROTOCOL_MAP: "PLAINTEXT:PLAINTEXT,BROKER:PLAINTEXT,CONTROLLER:PLAINTEXT",
    KAFKA_INTER_BROKER_LISTENER_NAME: "BROKER",
    KAFKA_CONTROLLER_LISTENER_NAMES: "CONTROLLER",
    KAFKA_CONTROLLER_QUORUM_VOTERS: "1@localhost:9094",
  };
  for (const [key, value] of Object.entries(TEST_BROKER_SETTINGS)) {
    env[`KAFKA_${key.toUpperCase().replaceAll(".", "_")}`] = value;
  }

  // The advertised listener needs the mapped host port, which is only known once the
  // container runs: the container waits for a start script we copy in afterwards.
  const container = await new tc.GenericContainer(image)
    .withExposedPorts(9092)
    .withEnvironment(env)
    .withEntrypoint(["sh"])
    .withCommand([
      "-c",
      `echo ${waitingMark}; while [ ! -f ${startScript} ]; do sleep 0.1; done; exec sh ${startScript}`,
    ])
    .withWaitStrategy(tc.Wait.forLogMessage(waitingMark))
    .withStartupTimeout(120_000)
    .start();
  try {
    const brokers = `${container.getHost()}:${container.getMappedPort(9092)}`;
    await container.copyContentToContainer([
      {
        content: `export KAFKA_ADVERTISED_LISTENERS=PLAINTEXT://${brokers},BROKER://localhost:9093\nexec /etc/kafka/docker/run\n`,
        target: startScript,
        mode: 0o755,
      },
    ]);
    await waitForBroker(brokers, 120_000);
    await warmUpGroupCoordinator(brokers);
    return {
      brokers,
      source: "testcontainers",
      description: `container ${image} (testcontainers) at ${brokers}`,
      stop: async () => {
        await container.stop();
      },
    };
  } catch (err) {
    await container.stop().catch(() => {});
    throw new Error(`Kafka container ${image} did not become ready: ${message(err)}; ${HOW_TO_OVERRIDE}`);
  }
}

// ---------------------------------------------------------------------------
// (c) broker from the Maven Central jars

/** A broker of its own from the Maven Central jars (whatever KAFKA_BROKERS says): one that can be restarted. */
export async function startKafkaFromJars(log: Log): Promise<KafkaHandle> {
  const java = await run("java", ["-version"]).catch((err: unknown) => ({ code: -1, output: message(err) }));
  if (java.code !== 0) {
    throw new Error(
      `Kafka: no container runtime and no working \`java\` on PATH (needed to run the broker from the Maven Central jars: ${java.output.trim()}); install a JDK 17+ or ${HOW_TO_OVERRIDE}`,
    );
  }
  const libs = await ensureKafkaJars(log);
  reapStaleBrokers(log);

  let lastError: unknown;
  for (let attempt = 1; attempt <= 3; attempt++) {
    try {
      return await startBrokerOnce(libs);
    } catch (err) {
      lastError = err;
      // Free ports are picked by binding port 0 and closing; someone may grab one in between.
      if (!(err instanceof PortRaceError)) break;
      log(`[infra] Kafka: port was taken before the broker bound it, retrying (${attempt})`);
    }
  }
  throw lastError;
}

function cacheDir(): string {
  const root = process.env.XDG_CACHE_HOME || path.join(os.homedir(), ".cache");
  return path.join(root, "transferops", `kafka-${KAFKA_VERSION}`);
}

/** Returns the directory holding the broker's jars, fetching them with Maven on first use. */
export async function ensureKafkaJars(log: Log): Promise<string> {
  const dir = cacheDir();
  const libs = path.join(dir, "libs");
  const markerJar = `kafka_${KAFKA_SCALA_VERSION}-${KAFKA_VERSION}.jar`;
  if (existsSync(path.join(libs, markerJar))) return libs;

  const mvn = await run("mvn", ["-v"]).catch((err: unknown) => ({ code: -1, output: message(err) }));
  if (mvn.code !== 0) {
    throw new Error(
      `Kafka: the broker jars are not cached in ${libs} and \`mvn\` is not available to fetch them (${mvn.output.trim()}); install Maven or ${HOW_TO_OVERRIDE}`,
    );
  }

  await mkdir(dir, { recursive: true });
  removeOldPartialDownloads(dir);
  const partial = await mkdtemp(path.join(dir, "libs.partial-"));
  log(
    `[infra] Kafka: fetching kafka_${KAFKA_SCALA_VERSION} ${KAFKA_VERSION} jars from Maven Central into ${libs} (first run only)`,
  );
  const started = Date.now();
  try {
    const res = await run(
      "mvn",
      ["-q", "-B", "-Dstyle.color=never", "-f", POM, "dependency:copy-dependencies", `-DoutputDirectory=${partial}`],
      { timeoutMs: 10 * 60_000 },
    );
    if (res.code !== 0 || !existsSync(path.join(partial, markerJar))) {
      throw new Error(`mvn dependency:copy-dependencies failed (exit ${res.code}):\n${tailText(res.output, 30)}`);
    }
    try {
      await rename(partial, libs);
    } catch (err) {
      // Another process may have finished the same download first; theirs is as good as ours.
      if (!existsSync(path.join(libs, markerJar))) {
        await rm(libs, { recursive: true, force: true });
        await rename(partial, libs);
      } else if (!isErrno(err, "ENOTEMPTY") && !isErrno(err, "EEXIST")) {
        throw err;
      }
    }
  } catch (err) {
    throw new Error(`Kafka: could not fetch the broker jars from Maven Central: ${message(err)}\n${HOW_TO_OVERRIDE}`);
  } finally {
    await rm(partial, { recursive: true, force: true });
  }
  log(`[infra] Kafka: jars fetched in ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return libs;
}

function removeOldPartialDownloads(dir: string): void {
  const hourAgo = Date.now() - 60 * 60_000;
  for (const name of readdirSync(dir)) {
    if (!name.startsWith("libs.partial-")) continue;
    const full = path.join(dir, name);
    try {
      if (statSync(full).mtimeMs < hourAgo) rmSync(full, { recursive: true, force: true });
    } catch {
      // gone already
    }
  }
}

class PortRaceError extends Error {}

async function startBrokerOnce(libs: string): Promise<KafkaHandle> {
  const started = Date.now();
  const dir = await mkdtemp(path.join(os.tmpdir(), TEMP_PREFIX));
  const [port, controllerPort] = await freePorts(2);
  const brokers = `127.0.0.1:${port}`;
  const serverProperties = path.join(dir, "server.properties");
  const log4jConfig = path.join(dir, "log4j2.properties");
  const brokerLog = path.join(dir, "broker.log");
  const consoleLog = path.join(dir, "console.log");
  const classpath = `${libs}${path.sep}*`;

  const settings: Record<string, string> = {
    "process.roles": "broker,controller",
    "node.id": "1",
    "controller.quorum.voters": `1@127.0.0.1:${controllerPort}`,
    listeners: `PLAINTEXT://127.0.0.1:${port},CONTROLLER://127.0.0.1:${controllerPort}`,
    "advertised.listeners": `PLAINTEXT://${brokers}`,
    "controller.listener.names": "CONTROLLER",
    "inter.broker.listener.name": "PLAINTEXT",
    "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT",
    "log.dirs": path.join(dir, "data"),
    ...TEST_BROKER_SETTINGS,
  };
  await writeFile(
    serverProperties,
    Object.entries(settings)
      .map(([k, v]) => `${k}=${v}`)
      .join("\n") + "\n",
  );
  await writeFile(
    log4jConfig,
    [
      "status = warn",
      "appender.file.type = File",
      "appender.file.name = FILE",
      `appender.file.fileName = ${brokerLog}`,
      "appender.file.layout.type = PatternLayout",
      "appender.file.layout.pattern = [%d] %p %m (%c)%n",
      "rootLogger.level = warn",
      "rootLogger.appenderRef.file.ref = FILE",
      "",
    ].join("\n"),
  );
  const jvmLogging = `-Dlog4j2.configurationFile=${log4jConfig}`;

  const fail = async (what: string, child?: ChildProcess): Promise<never> => {
    if (child) await killProcess(child);
    const details = [tailFile(brokerLog, 40), tailFile(consoleLog, 40)].filter(Boolean).join("\n");
    await rm(dir, { recursive: true, force: true });
    const text = `Kafka: ${what}${details ? `\n--- broker log (tail) ---\n${details}` : ""}`;
    if (/Address already in use|BindException/.test(details)) throw new PortRaceError(text);
    throw new Error(`${text}\n${HOW_TO_OVERRIDE}`);
  };

  const clusterId = newClusterId();
  const format = await run(
    "java",
    [
      "-XX:TieredStopAtLevel=1",
      "-XX:+UseSerialGC",
      "-cp",
      classpath,
      jvmLogging,
      "kafka.tools.StorageTool",
      "format",
      "-t",
      clusterId,
      "-c",
      serverProperties,
      "--ignore-formatted",
    ],
    { cwd: dir, timeoutMs: 120_000 },
  );
  if (format.code !== 0) {
    return fail(`formatting the KRaft storage failed (exit ${format.code}):\n${tailText(format.output, 30)}`);
  }

  const formatted = Date.now();
  // Starts the broker process on the formatted storage and waits until it serves.
  let child: ChildProcess | undefined;
  const killOnExit = () => {
    // If the test process exits without running teardown, do not leave the JVM behind.
    try {
      child?.kill("SIGKILL");
    } catch {
      // already gone
    }
  };
  process.once("exit", killOnExit);
  const launch = async (): Promise<void> => {
    const out = openSync(consoleLog, "a");
    let proc: ChildProcess;
    try {
      proc = spawn("java", ["-Xmx512m", "-cp", classpath, jvmLogging, "kafka.Kafka", serverProperties], {
        cwd: dir,
        stdio: ["ignore", out, out],
      });
    } finally {
      closeSync(out);
    }
    child = proc;
    let exited: string | undefined;
    proc.once("exit", (code, signal) => {
      exited = `broker process exited early (code ${code}, signal ${signal})`;
    });
    let spawnError: Error | undefined;
    proc.once("error", (err) => {
      spawnError = err;
    });
    await writeFile(path.join(dir, "broker.pid"), `${proc.pid ?? ""}\n`);
    await waitForBroker(brokers, READY_TIMEOUT_MS, () =>
      spawnError ? new Error(`could not start java: ${spawnError.message}`) : exited ? new Error(exited) : undefined,
    );
  };
  await writeFile(path.join(dir, "owner.pid"), `${process.pid}\n`);

  try {
    await launch();
  } catch (err) {
    process.removeListener("exit", killOnExit);
    return fail(`broker did not start: ${message(err)}`, child);
  }

  const ready = Date.now();
  await warmUpGroupCoordinator(brokers);
  const secs = (ms: number): string => (ms / 1000).toFixed(1);
  const timing = `${secs(Date.now() - started)} s (format ${secs(formatted - started)} s, start ${secs(ready - formatted)} s, group coordinator ${secs(Date.now() - ready)} s)`;
  let stopped: Promise<void> | undefined;
  return {
    brokers,
    source: "maven-central",
    description: `broker started from Maven Central jars (kafka_${KAFKA_SCALA_VERSION} ${KAFKA_VERSION}) at ${brokers} in ${timing}`,
    stop: () =>
      (stopped ??= (async () => {
        if (child) await killProcess(child);
        process.removeListener("exit", killOnExit);
        await rm(dir, { recursive: true, force: true });
      })()),
    restart: async () => {
      if (child) await killProcess(child);
      try {
        await launch();
      } catch (err) {
        throw new Error(
          `Kafka: broker did not restart: ${message(err)}\n--- broker log (tail) ---\n${tailFile(brokerLog, 40)}`,
        );
      }
      await warmUpGroupCoordinator(brokers);
    },
  };
}

/**
 * 16 random bytes, base64url without padding (what `kafka-storage random-uuid` prints).
 * Like Kafka's Uuid.randomUuid(), never starts with "-": the storage tool's argument
 * parser would take such an id for an option ("argument --cluster-id/-t: expected one argument").
 */
function newClusterId(): string {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (!id.startsWith("-")) return id;
  }
}

/**
 * Brokers whose owning test process died without teardown (crash, SIGKILL) are killed,
 * and their temp dirs removed. Only processes whose command line names one of our
 * temp dirs are touched.
 */
function reapStaleBrokers(log: Log): void {
  const tmp = os.tmpdir();
  let entries: string[];
  try {
    entries = readdirSync(tmp).filter((n) => n.startsWith(TEMP_PREFIX));
  } catch {
    return;
  }
  for (const name of entries) {
    const dir = path.join(tmp, name);
    const owner = readPid(path.join(dir, "owner.pid"));
    if (owner === undefined || isAlive(owner)) continue;
    const broker = readPid(path.join(dir, "broker.pid"));
    if (broker !== undefined && isAlive(broker)) {
      let cmdline = "";
      try {
        cmdline = readFileSync(`/proc/${broker}/cmdline`, "utf8");
      } catch {
        continue; // cannot verify it is ours: leave it alone
      }
      if (!cmdline.includes(dir)) continue;
      try {
        process.kill(broker, "SIGKILL");
      } catch {
        // gone
      }
    }
    rmSync(dir, { recursive: true, force: true });
    log(`[infra] Kafka: removed leftover broker ${dir} of dead test process ${owner}`);
  }
}

// ---------------------------------------------------------------------------
// helpers

function readPid(file: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8"), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : undefined;
  } catch {
    return undefined;
  }
}

/** SIGTERM, then SIGKILL after STOP_GRACE_MS; resolves when the process is gone. */
async function killProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const gone = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timer = setTimeout(() => child.kill("SIGKILL"), STOP_GRACE_MS);
  await gone;
  clearTimeout(timer);
}

interface RunResult {
  code: number;
  output: string;
}

/** Runs a command, collecting stdout+stderr. Rejects only if it cannot be started. */
function run(cmd: string, args: string[], opts: { cwd?: string; timeoutMs?: number } = {}): Promise<RunResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { cwd: opts.cwd, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    const timer = opts.timeoutMs
      ? setTimeout(() => {
          output += `\n[killed after ${opts.timeoutMs} ms]`;
          child.kill("SIGKILL");
        }, opts.timeoutMs)
      : undefined;
    child.once("error", (err) => {
      clearTimeout(timer);
      reject(isErrno(err, "ENOENT") ? new Error(`\`${cmd}\` not found on PATH`) : err);
    });
    child.once("close", (code) => {
      clearTimeout(timer);
      resolve({ code: code ?? -1, output });
    });
  });
}

function tailText(text: string, lines: number): string {
  return text.trimEnd().split("\n").slice(-lines).join("\n");
}

function tailFile(file: string, lines: number): string {
  try {
    return tailText(readFileSync(file, "utf8"), lines);
  } catch {
    return "";
  }
}
