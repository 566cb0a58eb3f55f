import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../test/infra/context.ts";
import { Migration, one, openDatabase, rows, type Database } from "./db.ts";
import { PLANNED_AT_EACH_CALL } from "./db-driver.ts";

class Migration0001Values extends Migration {
  override name = "Migration0001Values";
  up(): void {
    this.addSql(
      `create table drivertest.items (id int primary key, label text, at timestamptz, doc jsonb, blob bytea, big bigint, flag boolean)`,
    );
  }
}

let tdb: TestDatabase;
const opened: Database[] = [];
const open = async (preparedStatements: boolean) => {
  const db = await openDatabase({
    url: tdb.url,
    schema: "drivertest",
    migrations: [Migration0001Values],
    poolMax: 1,
    preparedStatements,
  });
  opened.push(db);
  return db;
};

beforeAll(async () => {
  tdb = await freshDatabase();
});
afterAll(async () => {
  for (const db of opened) await db.close();
  await tdb?.drop();
});

describe.each([true, false])("parameters sent apart from the SQL (named statements: %s)", (named) => {
  let db: Database;
  beforeAll(async () => {
    db = await open(named);
    await db.em().execute(`delete from drivertest.items`);
  });

  it("stores and compares every kind of value as MikroORM's interpolation did", async () => {
    const at = new Date("2026-11-23T01:02:03.456Z");
    const doc = { amount: 1000, note: "it's \\ ? $1" };
    await db
      .em()
      .execute(
        `insert into drivertest.items (id, label, at, doc, blob, big, flag) values (?, ?, ?, ?::jsonb, ?, ?, ?)`,
        [1, "O'Brien ? $2 --", at, doc, Buffer.from([0, 1, 255]), 9007199254740993n, true],
      );
    await db.em().execute(`insert into drivertest.items (id, label) values (?, ?)`, [2, undefined]);
    const r = await one<Record<string, unknown>>(
      db.em(),
      `select label, at, doc, blob, big::text as big, flag from drivertest.items where id = ? and at = ? and flag = ?`,
      [1, at, true],
    );
    expect(r).toEqual({
      label: "O'Brien ? $2 --",
      at: expect.anything(),
      doc,
      blob: Buffer.from([0, 1, 255]),
      big: "9007199254740993",
      flag: true,
    });
    expect(new Date(r!.at as string).getTime()).toBe(at.getTime());
    expect(await one(db.em(), `select label from drivertest.items where id = ?`, [2])).toEqual({ label: null });
  });

  it("expands an array parameter into a list, whatever its length", async () => {
    const labels = async (ids: number[]) =>
      (await rows<{ id: number }>(db.em(), `select id from drivertest.items where id in (?) order by id`, [ids])).map(
        (r) => r.id,
      );
    expect(await labels([1, 2])).toEqual([1, 2]);
    expect(await labels([2])).toEqual([2]);
    expect(await labels([3, 4, 2, 1])).toEqual([1, 2]);
  });

  it("answers a 'run' execute with the rows it affected", async () => {
    const r = (await db
      .em()
      .execute(`update drivertest.items set flag = ? where id in (?)`, [false, [1, 2]], "run")) as {
      affectedRows: number;
    };
    expect(r.affectedRows).toBe(2);
  });

  it("keeps an identifier placeholder (??) working through MikroORM's interpolation", async () => {
    expect(await one(db.em(), `select ?? from drivertest.items where id = ?`, ["label", 2])).toEqual({ label: null });
  });

  it("runs inside a transaction on the transaction's connection", async () => {
    await expect(
      db.tx(async (em) => {
        await em.execute(`insert into drivertest.items (id, label) values (?, ?)`, [3, "rolled back"]);
        expect(await one(em, `select label from drivertest.items where id = ?`, [3])).toEqual({ label: "rolled back" });
        throw new Error("abort");
      }),
    ).rejects.toThrow("abort");
    expect(await one(db.em(), `select label from drivertest.items where id = ?`, [3])).toBeUndefined();
  });

  it("commits a transaction's statements, those without parameters and '??' included", async () => {
    const label = await db.tx(async (em) => {
      await em.execute(`insert into drivertest.items (id, label) values (?, ?)`, [4, "committed"]);
      await em.execute(`update drivertest.items set flag = true where id = 4`);
      return (await one<{ label: string }>(em, `select ?? from drivertest.items where id = ? and flag`, ["label", 4]))
        ?.label;
    });
    expect(label).toBe("committed");
    expect(await one(db.em(), `select label, flag from drivertest.items where id = ?`, [4])).toEqual({
      label: "committed",
      flag: true,
    });
    await db.em().execute(`delete from drivertest.items where id = ?`, [4]);
  });

  it("rolls back on a failed statement and gives the connection back clean (the pool holds one)", async () => {
    await expect(
      db.tx(async (em) => {
        await em.execute(`insert into drivertest.items (id, label) values (?, ?)`, [5, "first"]);
        await em.execute(`insert into drivertest.items (id, label) values (?, ?)`, [5, "duplicate"]);
      }),
    ).rejects.toThrow(/duplicate key/);
    // The one pooled connection is idle again, outside any transaction.
    expect(await one(db.em(), `select label from drivertest.items where id = ?`, [5])).toBeUndefined();
    expect(await one(db.em(), `select now() = statement_timestamp() as outside`)).toEqual({ outside: true });
  });

  it("makes a nested transactional a savepoint: its rollback keeps the outer transaction's work", async () => {
    await db.tx(async (em) => {
      await em.execute(`insert into drivertest.items (id, label) values (?, ?)`, [6, "outer"]);
      await expect(
        em.transactional(async (inner) => {
          await inner.execute(`insert into drivertest.items (id, label) values (?, ?)`, [7, "inner"]);
          throw new Error("inner fails");
        }),
      ).rejects.toThrow("inner fails");
      await em.transactional(async (inner) => {
        await inner.execute(`insert into drivertest.items (id, label) values (?, ?)`, [8, "inner kept"]);
      });
    });
    const kept = await rows<{ id: number }>(db.em(), `select id from drivertest.items where id in (?) order by id`, [
      [6, 7, 8],
    ]);
    expect(kept.map((r) => r.id)).toEqual([6, 8]);
    await db.em().execute(`delete from drivertest.items where id in (?)`, [[6, 8]]);
  });

  it("serialises concurrent transactions on a pool of one without losing either", async () => {
    await Promise.all(
      [9, 10].map((id) =>
        db.tx(async (em) => {
          await em.execute(`insert into drivertest.items (id, label) values (?, ?)`, [id, "concurrent"]);
          await new Promise((r) => setTimeout(r, 20));
        }),
      ),
    );
    expect(
      await one(db.em(), `select count(*)::int as n from drivertest.items where label = ?`, ["concurrent"]),
    ).toEqual({
      n: 2,
    });
    await db.em().execute(`delete from drivertest.items where label = ?`, ["concurrent"]);
  });

  it(named ? "prepares a statement once per connection and reuses it" : "prepares no named statement", async () => {
    const sql = `select count(*)::int as n from drivertest.items where id > ? and label is distinct from ?`;
    for (let i = 0; i < 3; i++) await one(db.em(), sql, [i, "x"]);
    // The pool holds one connection: the statements it prepared are visible on it.
    const prepared = await rows<{ name: string; statement: string }>(
      db.em(),
      `select name, statement from pg_prepared_statements where statement like ? and statement not like ?`,
      ["%label is distinct from%", "%pg_prepared_statements%"],
    );
    if (named) {
      expect(prepared).toEqual([
        { name: expect.stringMatching(/^s\d+_\d+$/), statement: sql.replace("?", "$1").replace("?", "$2") },
      ]);
    } else {
      expect(prepared).toEqual([]);
    }
  });

  it("never names a statement planned at each call, so PostgreSQL plans it for its parameters every time", async () => {
    const sql = `${PLANNED_AT_EACH_CALL}select count(*)::int as n from drivertest.items where id > ? and label is not distinct from ?`;
    for (let i = 0; i < 7; i++) await one(db.em(), sql, [i, "x"]);
    const prepared = await rows<{ name: string }>(
      db.em(),
      `select name from pg_prepared_statements where statement like ? and statement not like ?`,
      ["%label is not distinct from%", "%pg_prepared_statements%"],
    );
    expect(prepared).toEqual([]);
  });

  if (named) {
    it("fails once, then prepares anew, when a migration changes the columns a prepared statement returns", async () => {
      const read = () => one<Record<string, unknown>>(db.em(), `select * from drivertest.items where id = ?`, [2]);
      expect(Object.keys((await read())!)).not.toContain("added");
      // Another connection changes the table, as a migration does during a rolling deploy.
      const other = await open(false);
      await other.em().execute(`alter table drivertest.items add column added int`);
      await expect(read()).rejects.toThrow(/cached plan must not change result type/);
      expect(Object.keys((await read())!)).toContain("added");
      expect(Object.keys((await read())!)).toContain("added");
      await other.em().execute(`alter table drivertest.items drop column added`);
    });
  }
});

describe("PostgreSQL's JIT", () => {
  const jitOf = async (db: Database) => ({
    alone: (await one<{ jit: string }>(db.em(), `show jit`))?.jit,
    inTx: await db.tx(async (em) => (await one<{ jit: string }>(em, `show jit`))?.jit),
  });

  it("is off on every pooled connection, inside a transaction and outside", async () => {
    expect(await jitOf(await open(true))).toEqual({ alone: "off", inTx: "off" });
  });

  it("is turned off before a new connection's first query, never queued beside it on one client", async () => {
    // pg 8 warns (and pg 9 refuses) a query sent while the client still runs another.
    const warnings: string[] = [];
    const listen = (w: Error) => warnings.push(w.message);
    process.on("warning", listen);
    try {
      const db = await openDatabase({
        url: tdb.url,
        schema: "drivertest",
        migrations: [Migration0001Values],
        poolMax: 8,
      });
      opened.push(db);
      // New connections, each asked a statement as soon as it is handed out: the pool's own
      // query (a statement with parameters outside a transaction) and a transaction's begin.
      const slow = `select pg_sleep(0.05), ?::int as v`;
      await Promise.all([
        ...[1, 2, 3].map((v) => one(db.em(), slow, [v])),
        ...[1, 2, 3].map((v) => db.tx(async (em) => one(em, slow, [v]))),
      ]);
      await new Promise((r) => setImmediate(r));
    } finally {
      process.off("warning", listen);
    }
    expect(warnings.filter((m) => /already executing a query/.test(m))).toEqual([]);
  });

  it("is PostgreSQL's default when a service asks for it", async () => {
    const db = await openDatabase({
      url: tdb.url,
      schema: "drivertest",
      migrations: [Migration0001Values],
      poolMax: 1,
      jit: true,
    });
    opened.push(db);
    const server = await one<{ jit: string }>(db.em(), `select reset_val as jit from pg_settings where name = 'jit'`);
    expect(await jitOf(db)).toEqual({ alone: server?.jit, inTx: server?.jit });
  });
});
