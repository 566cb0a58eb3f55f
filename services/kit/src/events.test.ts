import { create, toBinary } from "@bufbuild/protobuf";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, infra, uniqueTopicPrefix, type TestDatabase } from "../../../test/infra/context.ts";
import { KafkaBus } from "./bus-kafka.ts";
import { MemoryBus } from "./bus-memory.ts";
import type { BusMessage, EventBus } from "./bus.ts";
import { Migration, openDatabase, rows, type Database } from "./db.ts";
import {
  consumeOnce,
  enqueueEvent,
  on,
  OutboxRelay,
  outboxInboxSql,
  outboxInsertSql,
  outboxNotifySql,
  outboxValuesNow,
  startConsumer,
} from "./events.ts";
import { createLogger } from "./log.ts";
import { AlertRaisedSchema } from "./gen/transferops/common/v1/alerts_pb.ts";
import { eventually } from "../../../test/support/eventually.ts";

class Migration0001Test extends Migration {
  override name = "Migration0001Test";
  up(): void {
    this.addSql(
      `create table kittest.effects (event_id uuid not null, dedupe_key text not null, applied_at timestamptz default now(),
        txid bigint default txid_current())`,
    );
    for (const sql of [...outboxInboxSql("kittest"), ...outboxNotifySql("kittest")]) this.addSql(sql);
  }
}

const log = createLogger("kit-test", { level: "silent" });
let tdb: TestDatabase;
let db: Database;
let bus: KafkaBus;

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "kittest", migrations: [Migration0001Test] });
  bus = new KafkaBus({
    brokers: infra().kafkaBrokers.split(","),
    clientId: "kit-test",
    prefix: uniqueTopicPrefix(),
    log,
  });
});
afterAll(async () => {
  await bus?.close();
  await db?.close();
  await tdb?.drop();
});

async function enqueueAlerts(n: number, tag: string): Promise<string[]> {
  return db.tx(async (em) => {
    const ids: string[] = [];
    for (let i = 0; i < n; i++) {
      ids.push(
        await enqueueEvent(em, "kittest", {
          topic: "alerts",
          key: `sim-${i % 3}`,
          schema: AlertRaisedSchema,
          message: create(AlertRaisedSchema, { kind: "test", dedupeKey: `${tag}-${i}`, message: `alert ${i}` }),
        }),
      );
    }
    return ids;
  });
}

/** A bus that publishes for real, then "dies" before the relay can mark the rows. */
class CrashAfterPublish implements EventBus {
  crashes = 0;
  constructor(
    private readonly inner: EventBus,
    private crashesLeft: number,
  ) {}
  async publish(messages: BusMessage[]): Promise<void> {
    await this.inner.publish(messages);
    if (this.crashesLeft > 0) {
      this.crashesLeft -= 1;
      this.crashes += 1;
      throw new Error("relay killed after publishing, before marking");
    }
  }
  subscribe: EventBus["subscribe"] = (g, t, h) => this.inner.subscribe(g, t, h);
  subscribeBatches: EventBus["subscribeBatches"] = (g, t, h) => this.inner.subscribeBatches(g, t, h);
  close = () => this.inner.close();
}

describe("transactional outbox and idempotent inbox over Kafka", () => {
  it("loses nothing and applies nothing twice when the relay dies between publishing and marking", async () => {
    const ids = await enqueueAlerts(12, "crash");
    const crashing = new CrashAfterPublish(bus, 2);
    const dying = new OutboxRelay(db, crashing, log, { batchSize: 5 });
    await expect(dying.publishBatch()).rejects.toThrow("relay killed");
    await expect(dying.publishBatch()).rejects.toThrow("relay killed");
    // Nothing was marked: the rows are still due, so a restarted relay republishes them.
    const due = await db.em().execute(`select count(*)::int as n from kittest.outbox where published_at is null`);
    expect(due[0].n).toBe(12);

    const restarted = new OutboxRelay(db, bus, log, { batchSize: 5 });
    while ((await restarted.publishBatch()) > 0);

    const delivered: string[] = [];
    const consumer = await startConsumer({
      bus: {
        ...bus,
        subscribe: (g, t, h) => bus.subscribe(g, t, async (m) => (delivered.push(m.headers["event-id"]), h(m))),
      } as EventBus,
      db,
      group: "kittest.crash",
      topics: ["alerts"],
      log,
      handlers: [
        on(AlertRaisedSchema, async (em, e, meta) => {
          await em.execute(`insert into kittest.effects (event_id, dedupe_key) values (?, ?)`, [
            meta.eventId,
            e.dedupeKey,
          ]);
        }),
      ],
    });
    try {
      const effects = await eventually(
        async () => {
          const e = (await db.em().execute(`select event_id from kittest.effects where dedupe_key like 'crash-%'`)) as {
            event_id: string;
          }[];
          return e.length >= 12 && delivered.length >= 12 + 2 * 5 ? e : undefined;
        },
        30_000,
        "every event applied and the crashed batches delivered again",
      );
      // The broker really carried duplicates (two crashed batches of 5, and any redelivery)...
      expect(delivered.length).toBeGreaterThanOrEqual(12 + 2 * 5);
      expect(new Set(delivered).size).toBe(12);
      // ...and in effect every event applied exactly once.
      expect(effects.map((e) => e.event_id).sort()).toEqual([...ids].sort());
    } finally {
      await consumer.close();
    }
  });

  it("changes nothing when an event is delivered again", async () => {
    const effect = async (em: Parameters<Parameters<typeof consumeOnce>[3]>[0]) => {
      await em.execute(`insert into kittest.effects (event_id, dedupe_key) values (?, 'redelivered')`, [
        "00000000-0000-4000-8000-000000000001",
      ]);
    };
    expect(await consumeOnce(db, "kittest.redelivery", "00000000-0000-4000-8000-000000000001", effect)).toBe(true);
    expect(await consumeOnce(db, "kittest.redelivery", "00000000-0000-4000-8000-000000000001", effect)).toBe(false);
    const rows = await db
      .em()
      .execute(`select count(*)::int as n from kittest.effects where dedupe_key = 'redelivered'`);
    expect(rows[0].n).toBe(1);
  });

  it("publishes nothing from a transaction that rolls back", async () => {
    await expect(
      db.tx(async (em) => {
        await enqueueEvent(em, "kittest", {
          topic: "alerts",
          key: "rolled-back",
          schema: AlertRaisedSchema,
          message: create(AlertRaisedSchema, { kind: "rolled-back" }),
        });
        throw new Error("business rule refused");
      }),
    ).rejects.toThrow("business rule refused");
    const rows = await db.em().execute(`select count(*)::int as n from kittest.outbox where key = 'rolled-back'`);
    expect(rows[0].n).toBe(0);
  });
});

describe("a batched consumer over Kafka", () => {
  it("applies each event once, several in one transaction, and nothing of a batch whose handler failed", async () => {
    const ids = await enqueueAlerts(12, "batch");
    // The first 5 go out twice (a relay that died before marking them).
    await expect(
      new OutboxRelay(db, new CrashAfterPublish(bus, 1), log, { batchSize: 5 }).publishBatch(),
    ).rejects.toThrow("relay killed");
    const relay = new OutboxRelay(db, bus, log, { batchSize: 5 });
    while ((await relay.publishBatch()) > 0);

    let failuresLeft = 1;
    const consumer = await startConsumer({
      bus,
      db,
      group: "kittest.batched",
      topics: ["alerts"],
      log,
      batched: true,
      handlers: [
        on(AlertRaisedSchema, async (em, e, meta) => {
          await em.execute(`insert into kittest.effects (event_id, dedupe_key) values (?, ?)`, [
            meta.eventId,
            e.dedupeKey,
          ]);
          // After its effect was written: the batch's transaction must take it back.
          if (e.dedupeKey === "batch-7" && failuresLeft > 0) {
            failuresLeft -= 1;
            throw new Error("handler failed once");
          }
        }),
      ],
    });
    try {
      const read = async () =>
        (await db
          .em()
          .execute(`select event_id, txid::text as txid from kittest.effects where dedupe_key like 'batch-%'`)) as {
          event_id: string;
          txid: string;
        }[];
      await eventually(async () => ((await read()).length >= 12 ? true : undefined), 30_000, "every event applied");
      await new Promise((r) => setTimeout(r, 500)); // anything applied twice would show by now
      const effects = await read();
      expect(failuresLeft).toBe(0);
      expect(effects.map((e) => e.event_id).sort()).toEqual([...ids].sort());
      // Three partitions' batches, and the failed one again: fewer transactions than events.
      expect(new Set(effects.map((e) => e.txid)).size).toBeLessThanOrEqual(4);
    } finally {
      await consumer.close();
    }
  });
});

describe("outbox rows of a transaction", () => {
  it("are written in one insert before commit, in the order they were enqueued", async () => {
    const ids = await enqueueAlerts(3, "order");
    const stored = await rows<{ id: string }>(db.em(), `select id from kittest.outbox where id in (?) order by seq`, [
      ids,
    ]);
    expect(stored.map((r) => r.id)).toEqual(ids);
  });

  it("keep that order when a statement writes some itself (outboxValuesNow): the deferred ones first, none twice", async () => {
    const alert = (tag: string) => ({
      topic: "alerts",
      key: "sim-0",
      schema: AlertRaisedSchema,
      message: create(AlertRaisedSchema, { kind: "test", dedupeKey: tag, message: tag }),
    });
    const tag = `now-${Date.now()}`;
    await db.tx(async (em) => {
      await enqueueEvent(em, "kittest", alert(`${tag}-1`));
      const values = outboxValuesNow(em, "kittest", [alert(`${tag}-2`), alert(`${tag}-3`)]);
      expect(values).toHaveLength(3);
      await em.execute(outboxInsertSql("kittest", values.length), values.flat());
      // Nothing left to take: the deferred row went with the statement.
      expect(outboxValuesNow(em, "kittest", [])).toHaveLength(0);
      await enqueueEvent(em, "kittest", alert(`${tag}-4`));
    });
    const stored = await rows<{ payload: string }>(
      db.em(),
      `select encode(payload, 'escape') as payload from kittest.outbox where encode(payload, 'escape') like ? order by seq`,
      [`%${tag}%`],
    );
    expect(stored.map((r) => r.payload.match(new RegExp(`${tag}-\\d`))![0])).toEqual(
      [1, 2, 3, 4].map((i) => `${tag}-${i}`),
    );
  });
});

describe("outbox retention", () => {
  it("deletes published rows past the retention, oldest first, and never a row still unpublished", async () => {
    // Rows of the other tests are young: only these five are backdated.
    const [oldA, oldB, stuck, young, oldC] = await enqueueAlerts(5, "retention");
    const backdate = `update kittest.outbox set created_at = now() - interval '2 hours' where id in (?)`;
    await db.em().execute(backdate, [[oldA, oldB, stuck, oldC]]);
    await db
      .em()
      .execute(`update kittest.outbox set published_at = now() where id in (?)`, [[oldA, oldB, young, oldC]]);
    const relay = new OutboxRelay(db, bus, log, { retentionMs: 3_600_000 });
    expect(await relay.purge()).toBe(3);
    const left = await rows<{ id: string }>(db.em(), `select id from kittest.outbox where id in (?) order by seq`, [
      [oldA, oldB, stuck, young, oldC],
    ]);
    expect(left.map((r) => r.id)).toEqual([stuck, young]);
    expect(await relay.purge()).toBe(0);
  });
});

describe("the relay's wake-up", () => {
  it("publishes a row committed without a kick, from its NOTIFY, with no timer to find it", async () => {
    const published = async (id: string) => {
      const until = Date.now() + 10_000;
      while (Date.now() < until) {
        const [r] = await rows<{ done: boolean }>(
          db.em(),
          `select published_at is not null as done from kittest.outbox where id = ?`,
          [id],
        );
        if (r?.done) return true;
        await new Promise((res) => setTimeout(res, 50));
      }
      return false;
    };
    const [before] = await enqueueAlerts(1, "wake-before");
    // Neither timer fires during the test: only LISTEN's first pass and the NOTIFYs run one.
    const relay = new OutboxRelay(db, bus, log, { intervalMs: 600_000, deafIntervalMs: 600_000 });
    relay.start();
    try {
      // Committed before the relay listened: its first pass, once listening, finds it.
      expect(await published(before!)).toBe(true);
      // Committed by another process (nothing kicks this relay): the commit's NOTIFY does.
      const [after] = await enqueueAlerts(1, "wake-after");
      expect(await published(after!)).toBe(true);
    } finally {
      await relay.stop();
    }
  });
});

describe.each([false, true])("a consumer's transaction rolled back by a deadlock (batched: %s)", (batched) => {
  it("is applied again at once, once, without the bus seeing a failure", async () => {
    // Two consumer groups apply at the same moment, each taking the same two locks in the
    // opposite order: PostgreSQL breaks the deadlock by rolling one transaction back.
    const memory = new MemoryBus();
    let failures = 0;
    const counting: EventBus = {
      publish: (m) => memory.publish(m),
      subscribe: (g, t, h) =>
        memory.subscribe(g, t, async (m) => {
          try {
            await h(m);
          } catch (err) {
            failures += 1;
            throw err;
          }
        }),
      subscribeBatches: (g, t, h) =>
        memory.subscribeBatches(g, t, async (m) => {
          try {
            await h(m);
          } catch (err) {
            failures += 1;
            throw err;
          }
        }),
      close: () => memory.close(),
    };
    const apply = (first: number, second: number) =>
      on(AlertRaisedSchema, async (em, event, meta) => {
        await em.execute(`select pg_advisory_xact_lock(?)`, [first]);
        await new Promise((r) => setTimeout(r, 300));
        await em.execute(`select pg_advisory_xact_lock(?)`, [second]);
        await em.execute(`insert into kittest.effects (event_id, dedupe_key) values (?, ?)`, [
          meta.eventId,
          event.dedupeKey,
        ]);
      });
    const subs = await Promise.all([
      startConsumer({
        bus: counting,
        db,
        group: `deadlock-ab-${batched}`,
        topics: ["locks"],
        handlers: [apply(71, 72)],
        log,
        batched,
      }),
      startConsumer({
        bus: counting,
        db,
        group: `deadlock-ba-${batched}`,
        topics: ["locks"],
        handlers: [apply(72, 71)],
        log,
        batched,
      }),
    ]);
    const eventId = batched ? "3f6f1f0e-2b1a-4c55-9d38-0c1de0a7b002" : "3f6f1f0e-2b1a-4c55-9d38-0c1de0a7b001";
    await counting.publish([
      {
        topic: "locks",
        key: "k",
        value: toBinary(
          AlertRaisedSchema,
          create(AlertRaisedSchema, { kind: "test", dedupeKey: `deadlock-${batched}` }),
        ),
        headers: {
          "event-type": AlertRaisedSchema.typeName,
          "event-id": eventId,
          "occurred-at": new Date().toISOString(),
        },
      },
    ]);
    const applied = await eventually(
      async () => {
        const a = await rows<{ n: number }>(
          db.em(),
          `select count(*)::int as n from kittest.effects where dedupe_key = ?`,
          [`deadlock-${batched}`],
        );
        return a[0].n >= 2 ? a : undefined;
      },
      10_000,
      "the event applied by both groups",
    );
    await Promise.all(subs.map((s) => s.close()));
    // Each group applied the event once (its own inbox row), and no failure reached the bus.
    expect(applied[0].n).toBe(2);
    expect(failures).toBe(0);
  });
});
