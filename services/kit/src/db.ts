import { MikroORM, type Constructor } from "@mikro-orm/core";
import { Migrator, Migration } from "@mikro-orm/migrations";
import { PostgreSqlDriver, type EntityManager } from "@mikro-orm/postgresql";
import pg from "pg";
import { preparedDriver, type PgTransactions } from "./db-driver.ts";
import type { Logger } from "./log.ts";

export { Migration };
export type { EntityManager };

/**
 * An index built with `create index concurrently`, which cannot run inside the migrator's
 * transaction: a migration lists it in a static `concurrentIndexes`, and `openDatabase`
 * builds it after the transactional migrations, outside any transaction. Its lock is SHARE
 * UPDATE EXCLUSIVE: reads and writes of the table go on while it builds (a plain
 * `create index` holds SHARE, which stops every insert and update for the whole build).
 */
export interface ConcurrentIndex {
  /** The index's name, unique in the schema. */
  name: string;
  /** What follows `on` in CREATE INDEX: the schema-qualified table, columns, `where`. */
  on: string;
}

/**
 * What a service's migrations leave to do outside the migrator's transaction: the indexes to
 * build concurrently (`concurrentIndexes`) and the ones to drop concurrently (`concurrentDrops`,
 * names in the service's schema: `drop index concurrently`, SHARE UPDATE EXCLUSIVE on the table
 * where a plain `drop index` takes ACCESS EXCLUSIVE and stops every read and write until the
 * transaction ends). A later migration's declaration of a name wins over an earlier one's:
 * an index built by one migration and dropped by a later one is not built again at each start.
 */
export interface ConcurrentIndexChanges {
  build: readonly ConcurrentIndex[];
  drop: readonly string[];
}

/**
 * The statements a migration runs before its first trigram index (`gin_trgm_ops`): the
 * `pg_trgm` extension, installed once per database by whichever service's migration comes
 * first, in a schema of its own, `extensions` (the migrator's search path names only the
 * service's schema, where another service could not see it). Two services migrating at once
 * would both find it missing and the second would fail on its duplicate: the transaction-level
 * advisory lock makes the second wait, then find it installed. A database migrated before this
 * has it in `messaging`; `if not exists` leaves it there. An index in a migration names the
 * operator class `extensions.gin_trgm_ops`; one built concurrently (ConcurrentIndex) names it
 * bare, found wherever the extension lives (`buildConcurrentIndexes`).
 */
export const TRIGRAM_EXTENSION_SQL: readonly string[] = [
  `select pg_advisory_xact_lock(hashtext('transferops.extensions'))`,
  `create schema if not exists extensions`,
  `create extension if not exists pg_trgm schema extensions`,
];

/**
 * Autovacuum of a table that grows by a history (dispatch.operations, evidence.messages), for
 * `alter table ... set (...)` in a migration (SHARE UPDATE EXCLUSIVE: no read or write waits on
 * it): vacuum and new statistics after 1 % and 0.5 % of the table changed, where the defaults
 * (20 % and 10 %) let a 36-million-row table gather 7 million dead rows before a vacuum and 3.6
 * million changes before the planner hears of today's rows (docs/decisions/history.md,
 * "Autovacuum").
 */
export const HISTORY_TABLE_AUTOVACUUM =
  "autovacuum_vacuum_scale_factor = 0.01, autovacuum_analyze_scale_factor = 0.005, " +
  "autovacuum_vacuum_insert_scale_factor = 0.01";

/**
 * The parameters HISTORY_TABLE_AUTOVACUUM sets, for `alter table ... reset (...)` in a migration's
 * `down()`: the table back on the server's defaults, as before the migration (SHARE UPDATE EXCLUSIVE).
 */
export const HISTORY_TABLE_AUTOVACUUM_RESET = HISTORY_TABLE_AUTOVACUUM.split(", ")
  .map((setting) => setting.split(" = ")[0])
  .join(", ");

/**
 * The pending list of a GIN index a search reads, for `with (...)` where the index is built and
 * `alter index ... set (...)` in a migration (SHARE UPDATE EXCLUSIVE: no read or write waits on
 * it). GIN puts each written row version's entries in a pending list (`fastupdate`) and merges
 * the list into the index once it passes `gin_pending_list_limit`; every search reads the whole
 * list, whatever it looks for. At the server's default, 4 MB (512 pages), a search matching
 * nothing read up to 1.2 ms of it on every call; at 1 MB (128 pages) it reads at most about
 * 0.3 ms, and a row version written costs about 0.04 ms more (the merge in smaller batches:
 * docs/decisions/history.md, "A search's pending list").
 */
export const SEARCH_GIN_PENDING_LIST = "gin_pending_list_limit = 1024";

/** A migration class that may declare indexes built or dropped concurrently (see ConcurrentIndexChanges). */
type WithConcurrentIndexes = { concurrentIndexes?: readonly ConcurrentIndex[]; concurrentDrops?: readonly string[] };

/** The indexes the migrations, in their order, leave to build and to drop concurrently. */
export function concurrentIndexChanges(migrations: readonly unknown[]): ConcurrentIndexChanges {
  // Each name's latest declaration, in the order of the latest declarations.
  const last = new Map<string, ConcurrentIndex | "drop">();
  const declare = (name: string, change: ConcurrentIndex | "drop") => {
    last.delete(name);
    last.set(name, change);
  };
  for (const m of migrations as readonly WithConcurrentIndexes[]) {
    for (const index of m.concurrentIndexes ?? []) declare(index.name, index);
    for (const name of m.concurrentDrops ?? []) declare(name, "drop");
  }
  const changes = [...last.entries()];
  return {
    build: changes.flatMap(([, c]) => (c === "drop" ? [] : [c])),
    drop: changes.flatMap(([name, c]) => (c === "drop" ? [name] : [])),
  };
}

/**
 * A service's database: one PostgreSQL schema it alone reads and writes, migrated by the
 * checked-in migration classes of its `store/migrations`. Queries are explicit SQL through
 * MikroORM's EntityManager (`em.execute`), inside `em.transactional` where they must be
 * atomic: row locks, conditional updates and unique indexes carry the invariants. Parameters
 * travel apart from the SQL and each statement is prepared once per connection
 * (`preparedDriver`).
 */
export interface Database {
  orm: MikroORM<PostgreSqlDriver>;
  schema: string;
  /** Where it is, for a connection of its own (LISTEN). */
  url: string;
  em(): EntityManager;
  /** Runs `fn` in one transaction; the EntityManager it receives is bound to it. */
  tx<T>(fn: (em: EntityManager) => Promise<T>): Promise<T>;
  /**
   * Whether a statement gets a connection of the pool within `timeoutMs` (default: env
   * DB_READY_TIMEOUT_MS, else 1000): what readiness asks (docs/operations.md, "The connection
   * budget"). False while every connection is busy past it or the database refuses new ones.
   */
  ready(timeoutMs?: number): Promise<boolean>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  schema: string;
  migrations: Constructor<Migration>[];
  /** Connections in the pool (default: env DB_POOL_MAX, else 10). */
  poolMax?: number;
  /**
   * How long the start waits for a database that refuses connections for now (too many
   * clients, starting up, unreachable), retrying, before it gives up (default 60 s).
   */
  startWaitMs?: number;
  /** Where a failed attempt at start that will be retried is logged. */
  log?: Logger;
  /** Named prepared statements (default: env DATABASE_PREPARED_STATEMENTS, else true). */
  preparedStatements?: boolean;
  /**
   * PostgreSQL's JIT compilation for this pool's connections (default: env DATABASE_JIT=on,
   * else off). Off by default: PostgreSQL compiles any plan whose estimated cost passes
   * `jit_above_cost` (100,000), which a selection over a SIM with a long backlog does; the
   * compilation (10-15 ms) and the compiled expressions cost more than the few milliseconds
   * such a statement runs, on the request's path (docs/decisions.md, "Database sessions").
   */
  jit?: boolean;
  /**
   * The name the pool's connections show in pg_stat_activity (and so beside their locks in
   * pg_locks); none by default. A tool migrating beside the running services names its own
   * (the history benchmark samples the migrator's locks by it).
   */
  applicationName?: string;
  /**
   * Told as each pending migration starts and ends, inside the migrator's one transaction
   * (`allOrNothing`: every lock a migration takes is held until the last pending one commits),
   * and awaited there: what it does while the migration's locks are held, it does before the
   * commit (the history benchmark reads pg_locks). Then told of each once more when that
   * transaction has committed, before the concurrent indexes.
   */
  onMigration?: (name: string, phase: "start" | "end" | "committed") => void | Promise<void>;
}

/**
 * Opens and migrates the database. A database that is there but refuses connections for now
 * (every connection slot taken while replicas start together, a failover, a restart) is
 * waited for with backoff instead of stopping the process: a replica exiting at start is a
 * crash loop for the orchestrator and a failed rollout for the operator.
 */
export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const deadline = Date.now() + (options.startWaitMs ?? 60_000);
  for (let attempt = 1; ; attempt++) {
    try {
      return await openDatabaseOnce(options);
    } catch (err) {
      if (!isDatabaseUnavailable(err) || Date.now() >= deadline) throw err;
      options.log?.warn({ err, attempt }, "database unavailable at start; retrying");
      await new Promise((r) => setTimeout(r, Math.min(5_000, 250 * 2 ** attempt)));
    }
  }
}

async function openDatabaseOnce(options: DatabaseOptions): Promise<Database> {
  const orm = await MikroORM.init<PostgreSqlDriver>(ormOptions(options));
  if (options.onMigration) {
    const told = options.onMigration;
    orm.migrator.on("migrating", (e) => told(e.name, "start"));
    orm.migrator.on("migrated", (e) => told(e.name, "end"));
  }
  try {
    await migrateAlone(options.url, options.schema, async () => {
      await orm.em.getConnection().execute(`create schema if not exists "${options.schema}"`);
      const applied = await orm.migrator.up();
      for (const m of applied) await options.onMigration?.(m.name, "committed");
    });
    await applyConcurrentIndexes(options.url, options.schema, concurrentIndexChanges(options.migrations), options.log);
  } catch (err) {
    await orm.close(true);
    throw err;
  }
  const connection = orm.em.getConnection() as unknown as PgTransactions;
  return {
    orm,
    schema: options.schema,
    url: options.url,
    em: () => orm.em.fork() as EntityManager,
    tx: (fn) =>
      connection.transaction(async (trx) => {
        const em = orm.em.fork() as EntityManager;
        em.setTransactionContext(trx);
        deferred.set(em, new Map());
        const result = await fn(em);
        await writeDeferred(em);
        return result;
      }),
    ready: (timeoutMs = Number(process.env.DB_READY_TIMEOUT_MS) || 1000) => connection.connectsWithin(timeoutMs),
    close: () => orm.close(true),
  };
}

/** MikroORM's options for a service's database: its schema, pool and migrations. */
function ormOptions(options: DatabaseOptions): Parameters<typeof MikroORM.init<PostgreSqlDriver>>[0] {
  return {
    driver: preparedDriver(
      options.preparedStatements ?? process.env.DATABASE_PREPARED_STATEMENTS !== "false",
      options.jit ?? process.env.DATABASE_JIT === "on",
    ),
    // Through PgBouncer when DATABASE_POOL_URL is set; LISTENs and the migration lock use `url`.
    clientUrl: process.env.DATABASE_POOL_URL || options.url,
    schema: options.schema,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    pool: { min: 0, max: options.poolMax ?? (Number(process.env.DB_POOL_MAX) || 10) },
    ...(options.applicationName ? { driverOptions: { application_name: options.applicationName } } : {}),
    migrations: {
      migrationsList: options.migrations.map((m) => ({ name: m.name, class: m })),
      schema: options.schema,
      tableName: "mikro_orm_migrations",
      transactional: true,
      allOrNothing: true,
      snapshot: false,
      silent: true,
    },
    debug: false,
  };
}

/**
 * Reverts, under the schema's migration lock and in one transaction, every applied migration
 * after `to` (a migration's name), newest first, each by its `down()`; returns their names. A
 * migration without a `down()` cannot be reverted: MikroORM's default `down()` throws, and the
 * transaction rolls every one back.
 * Not part of a release: the tests check each `down()` restores the schema before its
 * migration, and the history benchmark reverts migrations to run them again under load.
 */
export async function migrateDown(options: DatabaseOptions, to: string): Promise<string[]> {
  const orm = await MikroORM.init<PostgreSqlDriver>(ormOptions(options));
  try {
    let reverted: string[] = [];
    await migrateAlone(options.url, options.schema, async () => {
      reverted = (await orm.migrator.down({ to })).map((m) => m.name);
    });
    return reverted;
  } finally {
    await orm.close(true);
  }
}

/** SQLSTATE classes and codes of a database that cannot serve now but may in a moment. */
const UNAVAILABLE_SQLSTATE = /^(08...|53...|57P0[123]|40001|40P01)$/;
/** Socket errors of a database connection that failed or was cut. */
const UNAVAILABLE_SOCKET = new Set(["ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE", "EHOSTUNREACH", "ENOTFOUND"]);
const UNAVAILABLE_MESSAGE =
  /Connection terminated|timeout exceeded when trying to connect|the database pool is not open yet|has encountered a connection error and is not queryable/;

/**
 * True for a failure that says the database cannot serve now (no connection slot, starting
 * or shutting down, connection refused or cut, a deadlock or serialization failure that
 * rolled the transaction back), not that the request is wrong: the same request may
 * succeed when sent again. The error itself or any error in its `cause` chain.
 */
export function isDatabaseUnavailable(err: unknown): boolean {
  for (let e = err, depth = 0; e && typeof e === "object" && depth < 5; e = (e as { cause?: unknown }).cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === "string" && (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_SOCKET.has(code))) return true;
    if (e instanceof Error && UNAVAILABLE_MESSAGE.test(e.message)) return true;
  }
  return false;
}

/**
 * Runs `migrate` while holding the schema's migration lock: a session-level PostgreSQL
 * advisory lock taken on a connection of its own (not the pool's, whose connections the
 * migrator's transactions use and return), held until `migrate` ends. Replicas starting
 * together, and the release's migration job beside them, then migrate one at a time: the
 * first applies what is pending (creating the schema, the migrations table and any
 * extension), the others wait and find the schema current. A migrator that dies releases
 * the lock with its connection.
 */
export async function migrateAlone(url: string, schema: string, migrate: () => Promise<void>): Promise<void> {
  const lock = new pg.Client({ connectionString: url, application_name: `migrate ${schema}` });
  // The lock's connection is idle while `migrate` runs: cut then, it emits 'error', which
  // with no listener would end the process. The lock went with it, so the start fails
  // (and is tried again: `openDatabase`) rather than report a migration done alone.
  let lost: unknown;
  lock.on("error", (err) => (lost ??= err));
  await lock.connect();
  try {
    await lock.query(`select pg_advisory_lock(hashtext('transferops.migrations'), hashtext($1))`, [schema]);
    await migrate();
    if (lost) throw new Error(`the migration lock of ${schema} was lost with its connection`, { cause: lost });
  } finally {
    // Ending the session releases its advisory locks.
    await lock.end().catch(() => undefined);
  }
}

/** Rows a transaction writes at its end, by table (see `deferInsert`). */
const deferred = new WeakMap<EntityManager, Map<string, { columns: string; rows: unknown[][] }>>();

/**
 * Inside `Database.tx`: the row is inserted with the other deferred rows of its table in
 * one statement at the end of the transaction, before commit (outbox rows: a transition
 * that emits three events pays one insert). Returns false outside a transaction, where the
 * caller inserts it itself.
 */
export function deferInsert(em: EntityManager, table: string, columns: string, values: unknown[]): boolean {
  const tables = deferred.get(em);
  if (!tables) return false;
  let t = tables.get(table);
  if (!t) tables.set(table, (t = { columns, rows: [] }));
  t.rows.push(values);
  return true;
}

/**
 * Inside `Database.tx`: takes the rows deferred so far for `table` (in the order they were
 * deferred), for a statement that writes them itself before rows of its own, so that the
 * table's rows keep the order the transaction produced them in (an outbox's `seq`).
 */
export function takeDeferred(em: EntityManager, table: string): unknown[][] {
  return deferred.get(em)?.get(table)?.rows.splice(0) ?? [];
}

async function writeDeferred(em: EntityManager): Promise<void> {
  for (const [table, t] of deferred.get(em) ?? []) {
    if (t.rows.length) await insertRows(em, table, t.columns, t.rows.splice(0));
  }
}

/** Inserts rows (values in the order of `columns`) into `table` in one statement. */
export async function insertRows(
  em: EntityManager,
  table: string,
  columns: string,
  values: unknown[][],
): Promise<void> {
  const row = `(${columns
    .split(",")
    .map(() => "?")
    .join(", ")})`;
  await em.execute(`insert into ${table} (${columns}) values ${values.map(() => row).join(", ")}`, values.flat());
}

/** `em.execute` typed to the rows a query returns. */
export async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await em.execute(sql, params as never[])) as T[];
}

export async function one<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T | undefined> {
  const r = await rows<T>(em, sql, params);
  return r[0];
}

/**
 * Builds the indexes migrations declare as concurrent (`ConcurrentIndex`) that are missing or
 * invalid (see `applyConcurrentIndexes`).
 */
export async function buildConcurrentIndexes(
  url: string,
  schema: string,
  indexes: readonly ConcurrentIndex[],
  log?: Logger,
): Promise<void> {
  await applyConcurrentIndexes(url, schema, { build: indexes, drop: [] }, log);
}

/**
 * Builds the indexes migrations declare as built concurrently that are missing or invalid,
 * then drops the ones declared as dropped concurrently that are still there, one at a time,
 * on a connection of its own outside any transaction. Not under the migration lock:
 * `create index concurrently` and `drop index concurrently` wait for every transaction older
 * than them, and a replica waiting for that lock is one. One replica does it (a session
 * advisory lock it only tries); the others start without waiting, and their queries use an
 * index once it is valid. A build that died leaves an invalid index: the next start drops and
 * builds it again; a drop that died leaves the index (invalid or not): the next start drops it.
 */
export async function applyConcurrentIndexes(
  url: string,
  schema: string,
  changes: ConcurrentIndexChanges,
  log?: Logger,
): Promise<void> {
  if (changes.build.length === 0 && changes.drop.length === 0) return;
  const client = new pg.Client({ connectionString: url, application_name: `index ${schema}` });
  // A connection cut between two statements emits 'error' (the next statement fails and
  // says so); with no listener it would end the process.
  client.on("error", () => undefined);
  await client.connect();
  try {
    const lock = await client.query<{ ok: boolean }>(
      `select pg_try_advisory_lock(hashtext('transferops.indexes'), hashtext($1)) as ok`,
      [schema],
    );
    if (!lock.rows[0]!.ok) return;
    // An operator class of an extension (gin_trgm_ops) is found in the extension's schema,
    // wherever a migration installed it (TRIGRAM_EXTENSION_SQL).
    await client.query(
      `select set_config('search_path', string_agg(quote_ident(n.nspname), ', '), false)
         from (select 'public' as nspname
               union select n.nspname from pg_extension e join pg_namespace n on n.oid = e.extnamespace) n`,
    );
    // The builds first: an index a new one replaces keeps serving its reads until that is built.
    for (const index of changes.build) {
      const found = await indexValidity(client, schema, index.name);
      if (found?.valid) continue;
      if (found) await client.query(`drop index concurrently "${schema}"."${index.name}"`);
      const started = Date.now();
      await client.query(`create index concurrently "${index.name}" on ${index.on}`);
      log?.info({ schema, index: index.name, ms: Date.now() - started }, "index built concurrently");
    }
    for (const name of changes.drop) {
      if (!(await indexValidity(client, schema, name))) continue;
      const started = Date.now();
      await client.query(`drop index concurrently if exists "${schema}"."${name}"`);
      log?.info({ schema, index: name, ms: Date.now() - started }, "index dropped concurrently");
    }
  } finally {
    // Ending the session releases its advisory lock.
    await client.end().catch(() => undefined);
  }
}

/** The index of that name in the schema, valid or not; undefined when there is none. */
async function indexValidity(client: pg.Client, schema: string, name: string): Promise<{ valid: boolean } | undefined> {
  const found = await client.query<{ valid: boolean }>(
    `select i.indisvalid as valid from pg_class c join pg_namespace n on n.oid = c.relnamespace
       join pg_index i on i.indexrelid = c.oid where n.nspname = $1 and c.relname = $2`,
    [schema, name],
  );
  return found.rows[0];
}
