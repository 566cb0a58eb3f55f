import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../infra/context.ts";
import {
  checkDiskRoom,
  dropBulkIndexes,
  estimateHistoryBytes,
  IndexRebuild,
  indexCatalogue,
  sameIndexes,
  withFillfactor,
} from "./history-load.ts";

const GB = 1024 ** 3;

describe("the history build's fillfactor", () => {
  it.each([
    ["CREATE INDEX a ON s.t USING btree (x)", "CREATE INDEX a ON s.t USING btree (x) WITH (fillfactor = 50)"],
    [
      "CREATE INDEX a ON s.t USING btree (x) INCLUDE (y) WHERE (status = 'queued'::text)",
      "CREATE INDEX a ON s.t USING btree (x) INCLUDE (y) WITH (fillfactor = 50) WHERE (status = 'queued'::text)",
    ],
  ])("goes before the predicate: %s", (def, built) => expect(withFillfactor(def, 50)).toBe(built));
});

describe("the history build's disk check", () => {
  it("refuses a history that would leave less than 10 GB free, saying how much it needs", () => {
    // 10,000,000 operations: 52 GB (48.4 GiB) estimated, and 9.7 GiB of messages staged meanwhile (two copies).
    expect(() => checkDiskRoom(10_000_000, 10_000_000, 62 * GB)).toThrow(
      /needs about 48\.4 GB .* and 9\.7 GB more while .* has 62\.0 GB free, which would leave 3\.9 GB, under the 10\.0 GB floor/,
    );
  });

  it("accepts one that leaves more, and counts messages beyond one an operation", () => {
    expect(checkDiskRoom(10_000_000, 10_000_000, 76 * GB)).toMatch(/17\.9 GB left at the most/);
    expect(estimateHistoryBytes(1_000_000, 3_000_000)).toBe(1_000_000 * 5200 + 2_000_000 * 1700);
  });

  it("says it did not check a server elsewhere", () => {
    expect(checkDiskRoom(1_000, 1_000, undefined)).toMatch(/not checked/);
  });
});

describe("the history build's indexes, dropped and built again", () => {
  let tdb: TestDatabase;
  let db: pg.Client;
  let other: pg.Client;

  beforeAll(async () => {
    tdb = await freshDatabase();
    db = new pg.Client({ connectionString: tdb.url });
    other = new pg.Client({ connectionString: tdb.url });
    await Promise.all([db.connect(), other.connect()]);
    await db.query(`
      create schema dispatch; create schema messaging;
      create table dispatch.operations (operation_id uuid primary key, request_id text not null, status text not null,
        sim_id text, created_at timestamptz not null, tags int[]);
      create unique index operations_request_id on dispatch.operations (request_id);
      create index operations_sim_created on dispatch.operations (sim_id, created_at desc);
      create index operations_awaiting_evidence on dispatch.operations (created_at) where status = 'awaiting_evidence';
      create index operations_tags on dispatch.operations using gin (tags);
      comment on index dispatch.operations_sim_created is 'a SIM''s page';
      create table messaging.contacts (customer_id uuid primary key, phone text, constraint contacts_phone unique (phone));
      create table messaging.notes (id int primary key, customer_id uuid references messaging.contacts (customer_id));`);
  });

  afterAll(async () => {
    await Promise.all([db?.end(), other?.end()]);
    await tdb?.drop();
  });

  it("drops all but the kept and the referenced, loads, and leaves every index as it was", async () => {
    const before = await indexCatalogue(db);
    const dropped = await dropBulkIndexes(db);
    expect(dropped.map((d) => `${d.schema}.${d.name}`).sort()).toEqual([
      "dispatch.operations_pkey",
      "dispatch.operations_request_id",
      "dispatch.operations_sim_created",
      "dispatch.operations_tags",
      "messaging.contacts_phone",
    ]);
    await db.query(`insert into dispatch.operations
      select gen_random_uuid(), 'r' || g, 'confirmed', 's' || g % 7, now() - g * interval '1 minute', array[g % 5]
      from generate_series(1, 5000) g`);
    const rebuild = new IndexRebuild(dropped);
    const lanes = [rebuild.lane(db), rebuild.lane(other)];
    rebuild.loaded("dispatch.operations");
    rebuild.close();
    await Promise.all(lanes);
    const after = await indexCatalogue(db);
    expect(() => sameIndexes(before, after)).not.toThrow();
    expect(after.get("dispatch.operations_sim_created")).toContain("a SIM's page");
    // Built at the fillfactor of a grown index, then reset: the schema's definition.
    const options = await db.query(`select reloptions from pg_class where relname = 'operations_pkey'`);
    expect(options.rows).toEqual([{ reloptions: null }]);
  });

  it("names what differs", () => {
    const before = new Map([
      ["s.a", "CREATE INDEX a ON s.t USING btree (x)"],
      ["s.b", "CREATE INDEX b ON s.t USING btree (y)"],
    ]);
    const after = new Map([
      ["s.a", "CREATE INDEX a ON s.t USING btree (x) | NOT VALID"],
      ["s.c", "CREATE INDEX c ON s.t USING btree (z)"],
    ]);
    expect(() => sameIndexes(before, after)).toThrow(
      /changed: s\.a: .*\n {2}missing: s\.b .*\n {2}new: s\.c .*\n {2}not valid: s\.a/,
    );
  });
});
