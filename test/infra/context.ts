// Helpers for tests: the real PostgreSQL server and Kafka broker started (or found) by
// test/infra/global-setup.ts, handed over through vitest's provide/inject.
//
//   import { freshDatabase, infra, uniqueTopicPrefix } from "../../test/infra/context.ts";
//
//   let db: TestDatabase;
//   beforeAll(async () => { db = await freshDatabase(); });
//   afterAll(async () => { await db?.drop(); });
//   const brokers = infra().kafkaBrokers.split(",");
//   const topic = `${uniqueTopicPrefix()}transfers`;

import { randomBytes } from "node:crypto";
import { inject } from "vitest";
import { createDatabase, TEST_DATABASE_PREFIX, type TestDatabase } from "./postgres.ts";

export type { TestDatabase } from "./postgres.ts";

declare module "vitest" {
  export interface ProvidedContext {
    /** URL of the "postgres" maintenance database on a server where tests may CREATE DATABASE. */
    databaseAdminUrl: string;
    /** Comma separated Kafka bootstrap servers, e.g. "127.0.0.1:40123". */
    kafkaBrokers: string;
    /** This run's id, the same in every file (e.g. to build the board once: buildBoardOnce). */
    testRun: string;
  }
}

export interface Infra {
  databaseAdminUrl: string;
  kafkaBrokers: string;
}

export function infra(): Infra {
  const databaseAdminUrl = inject("databaseAdminUrl");
  const kafkaBrokers = inject("kafkaBrokers");
  if (!databaseAdminUrl || !kafkaBrokers) {
    throw new Error(
      "test infrastructure missing: run tests through vitest with globalSetup test/infra/global-setup.ts (see vitest.config.ts)",
    );
  }
  return { databaseAdminUrl, kafkaBrokers };
}

/** A new, empty database for this test file. Create it in beforeAll, drop() it in afterAll. */
export async function freshDatabase(prefix = TEST_DATABASE_PREFIX): Promise<TestDatabase> {
  return createDatabase(infra().databaseAdminUrl, prefix);
}

/** A prefix that makes topic (and consumer group) names unique per call, e.g. "tmhb3k2x9a1f0c2." */
export function uniqueTopicPrefix(): string {
  return `t${Date.now().toString(36)}${randomBytes(3).toString("hex")}.`;
}
