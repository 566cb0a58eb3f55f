// A real PgBouncer (the Debian package's binary) between the replica run's pools and its
// database, as the chart's `database.pgbouncer` puts one: transaction mode, a server pool of
// `poolSize` connections. `npm run test:replicas -- --pgbouncer`.

import { spawn, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, openSync, closeSync, rmSync, writeFileSync, chmodSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import pg from "pg";
import { freePorts, sleep } from "../infra/util.ts";

export interface PgBouncer {
  /** The database through PgBouncer (DATABASE_POOL_URL). */
  url: string;
  stop(): Promise<void>;
}

const BINARIES = [process.env.PGBOUNCER_BIN, "/usr/sbin/pgbouncer", "/usr/bin/pgbouncer"];

export async function startPgBouncer(databaseUrl: string, poolSize: number, logFile: string): Promise<PgBouncer> {
  const binary = BINARIES.find((b) => b && existsSync(b));
  if (!binary) throw new Error("no pgbouncer binary (apt-get install pgbouncer, or set PGBOUNCER_BIN)");
  const upstream = new URL(databaseUrl);
  const database = upstream.pathname.slice(1);
  const [port] = await freePorts(1);
  const dir = mkdtempSync(path.join(os.tmpdir(), "tops-pgbouncer-"));
  chmodSync(dir, 0o755);
  const user = decodeURIComponent(upstream.username || "postgres");
  writeFileSync(path.join(dir, "userlist.txt"), `"${user}" "${decodeURIComponent(upstream.password)}"\n`);
  writeFileSync(
    path.join(dir, "pgbouncer.ini"),
    [
      "[databases]",
      `${database} = host=${upstream.hostname} port=${upstream.port || 5432} dbname=${database}`,
      "[pgbouncer]",
      "listen_addr = 127.0.0.1",
      `listen_port = ${port}`,
      "unix_socket_dir =",
      "pool_mode = transaction",
      "auth_type = trust",
      `auth_file = ${path.join(dir, "userlist.txt")}`,
      `default_pool_size = ${poolSize}`,
      `max_db_connections = ${poolSize}`,
      "max_client_conn = 1000",
      // The services send `set jit = off` on each new connection, not as a startup option.
      "ignore_startup_parameters = extra_float_digits,options",
      "server_reset_query =",
      "",
    ].join("\n"),
  );
  const out = openSync(logFile, "a");
  let child: ChildProcess;
  try {
    // PgBouncer refuses to run as root: as `nobody` then.
    const asRoot = process.getuid?.() === 0 ? ["-u", "nobody"] : [];
    child = spawn(binary, [...asRoot, path.join(dir, "pgbouncer.ini")], { stdio: ["ignore", out, out] });
  } finally {
    closeSync(out);
  }
  const url = new URL(databaseUrl);
  url.hostname = "127.0.0.1";
  url.port = String(port);
  for (const until = Date.now() + 15_000; ; await sleep(200)) {
    const c = new pg.Client({ connectionString: url.toString() });
    const ok = await c.connect().then(
      () => c.query("select 1").then(() => true),
      () => false,
    );
    await c.end().catch(() => undefined);
    if (ok) break;
    if (child.exitCode !== null || Date.now() > until) {
      child.kill("SIGKILL");
      throw new Error(`pgbouncer did not serve on port ${port} (see ${logFile})`);
    }
  }
  return {
    url: url.toString(),
    stop: async () => {
      if (child.exitCode === null) {
        const exited = new Promise((r) => child.once("exit", r));
        child.kill("SIGINT");
        await Promise.race([exited, sleep(5_000)]);
        if (child.exitCode === null) child.kill("SIGKILL");
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
