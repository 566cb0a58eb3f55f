import { spawn, type ChildProcess } from "node:child_process";
import { randomUUID } from "node:crypto";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, infra, uniqueTopicPrefix, type TestDatabase } from "../infra/context.ts";
import { freePorts, sleep } from "../infra/util.ts";
import { Api } from "../support/api.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "../support/system.ts";
import { provisionHandset } from "../support/fleet-fixtures.ts";

// Every component runs as its own process, as deployed. Under load (creates, device polls
// and outcomes, heartbeats, board reads) and with their jobs running every second, all of
// them get SIGTERM at once: each must exit within 10 s.

const ROOT = path.resolve(import.meta.dirname, "../..");
const SERVICES = ["fleet", "dispatch", "evidence", "intake", "analytics", "messaging"] as const;
const DEADLINE_MS = 10_000;

interface Component {
  name: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; at: number }>;
  output: string[];
}

let db: TestDatabase;
let components: Component[] = [];
let api: Api;

function launch(name: string, entry: string, env: Record<string, string>): Component {
  const child = spawn(process.execPath, ["--import", "tsx", entry], {
    cwd: ROOT,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const output: string[] = [];
  child.stdout!.on("data", (c: Buffer) => output.push(c.toString()));
  child.stderr!.on("data", (c: Buffer) => output.push(c.toString()));
  const exited = new Promise<{ code: number | null; at: number }>((resolve) =>
    child.on("exit", (code) => resolve({ code, at: Date.now() })),
  );
  return { name, child, exited, output };
}

async function waitHealthy(deadlineMs: number): Promise<void> {
  const until = Date.now() + deadlineMs;
  while (Date.now() < until) {
    const res = await api.get("/v1/health").catch(() => undefined);
    if (res?.status === 200 && Object.values(res.body.services ?? {}).every((s) => s === "SERVING")) return;
    await sleep(500);
  }
  throw new Error("system did not become healthy");
}

beforeAll(async () => {
  db = await freshDatabase();
  const ports = await freePorts(SERVICES.length + 1);
  const env: Record<string, string> = {
    NODE_ENV: "test",
    LOG_LEVEL: "info",
    DATABASE_URL: db.url,
    KAFKA_BROKERS: infra().kafkaBrokers,
    KAFKA_TOPIC_PREFIX: uniqueTopicPrefix(),
    API_KEYS: TEST_API_KEY,
    BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
    RATE_LIMIT_RPS: "100000",
    RATE_LIMIT_BURST: "100000",
    SWEEP_INTERVAL_S: "1",
    EVIDENCE_REDRIVE_INTERVAL_MS: "500",
  };
  SERVICES.forEach((s, i) => (env[`${s.toUpperCase()}_URL`] = `http://127.0.0.1:${ports[i]}`));
  components = SERVICES.map((s, i) => launch(s, `services/${s}/src/main.ts`, { ...env, GRPC_PORT: String(ports[i]) }));
  components.push(launch("gateway", "gateway/src/main.ts", { ...env, PORT: String(ports.at(-1)), HOST: "127.0.0.1" }));
  api = new Api(`http://127.0.0.1:${ports.at(-1)}`);
  await waitHealthy(120_000);
}, 180_000);

afterAll(async () => {
  for (const c of components) if (c.child.exitCode === null) c.child.kill("SIGKILL");
  await db?.drop();
});

describe("shutdown", () => {
  it(
    "stops every component within 10 s of SIGTERM while jobs and calls are in flight",
    { timeout: 120_000 },
    async () => {
      const admin = await api.bootstrapAdmin();
      const agent = await api.createAgent(admin.token, { login: "busy" });
      const { device, sims } = await provisionHandset(api, admin.token, { balance: 100_000_000 });
      await api.patch(`/v1/admin/agents/${agent.agentId}/access`, {
        token: admin.token,
        body: { allowed_sim_ids: sims.map((s) => s.simId) },
      });

      let loading = true;
      let answered = 0;
      const loop = async (call: () => Promise<unknown>) => {
        while (loading) {
          await call().then(
            () => answered++,
            () => sleep(50),
          );
        }
      };
      const create = () =>
        api.post("/v1/operations", {
          apiKey: true,
          body: {
            request_id: randomUUID(),
            agent_id: agent.agentId,
            operator: "operator_a",
            type_op: "deposit",
            montant: 100,
            client: { msisdn: "670000001", nom: "Load" },
          },
        });
      const poll = async () => {
        const res = await api.get("/v1/device/next", { token: device.token });
        const id = res.body?.operation_id;
        if (id) {
          await api.post("/v1/device/outcome", {
            token: device.token,
            body: { operation_id: id, outcome: "ussd_ok", ussd_response: "ok", executed_at: new Date().toISOString() },
          });
        }
      };
      const heartbeat = () =>
        api.post("/v1/device/heartbeat", {
          token: device.token,
          body: { app_version: "1", battery: 50, network: "4G", sims: [] },
        });
      const read = () => api.get("/v1/operations?limit=50", { token: agent.token });
      const workers = [create, create, create, poll, poll, heartbeat, read, read].map(loop);
      await sleep(4_000);
      expect(answered).toBeGreaterThan(10);

      const sentAt = Date.now();
      for (const c of components) c.child.kill("SIGTERM");
      const results = await Promise.all(
        components.map(async (c) => {
          const timeout = sleep(DEADLINE_MS + 5_000).then(() => ({ code: null, at: Number.POSITIVE_INFINITY }));
          const r = await Promise.race([c.exited, timeout]);
          return { name: c.name, code: r.code, took_ms: r.at - sentAt };
        }),
      );
      loading = false;
      await Promise.allSettled(workers);
      console.table(results);
      for (const r of results) {
        expect(r.took_ms, `${r.name} stopped in ${r.took_ms} ms`).toBeLessThan(DEADLINE_MS);
      }
    },
  );
});
