import { createLogger, KafkaBus, serviceClient } from "@transferops/kit";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventWorld } from "../../../test/support/analytics-world.ts";
import { eventually } from "../../../test/support/eventually.ts";
import { freshDatabase, infra, uniqueTopicPrefix, type TestDatabase } from "../../../test/infra/context.ts";
import { startAnalytics } from "./app.ts";
import { loadAnalyticsConfig } from "./config.ts";
import { rebuildReadModel } from "./jobs/rebuild.ts";

// Analytics alone on the real broker: project a world, empty the schema and rewind the
// groups, start again, and find the same report replayed from the beginning of the topics.

const log = createLogger("analytics-rebuild-test", { level: "silent" });
let database: TestDatabase;
let prefix: string;
let bus: KafkaBus;
const agent = "00000000-0000-4000-8000-00000000a001";
const caller = { kind: "session", agentId: agent, role: "admin", isActive: true };
const window = { from: "2026-03-02", to: "2026-03-04" };

const start = () =>
  startAnalytics({
    config: loadAnalyticsConfig({ DATABASE_URL: database.url, NODE_ENV: "test", LOG_LEVEL: "silent" }),
    port: 0,
    bus,
    log,
  });

function world(): EventWorld {
  const w = new EventWorld();
  const o = { agentId: agent, simId: "00000000-0000-4000-8000-00000000b001", deviceId: "d1", deviceLabel: "One" };
  for (const [n, montant, at] of [
    [1, 10000, "2026-03-02T08:00:00Z"],
    [2, 30000, "2026-03-03T08:00:00Z"],
    [3, 20000, "2026-03-04T08:00:00Z"],
  ] as const) {
    const op = { id: `00000000-0000-4000-8000-00000000000${n}`, opType: "deposit", montant, createdAt: at, ...o };
    w.operation(op, { status: "queued", trigger: "create", at });
    w.operation(op, {
      status: "confirmed",
      previous: "awaiting_evidence",
      trigger: "proof",
      at: at.replace("08:00:00", "08:01:00"),
      evidence: { receivedAt: at.replace("08:00:00", "08:00:30") },
    });
  }
  return w;
}

beforeAll(async () => {
  database = await freshDatabase();
  prefix = uniqueTopicPrefix();
  bus = new KafkaBus({ brokers: infra().kafkaBrokers.split(","), clientId: "analytics-rebuild-test", prefix, log });
});
afterAll(async () => {
  await bus?.close();
  await database?.drop();
});

describe("npm run analytics:rebuild", () => {
  it("replays every topic from the beginning into an empty schema", async () => {
    let service = await start();
    await world().publish({ env: { KAFKA_BROKERS: infra().kafkaBrokers }, topicPrefix: prefix });
    const report = async () =>
      (await serviceClient(AnalyticsService, service.url).getAnalytics({ caller, window })).report!;
    const expected = { sentXaf: 60000n, transfers: 3n, medianTransfer: 20000n, largestTransfer: 30000n };
    await eventually(async () => {
      expect((await report()).money).toMatchObject(expected);
      return true;
    }, 40_000);
    const before = await report();

    // While analytics runs, Kafka refuses the rewind and nothing is dropped.
    await expect(rebuildReadModel(database.url, bus)).rejects.toThrow(/must have no running instances/);
    expect((await report()).money).toMatchObject(expected);

    await service.stop();
    await rebuildReadModel(database.url, bus);
    const db = new pg.Client({ connectionString: database.url });
    await db.connect();
    try {
      const [{ operations, inbox }] = (
        await db.query(
          `select (select count(*) from analytics.operations)::int as operations, (select count(*) from analytics.inbox)::int as inbox`,
        )
      ).rows;
      expect({ operations, inbox }).toEqual({ operations: 0, inbox: 0 });
    } finally {
      await db.end();
    }

    service = await start();
    try {
      await eventually(async () => {
        const after = await report();
        expect(after.money).toEqual(before.money);
        expect(after.activity).toEqual(before.activity);
        expect(after.reliability).toEqual(before.reliability);
        return true;
      }, 40_000);
    } finally {
      await service.stop();
    }
  });
});
