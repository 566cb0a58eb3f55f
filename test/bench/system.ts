// Child process of the poll benchmark: the system on the benchmark's database. Prints one
// JSON line with the gateway URL on stdout once it serves, then runs until killed.
//
// BENCH_TOPOLOGY=processes (default): one process per service and one for the gateway,
// as production deploys them (each on its own port, talking gRPC); without Kafka each
// process has its own in-process bus (no event crosses processes: the poll path needs none,
// but then no consumer of another service works either).
// BENCH_TOPOLOGY=single: everything in this process (deploy/local/system.ts, as `npm start`).
// BENCH_CPU_PROFILE=<part of a script path>: that process runs with --cpu-prof into /tmp/bench-prof.
// BENCH_KAFKA_BROKERS=<host:port,...>: the processes talk through that Kafka (topics of their
// own prefix), so events cross processes as deployed and their consumers' work is measured.
import { spawn, type ChildProcess } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { QUIET_KAFKAJS } from "../infra/util.ts";
import { freePort, startSystem } from "../../deploy/local/system.ts";

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");
const topology = process.env.BENCH_TOPOLOGY ?? "processes";

async function processes(): Promise<{ url: string; metrics?: Record<string, string>; stop(): Promise<void> }> {
  const names = ["fleet", "dispatch", "evidence", "intake", "analytics", "messaging"];
  const ports = Object.fromEntries(await Promise.all(names.map(async (n) => [n, await freePort()] as const)));
  const urls = Object.fromEntries(names.map((n) => [`${n.toUpperCase()}_URL`, `http://127.0.0.1:${ports[n]}`]));
  const gatewayPort = await freePort();
  const children: ChildProcess[] = [];
  // BENCH_METRICS=1: every process serves /metrics on a port of its own.
  const metrics: Record<string, string> = {};
  const metricsEnv = async (name: string): Promise<Record<string, string>> => {
    if (process.env.BENCH_METRICS !== "1") return {};
    const port = await freePort();
    metrics[name] = `http://127.0.0.1:${port}/metrics`;
    return { METRICS_PORT: String(port), METRICS_HOST: "127.0.0.1" };
  };
  const kafka = process.env.BENCH_KAFKA_BROKERS
    ? { KAFKA_BROKERS: process.env.BENCH_KAFKA_BROKERS, KAFKA_TOPIC_PREFIX: `bench-${Date.now().toString(36)}.` }
    : { KAFKA_BROKERS: "" };
  const run = (script: string, env: Record<string, string>) => {
    const profile =
      process.env.BENCH_CPU_PROFILE && script.includes(process.env.BENCH_CPU_PROFILE)
        ? ["--cpu-prof", "--cpu-prof-dir=/tmp/bench-prof"]
        : [];
    const child = spawn(process.execPath, [...profile, ...QUIET_KAFKAJS, "--import", "tsx", path.join(root, script)], {
      env: { ...process.env, ...kafka, ...urls, ...env },
      stdio: ["ignore", "ignore", "inherit"],
    });
    children.push(child);
  };
  for (const n of names) run(`services/${n}/src/main.ts`, { GRPC_PORT: String(ports[n]), ...(await metricsEnv(n)) });
  run("gateway/src/main.ts", {
    PORT: String(gatewayPort),
    HOST: "127.0.0.1",
    ...(await metricsEnv("gateway")),
  });
  const url = `http://127.0.0.1:${gatewayPort}`;
  const until = Date.now() + 120_000;
  for (;;) {
    const ok = await fetch(`${url}/v1/health`)
      .then((r) => r.status === 200)
      .catch(() => false);
    if (ok) break;
    if (Date.now() > until) {
      // Otherwise the services that did start would outlive this process.
      for (const c of children) c.kill("SIGTERM");
      throw new Error("the system did not become healthy within 120 s");
    }
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    metrics,
    async stop() {
      for (const c of children) c.kill("SIGTERM");
      await Promise.all(children.map((c) => new Promise((r) => (c.exitCode !== null ? r(null) : c.once("exit", r)))));
    },
  };
}

async function single(): Promise<{ url: string; metrics?: Record<string, string>; stop(): Promise<void> }> {
  const system = await startSystem({
    env: { ...process.env, KAFKA_BROKERS: "" },
    randomPorts: true,
    logDestination: { write: (line: string) => void process.stderr.write(line) },
  });
  return { url: system.gatewayUrl, stop: system.stop };
}

const system = topology === "single" ? await single() : await processes();
process.stdout.write(`${JSON.stringify({ gatewayUrl: system.url, topology, metrics: system.metrics ?? {} })}\n`);
const stop = () => void system.stop().finally(() => process.exit(0));
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
