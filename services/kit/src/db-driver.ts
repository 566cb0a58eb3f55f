import { Utils, type Configuration } from "@mikro-orm/core";
import { PostgreSqlConnection, PostgreSqlDriver } from "@mikro-orm/postgresql";
import { CompiledQuery } from "kysely";
import type pg from "pg";

/**
 * MikroORM's PostgreSQL driver with the parameters of `em.execute` sent to the server
 * (`$1`, `$2`, …) instead of interpolated into the SQL text, and each statement prepared
 * once per connection under a name: PostgreSQL parses and plans it on its first use, then
 * reuses the plan (a claim's statements spent as long being planned as being executed).
 *
 * What `?` means is unchanged: an array stands for its items (`in (?)`: one text per
 * length, so a list whose length varies widely is better bound as one JSON parameter), a
 * plain object for its JSON. Past `MAX_NAMED` distinct texts a process sends statements
 * unnamed, so a connection holds a bounded number of prepared statements. `??` (an
 * identifier) and `\?` keep MikroORM's own interpolation.
 *
 * `preparedStatements: false` (env `DATABASE_PREPARED_STATEMENTS=false`) sends parameters
 * without naming statements, for a pooler in transaction mode that cannot keep them.
 */
export function preparedDriver(named: boolean): typeof PostgreSqlDriver {
  class Connection extends PostgreSqlConnection {
    /** The pool under Kysely: a statement outside a transaction takes a client from it directly. */
    private pool?: pg.Pool;

    override createKyselyDialect(overrides: pg.PoolConfig) {
      const given = overrides as { onPoolCreated?: (pool: pg.Pool) => unknown } | undefined;
      return super.createKyselyDialect({
        ...overrides,
        onPoolCreated: (pool: pg.Pool) => {
          this.pool = pool;
          if (named) pool.on("connect", nameStatements);
          return given?.onPoolCreated?.(pool);
        },
      } as pg.PoolConfig);
    }

    override async execute(...args: Parameters<PostgreSqlConnection["execute"]>): Promise<never> {
      const [query, params, method = "all", ctx, loggerContext] = args;
      const statement =
        typeof query === "string" && Array.isArray(params) && params.length > 0 && !hasAbort(loggerContext)
          ? toStatement(query, params)
          : undefined;
      if (!statement) return (await super.execute(...args)) as never;
      await this.ensureConnection();
      try {
        if (ctx || !this.pool) {
          const res = await (ctx ?? this.getClient()).executeQuery(CompiledQuery.raw(statement.text, statement.values));
          return this.transformRawResult(res as never, method) as never;
        }
        // Outside a transaction: the pool's own query (one client taken and given back), about
        // 0.05 ms of CPU less a statement than Kysely's connection provider.
        const res = await this.pool.query(statement.text, statement.values);
        return this.transformRawResult(
          { rows: res.rows, numAffectedRows: BigInt(res.rowCount ?? 0) } as never,
          method,
        ) as never;
      } catch (err) {
        if (isStalePlan(err)) renameStatements();
        throw err;
      }
    }
  }
  return class extends PostgreSqlDriver {
    constructor(config: Configuration) {
      super(config);
      (this as unknown as { connection: Connection }).connection = new Connection(config);
    }
  };
}

function hasAbort(loggerContext: unknown): boolean {
  const c = loggerContext as { abort?: unknown; signal?: unknown } | undefined;
  return c?.abort != null || c?.signal != null;
}

/** Distinct statement texts named per process (and so prepared per connection). */
const MAX_NAMED = 1000;
const names = new Map<string, string>();
let generation = 1;

/**
 * A statement prepared before a migration changed its table's columns (`select *` while a
 * rolling deploy adds a column) fails with "cached plan must not change result type" on
 * every connection that prepared it; a statement dropped from its connection (`DISCARD
 * ALL`) fails as unknown. The call fails once; from then on every text gets a new name, so
 * each connection prepares it afresh instead of failing until the process restarts.
 */
function isStalePlan(err: unknown): boolean {
  const e = err as { code?: string; message?: string };
  return (
    (e?.code === "0A000" && /cached plan must not change result type/.test(e.message ?? "")) || e?.code === "26000"
  );
}

function renameStatements(): void {
  generation += 1;
  names.clear();
}

/** A `?` text split around its placeholders, or null if it uses `??` or `\?`. */
const parsed = new Map<string, string[] | null>();

function split(sql: string): string[] | null {
  let parts = parsed.get(sql);
  if (parts !== undefined) return parts;
  parts = sql.includes("??") || sql.includes("\\?") ? null : sql.split("?");
  if (parsed.size < MAX_NAMED * 4) parsed.set(sql, parts);
  return parts;
}

function toStatement(sql: string, params: readonly unknown[]): { text: string; values: unknown[] } | undefined {
  const parts = split(sql);
  if (!parts || parts.length - 1 !== params.length) return undefined;
  const values: unknown[] = [];
  let text = parts[0]!;
  for (let i = 0; i < params.length; i++) {
    const p = params[i];
    if (Array.isArray(p)) {
      text += p.map((v) => `$${values.push(value(v))}`).join(", ");
    } else {
      text += `$${values.push(value(p))}`;
    }
    text += parts[i + 1]!;
  }
  if (names.size < MAX_NAMED && !names.has(text)) names.set(text, `s${generation}_${names.size + 1}`);
  return { text, values };
}

/** A parameter as MikroORM would have written it, in the form `pg` sends. */
function value(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "bigint") return v.toString();
  if (Utils.isPlainObject(v)) return JSON.stringify(v);
  return v;
}

/** Makes a pooled client prepare each named text once (see `names`). */
function nameStatements(client: pg.PoolClient): void {
  const query = client.query.bind(client) as (...a: unknown[]) => unknown;
  (client as { query: unknown }).query = (text: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof text === "string" && Array.isArray(values) ? names.get(text) : undefined;
    if (name) return query({ name, text, values }, callback);
    return callback === undefined ? query(text, values) : query(text, values, callback);
  };
}
