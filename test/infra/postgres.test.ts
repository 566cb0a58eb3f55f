// Smoke test: global setup gives a real PostgreSQL, and freshDatabase() gives an
// isolated database that drop() really removes.

import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freshDatabase, infra, type TestDatabase } from "./context.ts";

async function query<T extends pg.QueryResultRow>(url: string, sql: string, params: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(sql, params)).rows;
  } finally {
    await client.end();
  }
}

async function databaseExists(name: string): Promise<boolean> {
  const rows = await query(infra().databaseAdminUrl, "SELECT 1 FROM pg_database WHERE datname = $1", [name]);
  return rows.length === 1;
}

describe("PostgreSQL test infrastructure", () => {
  let db: TestDatabase;

  beforeAll(async () => {
    db = await freshDatabase();
  });

  afterAll(async () => {
    await db?.drop();
  });

  it("gives a fresh, empty database that can hold tables", async () => {
    expect(db.name).toMatch(/^tops_test_[0-9a-f]+$/);
    expect(await databaseExists(db.name)).toBe(true);
    const before = await query(db.url, "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'");
    expect(before).toEqual([{ n: 0 }]);

    await query(db.url, "CREATE TABLE transfer (id serial PRIMARY KEY, amount numeric NOT NULL)");
    await query(db.url, "INSERT INTO transfer (amount) VALUES (100.50), (7)");
    const rows = await query<{ amount: string }>(db.url, "SELECT amount FROM transfer ORDER BY id");
    expect(rows.map((r) => r.amount)).toEqual(["100.50", "7"]);
  });

  it("drop() removes the database even while a client is still connected", async () => {
    const other = await freshDatabase();
    const client = new pg.Client({ connectionString: other.url });
    client.on("error", () => {}); // it gets terminated by drop()
    await client.connect();
    expect(await databaseExists(other.name)).toBe(true);

    await other.drop();

    expect(await databaseExists(other.name)).toBe(false);
    await client.end().catch(() => {});
    await other.drop(); // idempotent
  });
});
