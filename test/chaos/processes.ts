// The system as deployed: each service and the gateway in a process of its own, on one
// database and the real Kafka broker. Each process can be killed with SIGKILL and started
// again on the same port with the same environment, as an orchestrator would.
import { spawn, type ChildProcess } from "node:child_process";
import { closeSync, openSync } from "node:fs";
import path from "node:path";
import { freePorts, sleep } from "../infra/util.ts";

const ROOT = path.resolve(import.meta.dirname, "../..");
export const SERVICES = ["fleet", "dispatch", "evidence", "intake", "messaging", "analytics"] as const;
export type ComponentName = (typeof SERVICES)[number] | "gateway";

export interface Exit {
  name: ComponentName;
  code: number | null;
  signal: string | null;
  at: number;
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
    const out = openSync(this.logFile, "a");
    try {
      const child = spawn(process.execPath, ["--import", "tsx", this.entry], {
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
          this.onUnexpectedExit({ name: this.name, code, signal, at: performance.now() });
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
  gatewayUrl: string;
  component(name: ComponentName): Component;
  /** Exits nobody asked for, in order (each process was started again). */
  unexpectedExits: Exit[];
  stop(): Promise<void>;
}

/** Starts the six services and the gateway (see `waitServing`). */
export async function startProcesses(env: Record<string, string>, logDir: string): Promise<ChaosSystem> {
  const ports = await freePorts(SERVICES.length + 1);
  const urls = Object.fromEntries(SERVICES.map((s, i) => [`${s.toUpperCase()}_URL`, `http://127.0.0.1:${ports[i]}`]));
  const components = new Map<ComponentName, Component>();
  const unexpectedExits: Exit[] = [];
  const add = (name: ComponentName, entry: string, own: Record<string, string>) =>
    components.set(
      name,
      new Component(name, entry, { ...env, ...urls, ...own }, path.join(logDir, `${name}.log`), (exit) =>
        unexpectedExits.push(exit),
      ),
    );
  SERVICES.forEach((s, i) => add(s, `services/${s}/src/main.ts`, { GRPC_PORT: String(ports[i]) }));
  add("gateway", "gateway/src/main.ts", { PORT: String(ports.at(-1)), HOST: "127.0.0.1" });
  for (const c of components.values()) c.start();
  return {
    gatewayUrl: `http://127.0.0.1:${ports.at(-1)}`,
    component: (name) => components.get(name)!,
    unexpectedExits,
    stop: async () => void (await Promise.all([...components.values()].map((c) => c.stop()))),
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
