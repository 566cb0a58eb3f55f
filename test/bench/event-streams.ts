// The board's event streams at rest (`npx tsx test/bench/event-streams.ts`). Not a test: it
// measures and prints. The whole system in this process (as `npm start`, its in-process bus
// feeding the gateway's change feed) on a fresh database; N idle streams are opened (3 per
// session, the cap), then for one minute nothing happens. Printed: the process's CPU, the
// database's transactions (each of the streams' reads is autocommit statements) and the
// streams' reads, each per idle stream per minute, against the same minute with no stream.
//
//   npx tsx test/bench/event-streams.ts [--streams 500] [--seconds 60]
import { randomUUID } from "node:crypto";
import { parseArgs } from "node:util";
import pg from "pg";
import { eventStreamReads } from "@transferops/kit";
import { startSystem } from "../../deploy/local/system.ts";
import { hashToken, newToken } from "../../services/fleet/src/domain/secrets.ts";

const { values: flags } = parseArgs({ options: { streams: { type: "string" }, seconds: { type: "string" } } });
const STREAMS = Number(flags.streams ?? 500);
const SECONDS = Number(flags.seconds ?? 60);
const ADMIN_DB = process.env.BENCH_DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres";

const name = `bench_streams_${Date.now().toString(36)}`;
const admin = new pg.Client({ connectionString: ADMIN_DB });
await admin.connect();
await admin.query(`create database ${name}`);
const url = ADMIN_DB.replace(/\/[^/]*$/, `/${name}`);
const db = new pg.Client({ connectionString: url });
const system = await startSystem({
  env: {
    NODE_ENV: "test",
    LOG_LEVEL: "warn",
    DATABASE_URL: url,
    KAFKA_BROKERS: "",
    API_KEYS: "bench-key",
    BOOTSTRAP_TOKEN: "bench-bootstrap",
    RATE_LIMIT_RPS: "1000",
    RATE_LIMIT_BURST: "5000",
  },
  randomPorts: true,
});
const aborts: AbortController[] = [];
try {
  await db.connect();
  const base = system.gatewayUrl;
  const post = async (path: string, body: unknown, token?: string, extra: Record<string, string> = {}) => {
    const r = await fetch(base + path, {
      method: "POST",
      headers: { "content-type": "application/json", ...(token ? { authorization: `Bearer ${token}` } : {}), ...extra },
      body: JSON.stringify(body),
    });
    return (await r.json()) as Record<string, string>;
  };
  await post("/v1/agents/bootstrap", { login: "root", full_name: "Root", password: "root-password-1" }, undefined, {
    "x-bootstrap-token": "bench-bootstrap",
  });
  const rootToken = (await post("/v1/agents/login", { login: "root", password: "root-password-1" })).token;
  const agent = await post(
    "/v1/agents/admin",
    { login: "idle", full_name: "Idle", password: "idle-password-1", role: "agent" },
    rootToken,
  );
  // Sessions written directly (a sign-in hashes a password: minutes for hundreds).
  const tokens: string[] = [];
  for (let i = 0; i < Math.ceil(STREAMS / 3); i += 1) {
    const token = newToken("session");
    tokens.push(token);
    await db.query(
      `insert into fleet.sessions (id, agent_id, token_hash, created_at, expires_at) values ($1, $2, $3, now(), now() + interval '5 hours')`,
      [randomUUID(), agent.agent_id, hashToken(token)],
    );
  }

  const minute = async () => {
    const xacts = async () =>
      Number(
        (await db.query(`select xact_commit + xact_rollback as n from pg_stat_database where datname = $1`, [name]))
          .rows[0].n,
      );
    const reads = async () => (await eventStreamReads.get()).values[0]?.value ?? 0;
    const [x0, r0, c0, t0] = [await xacts(), await reads(), process.cpuUsage(), performance.now()];
    await new Promise((r) => setTimeout(r, SECONDS * 1000));
    const c = process.cpuUsage(c0);
    const perMin = 60_000 / (performance.now() - t0);
    return {
      cpuMs: ((c.user + c.system) / 1000) * perMin,
      // The two reads of pg_stat_database themselves are left out.
      transactions: ((await xacts()) - x0 - 2) * perMin,
      reads: ((await reads()) - r0) * perMin,
    };
  };

  await new Promise((r) => setTimeout(r, 5000));
  const baseline = await minute();
  let open = 0;
  for (let i = 0; i < STREAMS; i += 1) {
    const abort = new AbortController();
    aborts.push(abort);
    const res = await fetch(`${base}/v1/events`, {
      headers: { authorization: `Bearer ${tokens[Math.floor(i / 3)]}` },
      signal: abort.signal,
    });
    if (res.status === 200) open += 1;
    void res.body?.pipeTo(new WritableStream()).catch(() => undefined);
  }
  // The first read of every stream (its `ready`) is done.
  await new Promise((r) => setTimeout(r, 10_000));
  const loaded = await minute();
  const per = (k: keyof typeof loaded) => ((loaded[k] - baseline[k]) / open).toFixed(4);
  console.log(
    JSON.stringify({
      streams_open: open,
      per_idle_stream_per_minute: {
        cpu_ms: per("cpuMs"),
        db_transactions: per("transactions"),
        stream_reads: per("reads"),
      },
      whole_process_per_minute: { baseline, with_streams: loaded },
    }),
  );
} finally {
  for (const a of aborts) a.abort();
  await system.stop();
  await db.end();
  await admin.query(`drop database if exists ${name} with (force)`);
  await admin.end();
}
