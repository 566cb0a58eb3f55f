import { Utils, type Configuration } from "@mikro-orm/core";
import { PostgreSqlConnection, PostgreSqlDriver } from "@mikro-orm/postgresql";
import { CompiledQuery } from "kysely";
import type pg from "pg";
import { dbPoolConnections, dbPoolWait } from "./metrics.ts";

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
export function preparedDriver(named: boolean, jit = false): typeof PostgreSqlDriver {
  class Connection extends PreparedConnection {
    protected get namesStatements(): boolean {
      return named;
    }
    protected get jitOn(): boolean {
      return jit;
    }
  }
  return class extends PostgreSqlDriver {
    constructor(config: Configuration) {
      super(config);
      (this as unknown as { connection: Connection }).connection = new Connection(config);
    }
  };
}

/** preparedDriver's connection; the subclass there says whether statements are named and JIT stays on. */
abstract class PreparedConnection extends PostgreSqlConnection implements PgTransactions {
  /** Each statement prepared once per connection under a name (else sent unnamed). */
  protected abstract get namesStatements(): boolean;
  /** PostgreSQL's JIT left on (else `jit = off` on each new connection). */
  protected abstract get jitOn(): boolean;

  /** The pool under Kysely: a statement outside a transaction takes a client from it directly. */
  private pool?: pg.Pool;

  override createKyselyDialect(overrides: pg.PoolConfig) {
    const given = overrides as
      { onPoolCreated?: (pool: pg.Pool) => unknown; onConnect?: (client: pg.PoolClient) => unknown } | undefined;
    return super.createKyselyDialect({
      ...overrides,
      // Awaited by the pool before it hands the new connection out: its first query then
      // never queues behind ours on one client (which pg 9 refuses).
      onConnect: async (client: pg.PoolClient) => {
        if (this.namesStatements) nameStatements(client);
        if (!this.jitOn) await jitOff(client);
        await given?.onConnect?.(client);
      },
      onPoolCreated: (pool: pg.Pool) => {
        this.pool = pool;
        measurePool(pool, String(this.config.get("schema") ?? "public"));
        return given?.onPoolCreated?.(pool);
      },
    } as pg.PoolConfig);
  }

  async connectsWithin(timeoutMs: number): Promise<boolean> {
    await this.ensureConnection();
    const pool = this.pool;
    if (!pool) return false;
    let late = false;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<false>((resolve) => {
      timer = setTimeout(() => {
        late = true;
        resolve(false);
      }, timeoutMs);
    });
    // A connection handed out after the budget is given straight back.
    const taken = pool.connect().then(async (client) => {
      let ok = false;
      try {
        if (!late) ok = (await client.query("select 1")) !== undefined;
      } finally {
        client.release(ok ? undefined : !late);
      }
      return ok && !late;
    });
    try {
      return await Promise.race([taken, timeout]);
    } catch {
      return false;
    } finally {
      clearTimeout(timer);
    }
  }

  async transaction<T>(fn: (trx: PgTransaction) => Promise<T>): Promise<T> {
    await this.ensureConnection();
    if (!this.pool) throw new Error("the database pool is not open yet");
    const pool = this.pool;
    const client = await whenSlotFree(() => pool.connect());
    // The client goes back to the pool only when it is known to be outside any transaction;
    // otherwise (a lost connection, a failed rollback) it is destroyed.
    let clean = false;
    try {
      await client.query("begin");
      const result = await fn(new PgTransaction(client, 0));
      await client.query("commit");
      clean = true;
      return result;
    } catch (err) {
      clean = await client.query("rollback").then(
        () => true,
        () => false,
      );
      throw err;
    } finally {
      client.release(clean ? undefined : true);
    }
  }

  // A nested `em.transactional` inside `Database.tx` is a savepoint on the same client.
  override async begin(options: Parameters<PostgreSqlConnection["begin"]>[0] = {}) {
    const parent = options.ctx;
    if (!(parent instanceof PgTransaction)) return super.begin(options);
    const trx = new PgTransaction(parent.client, parent.depth + 1);
    await trx.client.query(`savepoint ${trx.savepoint}`);
    return trx as never;
  }

  override async commit(...args: Parameters<PostgreSqlConnection["commit"]>) {
    const [ctx] = args;
    if (!(ctx instanceof PgTransaction)) return super.commit(...args);
    await ctx.client.query(`release savepoint ${ctx.savepoint}`);
  }

  override async rollback(...args: Parameters<PostgreSqlConnection["rollback"]>) {
    const [ctx] = args;
    if (!(ctx instanceof PgTransaction)) return super.rollback(...args);
    await ctx.client.query(`rollback to savepoint ${ctx.savepoint}`);
  }

  override async execute(...args: Parameters<PostgreSqlConnection["execute"]>): Promise<never> {
    const [query, params, method = "all", ctx, loggerContext] = args;
    if (ctx instanceof PgTransaction) {
      if (typeof query !== "string") throw new Error("a statement inside Database.tx is SQL text");
      const statement = (Array.isArray(params) && toStatement(query, params)) || {
        text: this.platform.formatQuery(query, (params ?? []) as unknown[]),
        values: [],
      };
      return this.run(ctx.client, statement, method);
    }
    const statement =
      typeof query === "string" && Array.isArray(params) && params.length > 0 && !hasAbort(loggerContext)
        ? toStatement(query, params)
        : undefined;
    if (!statement) return (await super.execute(...args)) as never;
    await this.ensureConnection();
    if (ctx || !this.pool) {
      try {
        const res = await (ctx ?? this.getClient()).executeQuery(CompiledQuery.raw(statement.text, statement.values));
        return this.transformRawResult(res as never, method) as never;
      } catch (err) {
        if (isStalePlan(err)) renameStatements();
        throw err;
      }
    }
    // Outside a transaction: the pool's own query (one client taken and given back), about
    // 0.05 ms of CPU less a statement than Kysely's connection provider.
    const pool = this.pool;
    return whenSlotFree(() => this.run(pool, statement, method));
  }

  /** A statement on a pg client (or the pool), its result in MikroORM's shape for `method`. */
  private async run(
    on: pg.Pool | pg.PoolClient,
    statement: { text: string; values: unknown[] },
    method: "all" | "get" | "run",
  ): Promise<never> {
    try {
      const res = await on.query(statement.text, statement.values);
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

/**
 * A transaction the kit runs on one pooled client (`Database.tx`), the EntityManager's
 * transaction context: MikroORM's own transaction path (a fork's unit of work, Kysely's
 * transaction builder and connection provider) cost about 0.1 ms of CPU more a transaction
 * for the raw SQL this project runs. `depth` > 0 is a savepoint inside it.
 */
export class PgTransaction {
  constructor(
    readonly client: pg.PoolClient,
    readonly depth: number,
  ) {}

  get savepoint(): string {
    return `trx${this.depth}`;
  }
}

export interface PgTransactions {
  transaction<T>(fn: (trx: PgTransaction) => Promise<T>): Promise<T>;
  /**
   * Whether the pool hands out a connection, and a statement runs on it, within `timeoutMs`:
   * a pool whose every connection is busy, or a database that refuses new ones, answers false.
   */
  connectsWithin(timeoutMs: number): Promise<boolean>;
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
  if (!text.startsWith(PLANNED_AT_EACH_CALL) && names.size < MAX_NAMED && !names.has(text))
    names.set(text, `s${generation}_${names.size + 1}`);
  return { text, values };
}

/**
 * A statement beginning with this comment is never named: PostgreSQL plans it at each call for
 * its parameters' values. A named statement is planned generically after five calls, without
 * them: for a list whose best plan depends on its filter (a search matching nothing, a rare
 * status), the generic plan walks the newest-first index and, on a long history, reads every
 * row (a search over 4,000,000 operations: 17 to 26 s; planned for its pattern, the trigram
 * index answers in under a millisecond; docs/decisions/history.md).
 */
export const PLANNED_AT_EACH_CALL = "/* planned at each call */ ";

/** A parameter as MikroORM would have written it, in the form `pg` sends. */
function value(v: unknown): unknown {
  if (v === undefined) return null;
  if (typeof v === "bigint") return v.toString();
  if (Utils.isPlainObject(v)) return JSON.stringify(v);
  return v;
}

/**
 * The pool's metrics: every wait for a connection (a transaction's `connect`, and the one a
 * statement outside a transaction makes through `pool.query`) in `transferops_db_pool_wait_seconds`,
 * and its connections by state at scrape time in `transferops_db_pool_connections`.
 */
function measurePool(pool: pg.Pool, service: string): void {
  const wait = dbPoolWait.labels(service);
  const connect = pool.connect.bind(pool) as (cb?: (...a: unknown[]) => void) => unknown;
  (pool as { connect: unknown }).connect = (cb?: (...a: unknown[]) => void) => {
    const from = performance.now();
    const took = () => wait.observe((performance.now() - from) / 1000);
    if (typeof cb === "function")
      return connect((...a: unknown[]) => {
        took();
        cb(...a);
      });
    return (connect() as Promise<pg.PoolClient>).then(
      (client) => (took(), client),
      (err: unknown) => {
        took();
        throw err;
      },
    );
  };
  const max = (pool as unknown as { options: { max: number } }).options.max;
  dbPoolConnections.add(service, async () => [
    { labels: { service, state: "in_use" }, value: pool.totalCount - pool.idleCount },
    { labels: { service, state: "idle" }, value: pool.idleCount },
    { labels: { service, state: "max" }, value: max },
    { labels: { service, state: "waiting" }, value: pool.waitingCount },
  ]);
}

/** Refusals PostgreSQL gives only while opening a connection: no statement of ours ran. */
const REFUSED_AT_CONNECT = new Set(["53300", "57P03"]);
/** Pauses before each new try of a refused connection: about 1.5 s in all. */
const SLOT_WAITS_MS = [50, 100, 200, 400, 800];

/**
 * Runs `open` (which takes a new connection, then works on it) again while PostgreSQL refuses
 * the connection for want of a slot (too many clients; starting up): a burst of replicas
 * past `max_connections` waits a moment for a slot instead of failing the call. Other errors,
 * and a refusal past the last wait, go to the caller (a call answers "unavailable, send it
 * again").
 */
export async function whenSlotFree<T>(open: () => Promise<T>): Promise<T> {
  for (let i = 0; ; i++) {
    try {
      return await open();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (i >= SLOT_WAITS_MS.length || typeof code !== "string" || !REFUSED_AT_CONNECT.has(code)) throw err;
      await new Promise((r) => setTimeout(r, SLOT_WAITS_MS[i]));
    }
  }
}

/**
 * PostgreSQL's JIT off for a new connection (see DatabaseOptions.jit): sent before anything
 * else on it (the pool's `onConnect` waits for it). A `set`, not the startup option
 * `-c jit=off`, which PgBouncer refuses unless told to ignore it; behind a pooler in
 * transaction mode the setting may land on another server connection, which only speeds it.
 */
async function jitOff(client: pg.PoolClient): Promise<void> {
  await client.query("set jit = off").catch(() => undefined);
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
