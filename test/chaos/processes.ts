// The system as deployed: each service and the gateway in a process of its own, on one
// database and the real Kafka broker. Each process can be killed with SIGKILL and started
// again on the same port with the same environment, as an orchestrator would.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync, readFileSync } from "node:fs";
import path from "node:path";
import { QUIET_KAFKAJS, freePorts, sleep } from "../infra/util.ts";
import { serviceClient } from "@transferops/kit";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@transferops/kit/gen/grpc/health/v1/health_pb";
import { RoundRobinProxy } from "./proxy.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
export const SERVICES = ["fleet", "dispatch", "evidence", "intake", "messaging", "analytics"] as const;
export type ComponentName = (typeof SERVICES)[number] | "gateway";

export interface Exit {
  name: ComponentName;
  code: number | null;
  signal: string | null;
  at: number;
  /** The process's log (every run of it, appended). */
  logFile: string;
  /** What the process printed last before it exited. */
  lastWords: string[];
}

/** One line for a report (CI's summary keeps whole lines): the process, how it ended, what it said last. */
export function describeExit(e: Exit): string {
  const words = e.lastWords.length ? `; it said last: ${e.lastWords.join(" ⏎ ")}` : "";
  return `${path.basename(e.logFile, ".log")} exited by itself (${e.signal ?? `code ${e.code}`}; log ${e.logFile}), started again${words}`;
}

/** The last lines of a log: a crash's stack, or the last thing the process logged. */
function lastWords(logFile: string): string[] {
  let text = "";
  try {
    text = readFileSync(logFile, "utf8").slice(-16_384);
  } catch {
    return [];
  }
  const lines = text.split("\n").filter((l) => l.trim());
  return lines.slice(-6).map((l) => (l.length > 240 ? `${l.slice(0, 240)}…` : l));
}

class Component {
  private child?: ChildProcess;
  private exited?: Promise<void>;
  private stopping = false;

  constructor(
    readonly name: ComponentName,
    private readonly entry: string,
    private readonly env: Record<string, string>,
    /** Every output line of every run of the process, appended. */
    readonly logFile: string,
    /** Called when the process exits though nobody stopped or killed it; it is started again. */
    private readonly onUnexpectedExit: (exit: Exit) => void,
  ) {}

  start(): void {
    this.stopping = false;
    const out = openSync(this.logFile, "a");
    try {
      const child = spawn(process.execPath, [...QUIET_KAFKAJS, "--import", "tsx", this.entry], {
        cwd: ROOT,
        env: { ...process.env, ...this.env },
        stdio: ["ignore", out, out],
      });
      this.child = child;
      this.exited = new Promise((resolve) =>
        child.once("exit", (code, signal) => {
          resolve();
          if (this.child !== child || this.stopping) return;
          // As an orchestrator would: the process is started again, and the exit reported.
          this.onUnexpectedExit({
            name: this.name,
            code,
            signal,
            at: performance.now(),
            logFile: this.logFile,
            lastWords: lastWords(this.logFile),
          });
          setTimeout(() => !this.stopping && this.child === child && this.start(), 1000).unref();
        }),
      );
    } finally {
      closeSync(out);
    }
  }

  /** `kill -9`, then the same process started again (not waiting for it to serve). */
  async killAndRestart(): Promise<void> {
    const child = this.child;
    this.child = undefined;
    child?.kill("SIGKILL");
    await this.exited;
    this.start();
  }

  /** Until the service process answers SERVING on its own gRPC port (not the gateway). */
  async serving(deadlineMs: number): Promise<void> {
    const url = `http://127.0.0.1:${this.env.GRPC_PORT}`;
    for (const until = Date.now() + deadlineMs; ; await sleep(250)) {
      const status = await serviceClient(Health, url)
        .check({}, { timeoutMs: 1000 })
        .then((r) => r.status)
        .catch(() => undefined);
      if (status === Status.SERVING) return;
      if (Date.now() > until) throw new Error(`${this.name} on ${url} not serving within ${deadlineMs / 1000} s`);
    }
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    child.kill("SIGTERM");
    const killed = sleep(10_000).then(() => child.kill("SIGKILL"));
    await Promise.race([this.exited, killed]);
    await this.exited;
  }
}

export interface ChaosSystem {
  /** The first gateway's address. */
  gatewayUrl: string;
  gatewayUrls: string[];
  /** A replica of a component (the first by default). */
  component(name: ComponentName, replica?: number): Component;
  /** Every replica of a component. */
  replicas(name: ComponentName): Component[];
  /** Exits nobody asked for, in order (each process was started again). */
  unexpectedExits: Exit[];
  stop(): Promise<void>;
}

export interface Topology {
  /** Processes of each service; more than one stand behind a round-robin proxy on the service's address. */
  replicas?: number;
  /** Gateway processes, each on a port of its own. */
  gateways?: number;
  /** Environment of one component's processes only, over the shared one. */
  env?: Partial<Record<ComponentName, Record<string, string>>>;
}

/** Starts the six services and the gateway, all at once (see `waitServing`). */
export async function startProcesses(
  env: Record<string, string>,
  logDir: string,
  topology: Topology = {},
): Promise<ChaosSystem> {
  const replicas = topology.replicas ?? 1;
  const gateways = topology.gateways ?? 1;
  // One call, so that no port is handed out twice.
  const addresses = await freePorts(SERVICES.length * (replicas > 1 ? 1 + replicas : 1) + gateways);
  const urls = Object.fromEntries(
    SERVICES.map((s, i) => [`${s.toUpperCase()}_URL`, `http://127.0.0.1:${addresses[i]}`]),
  );
  const gatewayPorts = addresses.slice(SERVICES.length, SERVICES.length + gateways);
  const replicaPorts = addresses.slice(SERVICES.length + gateways);
  const components = new Map<ComponentName, Component[]>();
  const proxies: RoundRobinProxy[] = [];
  const unexpectedExits: Exit[] = [];
  const add = (name: ComponentName, entry: string, own: Record<string, string>, replica: number, count: number) => {
    const log = path.join(logDir, count > 1 ? `${name}-${replica + 1}.log` : `${name}.log`);
    const c = new Component(name, entry, { ...env, ...topology.env?.[name], ...urls, ...own }, log, (exit) =>
      unexpectedExits.push(exit),
    );
    components.set(name, [...(components.get(name) ?? []), c]);
  };
  for (const [i, s] of SERVICES.entries()) {
    const ports = replicas > 1 ? replicaPorts.slice(i * replicas, (i + 1) * replicas) : [addresses[i]];
    if (replicas > 1) proxies.push(new RoundRobinProxy(addresses[i], ports));
    ports.forEach((port, r) => add(s, `services/${s}/src/main.ts`, { GRPC_PORT: String(port) }, r, replicas));
  }
  gatewayPorts.forEach((port, r) =>
    add("gateway", "gateway/src/main.ts", { PORT: String(port), HOST: "127.0.0.1" }, r, gateways),
  );
  await Promise.all(proxies.map((p) => p.listen()));
  const all = () => [...components.values()].flat();
  for (const c of all()) c.start();
  const gatewayUrls = gatewayPorts.map((p) => `http://127.0.0.1:${p}`);
  return {
    gatewayUrl: gatewayUrls[0],
    gatewayUrls,
    component: (name, replica = 0) => components.get(name)![replica],
    replicas: (name) => components.get(name)!,
    unexpectedExits,
    stop: async () => {
      await Promise.all(all().map((c) => c.stop()));
      await Promise.all(proxies.map((p) => p.close()));
    },
  };
}

/** Waits until the gateway reports every service serving. */
export async function waitServing(url: string, deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  for (;;) {
    const body = await fetch(`${url}/v1/health`)
      .then((r) => r.json() as Promise<{ services?: Record<string, string> }>)
      .catch(() => undefined);
    const states = Object.values(body?.services ?? {});
    if (states.length === SERVICES.length && states.every((s) => s === "SERVING")) return;
    if (Date.now() > until) throw new Error(`the system was not serving within ${deadlineMs / 1000} s`);
    await sleep(500);
  }
}
