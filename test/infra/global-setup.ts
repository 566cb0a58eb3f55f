// vitest globalSetup (see vitest.config.ts): makes sure a REAL PostgreSQL server and a
// REAL Kafka broker exist for the whole run, and hands their addresses to the tests
// (read them with infra() from test/infra/context.ts).

import { randomUUID } from "node:crypto";
import type { TestProject } from "vitest/node";
import type {} from "./context.ts"; // ProvidedContext typing (type-only: no runtime import of "vitest")
import { ensureKafka, type KafkaHandle } from "./kafka.ts";
import { dropStaleTestDatabases, ensurePostgres, TEST_DATABASE_PREFIX, type PostgresHandle } from "./postgres.ts";
import { message } from "./util.ts";

const log = (s: string): void => {
  process.stdout.write(`${s}\n`);
};

export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const started = Date.now();
  const [pgResult, kafkaResult] = await Promise.allSettled([ensurePostgres(log), ensureKafka(log)]);
  if (pgResult.status === "rejected" || kafkaResult.status === "rejected") {
    // Stop whichever one did start, then fail the run loudly.
    await Promise.allSettled([
      pgResult.status === "fulfilled" ? pgResult.value.stop() : undefined,
      kafkaResult.status === "fulfilled" ? kafkaResult.value.stop() : undefined,
    ]);
    const problems = [pgResult, kafkaResult]
      .filter((r): r is PromiseRejectedResult => r.status === "rejected")
      .map((r) => message(r.reason));
    throw new Error(`[infra] test infrastructure could not be started:\n- ${problems.join("\n- ")}`);
  }
  const postgres: PostgresHandle = pgResult.value;
  const kafka: KafkaHandle = kafkaResult.value;

  try {
    const dropped = await dropStaleTestDatabases(postgres.adminUrl, TEST_DATABASE_PREFIX);
    if (dropped.length > 0)
      log(
        `[infra] PostgreSQL: dropped ${dropped.length} leftover ${TEST_DATABASE_PREFIX}_* database(s) of earlier runs`,
      );
  } catch (err) {
    log(`[infra] PostgreSQL: could not clean up leftover test databases: ${message(err)}`);
  }

  log(`[infra] PostgreSQL: ${postgres.description}`);
  log(`[infra] Kafka: ${kafka.description}`);
  log(`[infra] ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);

  project.provide("databaseAdminUrl", postgres.adminUrl);
  project.provide("kafkaBrokers", kafka.brokers);
  project.provide("testRun", randomUUID());

  return async () => {
    const results = await Promise.allSettled([kafka.stop(), postgres.stop()]);
    for (const r of results) if (r.status === "rejected") log(`[infra] teardown problem: ${message(r.reason)}`);
  };
}
