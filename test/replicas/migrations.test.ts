import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, rows, type Migration } from "@transferops/kit";
import type { Constructor } from "@mikro-orm/core";
import { migrations as analytics } from "../../services/analytics/src/store/migrations/index.ts";
import { migrations as dispatch } from "../../services/dispatch/src/store/migrations/index.ts";
import { migrations as evidence } from "../../services/evidence/src/store/migrations/index.ts";
import { migrations as fleet } from "../../services/fleet/src/store/migrations/index.ts";
import { migrations as intake } from "../../services/intake/src/store/migrations/index.ts";
import { migrations as messaging } from "../../services/messaging/src/store/migrations/index.ts";
import { freshDatabase, type TestDatabase } from "../infra/context.ts";

const services: [string, Constructor<Migration>[]][] = [
  ["fleet", fleet],
  ["dispatch", dispatch],
  ["evidence", evidence],
  ["intake", intake],
  ["analytics", analytics],
  ["messaging", messaging],
];

/** As many migrators of one service as a rollout starts replicas at once, plus the release's job. */
const MIGRATORS = 4;

let tdb: TestDatabase;
beforeAll(async () => {
  tdb = await freshDatabase();
});
afterAll(async () => {
  await tdb?.drop();
});

describe("replicas starting together on a fresh database", () => {
  it.each(services)("%s: every migrator succeeds and each migration is applied once", async (schema, list) => {
    const started = await Promise.allSettled(
      Array.from({ length: MIGRATORS }, () => openDatabase({ url: tdb.url, schema, migrations: list, poolMax: 1 })),
    );
    const failures = started.flatMap((r) => (r.status === "rejected" ? [String(r.reason)] : []));
    for (const r of started) if (r.status === "fulfilled") await r.value.close();
    expect(failures).toEqual([]);

    const db = await openDatabase({ url: tdb.url, schema, migrations: list, poolMax: 1 });
    try {
      const applied = await rows<{ name: string }>(
        db.em(),
        `select name from "${schema}".mikro_orm_migrations order by id`,
      );
      expect(applied.map((m) => m.name)).toEqual(list.map((m) => m.name));
    } finally {
      await db.close();
    }
  });
});
