import { MikroORM, type Constructor } from "@mikro-orm/core";
import { Migrator, Migration } from "@mikro-orm/migrations";
import { PostgreSqlDriver, type EntityManager } from "@mikro-orm/postgresql";

export { Migration };
export type { EntityManager };

/**
 * A service's database: one PostgreSQL schema it alone reads and writes, migrated by the
 * checked-in migration classes of its `store/migrations`. Queries are explicit SQL through
 * MikroORM's EntityManager (`em.execute`), inside `em.transactional` where they must be
 * atomic: row locks, conditional updates and unique indexes carry the invariants.
 */
export interface Database {
  orm: MikroORM<PostgreSqlDriver>;
  schema: string;
  em(): EntityManager;
  /** Runs `fn` in one transaction; the EntityManager it receives is bound to it. */
  tx<T>(fn: (em: EntityManager) => Promise<T>): Promise<T>;
  close(): Promise<void>;
}

export interface DatabaseOptions {
  url: string;
  schema: string;
  migrations: Constructor<Migration>[];
  poolMax?: number;
}

export async function openDatabase(options: DatabaseOptions): Promise<Database> {
  const orm = await MikroORM.init<PostgreSqlDriver>({
    driver: PostgreSqlDriver,
    clientUrl: options.url,
    schema: options.schema,
    entities: [],
    discovery: { warnWhenNoEntities: false },
    extensions: [Migrator],
    pool: { min: 0, max: options.poolMax ?? 10 },
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
  });
  await orm.em.getConnection().execute(`create schema if not exists "${options.schema}"`);
  await orm.migrator.up();
  return {
    orm,
    schema: options.schema,
    em: () => orm.em.fork() as EntityManager,
    tx: (fn) => (orm.em.fork() as EntityManager).transactional((em) => fn(em as EntityManager)),
    close: () => orm.close(true),
  };
}

/** `em.execute` typed to the rows a query returns. */
export async function rows<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T[]> {
  return (await em.execute(sql, params as never[])) as T[];
}

export async function one<T>(em: EntityManager, sql: string, params: unknown[] = []): Promise<T | undefined> {
  const r = await rows<T>(em, sql, params);
  return r[0];
}
