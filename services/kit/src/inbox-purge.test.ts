import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../test/infra/context.ts";
import { Migration, openDatabase, type ConcurrentIndex, type Database } from "./db.ts";
import { inboxPurgeIndex, outboxInboxSql, purgeInbox } from "./events.ts";

// The inbox keeps the ids of applied events so that a redelivery changes nothing; Kafka
// redelivers only what its topics hold, so rows older than the retention are deleted, found
// through a BRIN index on received_at.

class Migration0001Inbox extends Migration {
  override name = "Migration0001Inbox";
  up(): void {
    for (const sql of outboxInboxSql("purgetest")) this.addSql(sql);
  }
}

class Migration0002InboxPurge extends Migration {
  override name = "Migration0002InboxPurge";
  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [inboxPurgeIndex("purgetest")];
  up(): void {}
}

let tdb: TestDatabase;
let db: Database;
let admin: pg.Client;

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({
    url: tdb.url,
    schema: "purgetest",
    migrations: [Migration0001Inbox, Migration0002InboxPurge],
  });
  admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await db?.close();
  await tdb?.drop();
});

describe("inbox purge", () => {
  it("deletes the rows older than the retention, in batches, and keeps the younger", async () => {
    await admin.query(
      `insert into purgetest.inbox (event_id, consumer, received_at)
       select gen_random_uuid(), 'c', now() - interval '40 days' + g * interval '1 second' from generate_series(1, 2500) g`,
    );
    await admin.query(
      `insert into purgetest.inbox (event_id, consumer, received_at)
       select gen_random_uuid(), 'c', now() - interval '1 day' from generate_series(1, 300) g`,
    );
    const removed = await purgeInbox(db, 30 * 24 * 3_600_000, 1000);
    expect(removed).toBe(2500);
    const left = await admin.query(
      `select count(*)::int as n, min(received_at) > now() - interval '2 days' as young from purgetest.inbox`,
    );
    expect(left.rows[0]).toEqual({ n: 300, young: true });
  });

  it("finds the old rows through its BRIN index on received_at", async () => {
    const index = await admin.query(
      `select pg_get_indexdef(indexrelid) as definition, indisvalid as valid from pg_index
        where indexrelid = 'purgetest.inbox_received_brin'::regclass`,
    );
    expect(index.rows[0]).toEqual({
      definition: "CREATE INDEX inbox_received_brin ON purgetest.inbox USING brin (received_at)",
      valid: true,
    });
  });
});
