import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../test/infra/context.ts";
import { eventually } from "../../../test/support/eventually.ts";
import {
  applyConcurrentIndexes,
  buildConcurrentIndexes,
  concurrentIndexChanges,
  Migration,
  openDatabase,
  type ConcurrentIndex,
} from "./db.ts";

// Indexes a migration declares as concurrent are built outside the migrator's transaction,
// with `create index concurrently`: the table stays writable while they build, and one left
// invalid by a build that died is built again at the next start. Indexes a migration declares
// as dropped concurrently go the same way, with `drop index concurrently`.

class Migration0001Table extends Migration {
  override name = "Migration0001Table";
  up(): void {
    this.addSql(`create table indextest.events (id int primary key, kind text not null, at timestamptz not null)`);
    this.addSql(`insert into indextest.events select g, 'k' || (g % 3), now() from generate_series(1, 1000) g`);
  }
}

class Migration0002Concurrent extends Migration {
  override name = "Migration0002Concurrent";
  static readonly concurrentIndexes: readonly ConcurrentIndex[] = [
    { name: "events_k1_at", on: `indextest.events (at desc) where kind = 'k1'` },
  ];
  up(): void {}
}

class Migration0003Drops extends Migration {
  override name = "Migration0003Drops";
  static readonly concurrentDrops: readonly string[] = ["events_k1_at", "events_plain"];
  up(): void {}
}

let tdb: TestDatabase;
let admin: pg.Client;

const indexState = async (name: string) =>
  (
    await admin.query<{ valid: boolean; definition: string }>(
      `select i.indisvalid as valid, pg_get_indexdef(i.indexrelid) as definition
         from pg_index i join pg_class c on c.oid = i.indexrelid join pg_namespace n on n.oid = c.relnamespace
        where n.nspname = 'indextest' and c.relname = $1`,
      [name],
    )
  ).rows;

beforeAll(async () => {
  tdb = await freshDatabase();
  admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await tdb?.drop();
});

describe("indexes built concurrently", () => {
  it("builds a migration's concurrent index after its migrations, valid and as declared", async () => {
    const db = await openDatabase({
      url: tdb.url,
      schema: "indextest",
      migrations: [Migration0001Table, Migration0002Concurrent],
    });
    await db.close();
    const [state] = await indexState("events_k1_at");
    expect(state).toEqual({
      valid: true,
      definition: "CREATE INDEX events_k1_at ON indextest.events USING btree (at DESC) WHERE (kind = 'k1'::text)",
    });
    const applied = await admin.query(`select name from indextest.mikro_orm_migrations order by id`);
    expect(applied.rows.map((r) => r.name)).toEqual(["Migration0001Table", "Migration0002Concurrent"]);
  });

  it("drops an index a dead build left invalid and builds it again", async () => {
    // A unique index that cannot hold: its concurrent build fails and leaves it invalid.
    await admin
      .query(`create unique index concurrently events_kind_unique on indextest.events (kind)`)
      .catch(() => undefined);
    expect(await indexState("events_kind_unique")).toEqual([expect.objectContaining({ valid: false })]);
    await buildConcurrentIndexes(tdb.url, "indextest", [{ name: "events_kind_unique", on: "indextest.events (kind)" }]);
    expect(await indexState("events_kind_unique")).toEqual([
      { valid: true, definition: "CREATE INDEX events_kind_unique ON indextest.events USING btree (kind)" },
    ]);
  });

  it("leaves the build to the replica holding the index lock", async () => {
    const other = new pg.Client({ connectionString: tdb.url });
    await other.connect();
    try {
      await other.query(`select pg_advisory_lock(hashtext('transferops.indexes'), hashtext('indextest'))`);
      await buildConcurrentIndexes(tdb.url, "indextest", [{ name: "events_by_at", on: "indextest.events (at)" }]);
      expect(await indexState("events_by_at")).toEqual([]);
    } finally {
      await other.end();
    }
  });

  it("keeps the table writable while an index builds (its lock is SHARE UPDATE EXCLUSIVE)", async () => {
    // A transaction holding a row lock makes the concurrent build wait for it; meanwhile an
    // insert from another session goes through, which a plain CREATE INDEX (SHARE) would block.
    const holder = new pg.Client({ connectionString: tdb.url });
    const writer = new pg.Client({ connectionString: tdb.url });
    await holder.connect();
    await writer.connect();
    try {
      await holder.query(`begin`);
      await holder.query(`update indextest.events set at = now() where id = 1`);
      const building = buildConcurrentIndexes(tdb.url, "indextest", [
        { name: "events_by_kind_at", on: "indextest.events (kind, at)" },
      ]);
      const taken = await eventually(
        async () => {
          const { rows } = await admin.query(
            `select mode from pg_locks l join pg_stat_activity a on a.pid = l.pid
              where a.application_name = 'index indextest' and l.relation = 'indextest.events'::regclass and l.granted`,
          );
          return rows.length > 0 ? rows : undefined;
        },
        5_000,
        "the build's lock",
      );
      expect(taken.map((r) => r.mode)).toEqual(["ShareUpdateExclusiveLock"]);
      await writer.query(`set statement_timeout = '5s'`);
      const inserted = await writer.query(`insert into indextest.events values (5000, 'k2', now())`);
      expect(inserted.rowCount).toBe(1);
      await holder.query(`commit`);
      await building;
      expect(await indexState("events_by_kind_at")).toEqual([expect.objectContaining({ valid: true })]);
    } finally {
      await holder.end();
      await writer.end();
    }
  });

  it("drops a migration's concurrently dropped indexes after its migrations, and does not build them again", async () => {
    // events_k1_at was built concurrently by Migration0002Concurrent; events_plain stands for
    // an index an earlier migration created in its transaction.
    await admin.query(`create index events_plain on indextest.events (kind)`);
    expect(await indexState("events_k1_at")).toEqual([expect.objectContaining({ valid: true })]);
    const migrations = [Migration0001Table, Migration0002Concurrent, Migration0003Drops];
    for (let start = 0; start < 2; start++) {
      const db = await openDatabase({ url: tdb.url, schema: "indextest", migrations });
      await db.close();
      expect(await indexState("events_k1_at")).toEqual([]);
      expect(await indexState("events_plain")).toEqual([]);
    }
    const applied = await admin.query(`select name from indextest.mikro_orm_migrations order by id`);
    expect(applied.rows.map((r) => r.name)).toEqual([
      "Migration0001Table",
      "Migration0002Concurrent",
      "Migration0003Drops",
    ]);
  });

  it("builds an index before it drops the one it replaces, so the old one serves until the new is built", async () => {
    await admin.query(`create index events_old on indextest.events (kind)`);
    const done: string[] = [];
    const log = {
      info: (o: { index: string }, msg: string) => {
        done.push(`${msg}: ${o.index}`);
      },
    } as unknown as Parameters<typeof applyConcurrentIndexes>[3];
    await applyConcurrentIndexes(
      tdb.url,
      "indextest",
      { build: [{ name: "events_new", on: `indextest.events (kind, at)` }], drop: ["events_old"] },
      log,
    );
    expect(done).toEqual(["index built concurrently: events_new", "index dropped concurrently: events_old"]);
    expect(await indexState("events_old")).toEqual([]);
    expect(await indexState("events_new")).toEqual([expect.objectContaining({ valid: true })]);
    await admin.query(`drop index indextest.events_new`);
  });

  it("keeps the table readable and writable while an index is dropped (SHARE UPDATE EXCLUSIVE)", async () => {
    // The drop waits for a transaction that holds a lock on the table; meanwhile a read and an
    // insert from other sessions go through, which a plain DROP INDEX (ACCESS EXCLUSIVE) would block.
    await admin.query(`create index events_at_kind on indextest.events (at, kind)`);
    const holder = new pg.Client({ connectionString: tdb.url });
    const writer = new pg.Client({ connectionString: tdb.url });
    await holder.connect();
    await writer.connect();
    try {
      await holder.query(`begin`);
      await holder.query(`update indextest.events set at = now() where id = 2`);
      const dropping = applyConcurrentIndexes(tdb.url, "indextest", { build: [], drop: ["events_at_kind"] });
      const taken = await eventually(
        async () => {
          const { rows } = await admin.query(
            `select mode from pg_locks l join pg_stat_activity a on a.pid = l.pid
              where a.application_name = 'index indextest' and l.relation = 'indextest.events'::regclass and l.granted`,
          );
          return rows.length > 0 ? rows : undefined;
        },
        5_000,
        "the drop's lock",
      );
      expect(taken.map((r) => r.mode)).toEqual(["ShareUpdateExclusiveLock"]);
      await writer.query(`set statement_timeout = '5s'`);
      expect((await writer.query(`insert into indextest.events values (5001, 'k1', now())`)).rowCount).toBe(1);
      expect((await writer.query(`select count(*)::int as n from indextest.events where kind = 'k1'`)).rows[0].n).toBe(
        335,
      );
      // Still there while the drop waits (marked invalid first: no new plan uses it).
      expect(await indexState("events_at_kind")).toHaveLength(1);
      await holder.query(`commit`);
      await dropping;
      expect(await indexState("events_at_kind")).toEqual([]);
    } finally {
      await holder.end();
      await writer.end();
    }
  });
});

describe("concurrentIndexChanges", () => {
  const index = (name: string): ConcurrentIndex => ({ name, on: `t (${name})` });
  const m = (concurrentIndexes: ConcurrentIndex[], concurrentDrops: string[]) => ({
    concurrentIndexes,
    concurrentDrops,
  });
  it.each([
    ["a build alone", [m([index("a")], [])], { build: [index("a")], drop: [] }],
    ["a drop alone", [m([], ["a"])], { build: [], drop: ["a"] }],
    ["a build a later migration drops", [m([index("a")], []), m([], ["a"])], { build: [], drop: ["a"] }],
    ["a drop a later migration builds again", [m([], ["a"]), m([index("a")], [])], { build: [index("a")], drop: [] }],
    [
      "other names untouched, in order",
      [m([index("a"), index("b")], []), m([index("c")], ["a"])],
      { build: [index("b"), index("c")], drop: ["a"] },
    ],
    ["none", [{}, m([], [])], { build: [], drop: [] }],
  ])("%s: the latest declaration of each name wins", (_, migrations, expected) => {
    expect(concurrentIndexChanges(migrations)).toEqual(expected);
  });
});
