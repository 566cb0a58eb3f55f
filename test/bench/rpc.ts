// The CPU cost of one call between services: a server child (rpc-server.ts) answering
// grpc.health.v1 `Check` (a unary call with next to no work, so what is measured is the
// protocol, the transport and the kit's wrappers), called `--calls` times by `--concurrency`
// callers from this process. Per scenario: CPU-µs per call of the client (this process) and of
// the server (the child's process.cpuUsage), and calls/s. Scenarios run in turns, `--rounds`
// times, so the machine's load moves them all alike; a summary gives each one's range.
//
// Each round also gives every scenario's total as a multiple of the same round's hello-h1 (the
// reference runs first in every round), which moves less with the machine's load than µs do.
//
//   npm run bench:rpc -- [--calls 10000] [--concurrency 16] [--rounds 5] [--only kit,connect-kit]
//                        [--profile <dir>]   (--cpu-prof of the servers into <dir>)
//
// On a loaded machine the µs of one scenario move by ±30 % from one run to the next. `--paired
// a,b` compares two scenarios of the same server within one run instead: one server, both
// clients, alternating batches of `--batch` calls (`--calls` calls in all for each), the CPU of
// both processes read around every batch, so the load moves both alike:
//
//   npm run bench:rpc -- --paired grpc-kit,kit [--calls 20000] [--batch 500]

import { spawn, type ChildProcess } from "node:child_process";
import http from "node:http";
import http2 from "node:http2";
import path from "node:path";
import readline from "node:readline";
import { fileURLToPath } from "node:url";
import { createClient, type Transport } from "@connectrpc/connect";
import { createConnectTransport, createGrpcTransport } from "@connectrpc/connect-node";
import { runWithContext, serviceClient } from "@transferops/kit";
import { Health } from "@transferops/kit/gen/grpc/health/v1/health_pb";

const here = path.dirname(fileURLToPath(import.meta.url));
const args = process.argv.slice(2);
const arg = (name: string, fallback: string) => {
  const i = args.indexOf(`--${name}`);
  return i >= 0 ? args[i + 1] : fallback;
};
const CALLS = Number(arg("calls", "10000"));
const CONCURRENCY = Number(arg("concurrency", "16"));
const ROUNDS = Number(arg("rounds", "5"));
const PROFILE = arg("profile", "");
const ONLY = arg("only", "")
  .split(",")
  .filter((s) => s);
const log = (s: string) => process.stdout.write(`${s}\n`);

type Call = () => Promise<unknown>;

interface Scenario {
  name: string;
  what: string;
  server: string;
  env?: Record<string, string>;
  client(url: string): { call: Call; close(): void };
}

// What the kit's client adds to every call (client.ts): the correlation id as a header and
// the time left before the incoming request's deadline (here 10 s) as the call's timeout.
const KIT_HEADERS = { "x-correlation-id": "bench-rpc" };
const KIT_TIMEOUT_MS = 10_000;
const transports = {
  grpc: (url: string) => createGrpcTransport({ baseUrl: url, acceptCompression: [] }),
  connect: (url: string) =>
    createConnectTransport({ baseUrl: url, httpVersion: "2", useBinaryFormat: true, acceptCompression: [] }),
};
const plain = (transport: Transport, kit: { deadline: boolean } | undefined) => {
  const client = createClient(Health, transport);
  const options = kit ? { headers: KIT_HEADERS, timeoutMs: kit.deadline ? KIT_TIMEOUT_MS : undefined } : {};
  return { call: () => client.check({}, options), close() {} };
};
const kitClient = (url: string) => {
  const client = serviceClient(Health, url);
  const call = () =>
    runWithContext({ correlationId: "bench-rpc", deadline: Date.now() + KIT_TIMEOUT_MS }, () => client.check({}));
  return { call, close() {} };
};

const byProtocol = (protocol: "grpc" | "connect", label: string): Scenario[] => [
  {
    name: `${protocol}-kit`,
    what: `${label} with the kit's correlation id and 10 s deadline -> the kit's server`,
    server: "kit",
    client: (url) => plain(transports[protocol](url), { deadline: true }),
  },
  {
    name: `${protocol}-nodeadline`,
    what: `${label} with the correlation id, no deadline -> the kit's server`,
    server: "kit",
    client: (url) => plain(transports[protocol](url), { deadline: false }),
  },
  {
    name: `${protocol}-bare`,
    what: `${label}, nothing added -> connect-node's adapter alone on h2c (no kit interceptor)`,
    server: "h2",
    client: (url) => plain(transports[protocol](url), undefined),
  },
];

const scenarios: Scenario[] = [
  {
    name: "hello-h1",
    what: "reference: node:http 200 'ok', keep-alive client",
    server: "hello-h1",
    client(url) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
      const call = () =>
        new Promise<void>((resolve, reject) => {
          const req = http.get(url, { agent }, (res) => {
            res.resume();
            res.on("end", resolve);
          });
          req.on("error", reject);
        });
      return { call, close: () => agent.destroy() };
    },
  },
  {
    name: "hello-h2",
    what: "reference: node:http2 200 'ok', one session",
    server: "hello-h2",
    client(url) {
      const session = http2.connect(url);
      const call = () =>
        new Promise<void>((resolve, reject) => {
          const req = session.request({ ":path": "/" });
          req.on("error", reject);
          req.resume();
          req.on("end", resolve);
          req.end();
        });
      return { call, close: () => session.close() };
    },
  },
  {
    name: "kit",
    what: "the kit as it is: serviceClient inside a request's context -> startGrpcServer",
    server: "kit",
    client: kitClient,
  },
  ...byProtocol("grpc", "gRPC over h2c"),
  ...byProtocol("connect", "Connect binary over h2c"),
  {
    name: "kit-traced",
    what: "the kit as it is, the server with TRACING=on (exporter unreachable)",
    server: "kit",
    env: { TRACING: "on", OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:9" },
    client: kitClient,
  },
  {
    name: "connect-h1-bare",
    what: "Connect binary over HTTP/1.1 keep-alive, nothing added -> the adapter alone on node:http",
    server: "h1",
    client(url) {
      const agent = new http.Agent({ keepAlive: true, maxSockets: CONCURRENCY });
      const transport = createConnectTransport({
        baseUrl: url,
        httpVersion: "1.1",
        useBinaryFormat: true,
        acceptCompression: [],
        nodeOptions: { agent },
      });
      const { call } = plain(transport, undefined);
      return { call, close: () => agent.destroy() };
    },
  },
];

interface Server {
  child: ChildProcess;
  url: string;
  cpu(): Promise<number>;
}

async function startServer(mode: string, env: Record<string, string> = {}): Promise<Server> {
  const profile = PROFILE ? ["--cpu-prof", `--cpu-prof-dir=${path.join(PROFILE, `${mode}-${Date.now()}`)}`] : [];
  const child = spawn(process.execPath, [...profile, "--import", "tsx", path.join(here, "rpc-server.ts"), mode], {
    env: { ...process.env, ...env },
    stdio: ["pipe", "pipe", "inherit"],
  });
  const lines = readline.createInterface({ input: child.stdout! });
  const waiting: ((line: string) => void)[] = [];
  lines.on("line", (line) => waiting.shift()?.(line));
  const next = () => new Promise<string>((resolve) => waiting.push(resolve));
  const { url } = JSON.parse(await next()) as { url: string };
  return {
    child,
    url,
    async cpu() {
      const answer = next();
      child.stdin!.write("cpu\n");
      const { user, system } = JSON.parse(await answer) as NodeJS.CpuUsage;
      return user + system;
    },
  };
}

async function drive(call: Call, calls: number): Promise<void> {
  let left = calls;
  await Promise.all(
    Array.from({ length: CONCURRENCY }, async () => {
      while (left > 0) {
        left -= 1;
        await call();
      }
    }),
  );
}

interface Result {
  client: number;
  server: number;
  rate: number;
}

async function run(s: Scenario): Promise<Result> {
  const server = await startServer(s.server, s.env);
  const client = s.client(server.url);
  try {
    await drive(client.call, Math.min(3000, CALLS)); // warm up (JIT, sessions, sockets)
    const serverBefore = await server.cpu();
    const before = process.cpuUsage();
    const started = performance.now();
    await drive(client.call, CALLS);
    const seconds = (performance.now() - started) / 1000;
    const used = process.cpuUsage(before);
    const serverUsed = (await server.cpu()) - serverBefore;
    return { client: (used.user + used.system) / CALLS, server: serverUsed / CALLS, rate: CALLS / seconds };
  } finally {
    client.close();
    server.child.stdin!.end();
    await new Promise((resolve) => server.child.once("exit", resolve));
  }
}

const total = (r: Result) => r.client + r.server;
const ratio = (r: Result, ref: Result) => total(r) / total(ref);
const fmt = (r: Result) =>
  `client ${r.client.toFixed(0).padStart(4)} µs, server ${r.server.toFixed(0).padStart(4)} µs, ` +
  `total ${(r.client + r.server).toFixed(0).padStart(4)} µs/call, ${r.rate.toFixed(0).padStart(6)} calls/s`;

const PAIRED = arg("paired", "")
  .split(",")
  .filter((x) => x);
if (PAIRED.length === 2) {
  await paired(PAIRED.map((name) => scenarios.find((x) => x.name === name)!));
  process.exit(0);
}

async function paired([a, b]: Scenario[]): Promise<void> {
  if (!a || !b || a.server !== b.server || a.env || b.env) throw new Error("--paired: two scenarios of one server");
  const BATCH = Number(arg("batch", "500"));
  const server = await startServer(a.server);
  const clients = [a.client(server.url), b.client(server.url)];
  const sums = [
    { client: 0, server: 0, ms: 0, calls: 0 },
    { client: 0, server: 0, ms: 0, calls: 0 },
  ];
  const ratios: number[] = [];
  try {
    for (const c of clients) await drive(c.call, Math.min(3000, CALLS));
    for (let done = 0; done < CALLS; done += BATCH) {
      const totals: number[] = [];
      for (const i of done % (2 * BATCH) === 0 ? [0, 1] : [1, 0]) {
        const serverBefore = await server.cpu();
        const before = process.cpuUsage();
        const started = performance.now();
        await drive(clients[i].call, BATCH);
        const ms = performance.now() - started;
        const used = process.cpuUsage(before);
        const serverUsed = (await server.cpu()) - serverBefore;
        sums[i].client += used.user + used.system;
        sums[i].server += serverUsed;
        sums[i].ms += ms;
        sums[i].calls += BATCH;
        totals[i] = used.user + used.system + serverUsed;
      }
      ratios.push(totals[1] / totals[0]);
    }
  } finally {
    for (const c of clients) c.close();
    server.child.stdin!.end();
  }
  ratios.sort((x, y) => x - y);
  log(`${CALLS} calls each, ${CONCURRENCY} at a time, alternating batches of ${BATCH}, one ${a.server} server`);
  for (const [i, s] of [a, b].entries()) {
    const r = sums[i];
    const res = { client: r.client / r.calls, server: r.server / r.calls, rate: (r.calls / r.ms) * 1000 };
    log(`${s.name.padEnd(18)} ${fmt(res)}  ${s.what}`);
  }
  const q = (p: number) => ratios[Math.min(ratios.length - 1, Math.floor(p * ratios.length))].toFixed(2);
  log(`${b.name} / ${a.name}, CPU per call of a batch: median ${q(0.5)} (quartiles ${q(0.25)}–${q(0.75)})`);
}

const chosen = scenarios.filter((s) => s.name === "hello-h1" || !ONLY.length || ONLY.includes(s.name));
const results = new Map<string, Result[]>(chosen.map((s) => [s.name, []]));

log(`${CALLS} calls a run, ${CONCURRENCY} at a time, ${ROUNDS} rounds`);
for (let round = 1; round <= ROUNDS; round++) {
  for (const s of chosen) {
    const r = await run(s);
    results.get(s.name)!.push(r);
    const ref = results.get("hello-h1")![round - 1];
    log(`round ${round} ${s.name.padEnd(16)} ${fmt(r)}, ${ratio(r, ref).toFixed(2)} × hello-h1`);
  }
}

const range = (xs: number[], digits = 0) => {
  const lo = Math.min(...xs).toFixed(digits);
  const hi = Math.max(...xs).toFixed(digits);
  return lo === hi ? lo : `${lo}–${hi}`;
};
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const refs = results.get("hello-h1")!;
log("\nCPU-µs per call (client + server = total), total × hello-h1 (median), calls/s: ranges over the rounds");
for (const s of chosen) {
  const rs = results.get(s.name)!;
  const ratios = rs.map((r, i) => ratio(r, refs[i]));
  log(
    `${s.name.padEnd(16)} ${range(rs.map((r) => r.client)).padStart(9)} + ${range(rs.map((r) => r.server)).padStart(9)} = ` +
      `${range(rs.map(total)).padStart(9)}  ${range(ratios, 2).padStart(9)} (${median(ratios).toFixed(2)})  ` +
      `${range(rs.map((r) => r.rate)).padStart(11)}  ${s.what}`,
  );
}
process.exit(0);
