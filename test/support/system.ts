import pg from "pg";
import { startSystem, type RunningSystem } from "../../deploy/local/system.ts";
import { freshDatabase, infra, uniqueTopicPrefix, type TestDatabase } from "../infra/context.ts";
import { Api } from "./api.ts";

import { eventually } from "./eventually.ts";
export { eventually };

import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "./credentials.ts";
export { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN };

/** The test's database, with a pool for assertions on what the services stored. */
export interface QueryableDatabase extends TestDatabase {
  query(sql: string, params?: unknown[]): Promise<any[]>;
}

export interface TestSystem {
  url: string;
  api: Api;
  db: QueryableDatabase;
  system: RunningSystem;
  /** Every log line every component wrote, as JSON text. */
  logs: string[];
  topicPrefix: string;
  env: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The whole system (gateway and six services) on a fresh database and the real Kafka
 * broker, with its own topic prefix so test files never see each other's events.
 */
export async function startTestSystem(extraEnv: Record<string, string> = {}): Promise<TestSystem> {
  const fresh = await freshDatabase();
  const pool = new pg.Pool({ connectionString: fresh.url, max: 3 });
  // Dropping the test database terminates idle pooled connections: expected, not a failure.
  pool.on("error", () => undefined);
  const db: QueryableDatabase = {
    ...fresh,
    query: async (sql, params) => (await pool.query(sql, params as unknown[])).rows,
    drop: async () => {
      await pool.end();
      await fresh.drop();
    },
  };
  const topicPrefix = uniqueTopicPrefix();
  const logs: string[] = [];
  const env: Record<string, string> = {
    NODE_ENV: "test",
    LOG_LEVEL: "debug",
    DATABASE_URL: db.url,
    KAFKA_BROKERS: infra().kafkaBrokers,
    KAFKA_TOPIC_PREFIX: topicPrefix,
    API_KEYS: TEST_API_KEY,
    BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
    RATE_LIMIT_RPS: "1000",
    RATE_LIMIT_BURST: "5000",
    ...extraEnv,
  };
  let system: RunningSystem | undefined;
  try {
    system = await startSystem({
      env,
      randomPorts: true,
      logDestination: { write: (line: string) => void logs.push(line) },
    });
    // Ready as a probe sees it: each service's consumers joined their groups.
    const url = system.gatewayUrl;
    await eventually(async () => ((await fetch(`${url}/v1/health`)).ok ? true : undefined), 60_000, "services ready");
  } catch (err) {
    await system?.stop();
    await db.drop();
    throw err;
  }
  return {
    url: system.gatewayUrl,
    api: new Api(system.gatewayUrl),
    db,
    system,
    logs,
    topicPrefix,
    env,
    async stop() {
      await system.stop();
      await db.drop();
    },
  };
}
