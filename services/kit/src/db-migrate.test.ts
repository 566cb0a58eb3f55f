import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, type TestDatabase } from "../../../test/infra/context.ts";
import { Migration, migrateAlone, migrateDown, openDatabase } from "./db.ts";

// A migration reverted by its down() (migrateDown, what the store tests and the history
// benchmark use), and what a tool migrating beside the services sees of the migrator: its
// connections by name, each migration's start and end inside the transaction.

class Migration0001Table extends Migration {
  override name = "Migration0001Table";
  up(): void {
    this.addSql(`create table migratetest.events (id int primary key)`);
  }
}

class Migration0002Column extends Migration {
  override name = "Migration0002Column";
  up(): void {
    this.addSql(`alter table migratetest.events add column kind text`);
  }
  override down(): void {
    this.addSql(`alter table migratetest.events drop column kind`);
  }
}

class Migration0003Irreversible extends Migration {
  override name = "Migration0003Irreversible";
  up(): void {
    this.addSql(`create table migratetest.other (id int primary key)`);
  }
}

const SCHEMA = "migratetest";
let tdb: TestDatabase;
let admin: pg.Client;

const columns = async () =>
  (
    await admin.query(
      `select table_name || '.' || column_name as c from information_schema.columns
        where table_schema = $1 and table_name <> 'mikro_orm_migrations' order by 1`,
      [SCHEMA],
    )
  ).rows.map((r) => r.c);
const applied = async () =>
  (await admin.query(`select name from migratetest.mikro_orm_migrations order by id`)).rows.map((r) => r.name);

beforeAll(async () => {
  tdb = await freshDatabase();
  admin = new pg.Client({ connectionString: tdb.url });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await tdb?.drop();
});

describe("migrations seen and reverted", () => {
  it("tells each migration's start and end inside its transaction, then its commit, on connections of the given name", async () => {
    const told: string[] = [];
    const db = await openDatabase({
      url: tdb.url,
      schema: SCHEMA,
      migrations: [Migration0001Table, Migration0002Column],
      applicationName: "migrate beside",
      onMigration: async (name, phase) => {
        // The migrator's transaction is open: its table's lock is held by the named connection.
        const held = await admin.query(
          `select count(*)::int as n from pg_locks l join pg_stat_activity a on a.pid = l.pid
            where a.application_name = 'migrate beside' and l.locktype = 'transactionid'`,
        );
        told.push(`${phase} ${name} ${held.rows[0].n}`);
      },
    });
    const [name] = await db.em().execute(`select current_setting('application_name') as n`);
    await db.close();
    expect(told).toEqual([
      "start Migration0001Table 0",
      "end Migration0001Table 1",
      "start Migration0002Column 1",
      "end Migration0002Column 1",
      "committed Migration0001Table 0",
      "committed Migration0002Column 0",
    ]);
    expect(name).toEqual({ n: "migrate beside" });
  });

  it("reverts the migrations after the one named by their down(), and forgets them", async () => {
    const migrations = [Migration0001Table, Migration0002Column];
    expect(await columns()).toEqual(["events.id", "events.kind"]);
    const reverted = await migrateDown({ url: tdb.url, schema: SCHEMA, migrations }, "Migration0001Table");
    expect(reverted).toEqual(["Migration0002Column"]);
    expect(await columns()).toEqual(["events.id"]);
    expect(await applied()).toEqual(["Migration0001Table"]);
  });

  it("reverts nothing when one of them has no down()", async () => {
    const migrations = [Migration0001Table, Migration0002Column, Migration0003Irreversible];
    await (await openDatabase({ url: tdb.url, schema: SCHEMA, migrations })).close();
    await expect(migrateDown({ url: tdb.url, schema: SCHEMA, migrations }, "Migration0001Table")).rejects.toThrow(
      "This migration cannot be reverted",
    );
    expect(await applied()).toEqual(["Migration0001Table", "Migration0002Column", "Migration0003Irreversible"]);
    expect(await columns()).toEqual(["events.id", "events.kind", "other.id"]);
  });
});

describe("the migration lock's connection", () => {
  it("cut while the migration runs, fails the start instead of ending the process", async () => {
    const migrating = migrateAlone(tdb.url, "cutlock", async () => {
      await admin.query(
        `select pg_terminate_backend(pid) from pg_stat_activity where application_name = 'migrate cutlock'`,
      );
      // The cut reaches the idle lock connection as an 'error' event.
      await new Promise((r) => setTimeout(r, 300));
    });
    await expect(migrating).rejects.toThrow("the migration lock of cutlock was lost with its connection");
  });
});
