// The history benchmark's `--migrate-under-load` step (history.ts): the migrations of the live
// history run again on the history while the API takes creates, each measured.
//
//   1. The concurrent indexes every migration declares (ConcurrentIndex) dropped, then built again
//      by `buildConcurrentIndexes` while creates run (the step as it was).
//   2. The transactional migrations of MIGRATIONS_OF_THIS_ISSUE reverted by their down()
//      (migrateDown: not timed, not part of the claim), then, with the creates running again after
//      10 s of them alone, each schema migrated up by `openDatabase`, the services' own migrate
//      path (the migration advisory lock, MikroORM's migrator in one transaction, the concurrent
//      indexes checked), and dispatch's `countSimHistories` after it, as its start runs it. For
//      each migration: how long it ran, the locks its connection held on the schema's tables
//      (pg_locks read every 50 ms from a side connection, and at its start and end inside its
//      transaction), the creates overlapping it against the 10 s before, the sessions seen waiting
//      for a lock on the schema's tables, and for analytics how late the creates reached its
//      read model (the consumers' lag).
//
// A migration is included by its name in MIGRATIONS_OF_THIS_ISSUE; it needs a down() that puts
// back the schema before it (the store tests check it: services/*/src/store/migrations-down.test.ts).
import { randomBytes } from "node:crypto";
import pg from "pg";
import {
  buildConcurrentIndexes,
  concurrentIndexChanges,
  createLogger,
  migrateDown,
  openDatabase,
  type DatabaseOptions,
} from "@transferops/kit";
import { migrations as analyticsMigrations } from "../../services/analytics/src/store/migrations/index.ts";
import { countSimHistories } from "../../services/dispatch/src/flows/fleet-facing.ts";
import { migrations as dispatchMigrations } from "../../services/dispatch/src/store/migrations/index.ts";
import { migrations as evidenceMigrations } from "../../services/evidence/src/store/migrations/index.ts";
import { migrations as fleetMigrations } from "../../services/fleet/src/store/migrations/index.ts";
import { migrations as intakeMigrations } from "../../services/intake/src/store/migrations/index.ts";
import { migrations as messagingMigrations } from "../../services/messaging/src/store/migrations/index.ts";
import { hasDown } from "../support/migration-down.ts";
import { percentile } from "./http.ts";

type Migrations = DatabaseOptions["migrations"];

/** Every service's migrations, in the order the step migrates them. */
const SCHEMAS: [string, Migrations][] = [
  ["dispatch", dispatchMigrations],
  ["evidence", evidenceMigrations],
  ["fleet", fleetMigrations],
  ["intake", intakeMigrations],
  ["analytics", analyticsMigrations],
  ["messaging", messagingMigrations],
];

/**
 * The transactional migrations run again under load, by schema: the issue's (docs/decisions/
 * history.md, "Migrations on a live history"). Add a migration here to have it measured: it needs
 * a down(), and every migration of its schema after the first listed must be listed too (the step
 * reverts them all). The InboxPurge migrations are not here: they hold nothing but a concurrent
 * index, which step 1 builds again.
 */
export const MIGRATIONS_OF_THIS_ISSUE: Record<string, readonly string[]> = {
  dispatch: [
    "Migration0011SimCounts",
    "Migration0012UnprovenCounts",
    "Migration0013SearchWindows",
    "Migration0014LookupIndexes",
    "Migration0015UnprovenOrder",
    "Migration0016ScopedQueues",
    "Migration0017ScopedContradicted",
    "Migration0018ContradictedPage",
    "Migration0019DropContradicted",
    "Migration0020SearchPendingList",
  ],
  evidence: [
    "Migration0010Autovacuum",
    "Migration0011DayChains",
    "Migration0012ChainBalances",
    "Migration0013UnkeptDays",
    "Migration0014PreviousDayCount",
    "Migration0015ScopedQueues",
    "Migration0016TodayRuns",
  ],
  fleet: ["Migration0006Autovacuum", "Migration0007AuditFilters"],
  intake: ["Migration0005Autovacuum", "Migration0006ListIndexes"],
  analytics: [
    "Migration0005DelaySeconds",
    "Migration0006AmountCounts",
    "Migration0007AgentRollups",
    "Migration0008DropUnreadIndexes",
    "Migration0009LoadCounts",
    "Migration0010HandsetDaily",
    "Migration0011WaitingMessages",
    "Migration0012HandsetOldest",
    "Migration0013AgentCovering",
    "Migration0014MonthlyRollups",
    "Migration0015AgentSeries",
    "Migration0016AgentDismissed",
  ],
  messaging: ["Migration0005Autovacuum", "Migration0006SearchPendingList"],
};

export interface MigrateContext {
  dbUrl: string;
  check: pg.Client;
  /** One create through the API (then its cancel, untimed): the load's unit. */
  create: () => Promise<{ status: number; ms: number; id?: string }>;
  log: (s: string) => void;
}

interface CreateRecord {
  start: number;
  end: number;
  ms: number;
  ok: boolean;
  id?: string;
}

/** Creates one at a time (each cancelled at once, so no queue builds up), every one recorded. */
class CreateLoad {
  readonly records: CreateRecord[] = [];
  private running = false;
  private done: Promise<void> = Promise.resolve();

  constructor(private readonly create: MigrateContext["create"]) {}

  start(): void {
    this.running = true;
    this.done = (async () => {
      while (this.running) {
        const start = performance.now();
        const c = await this.create();
        this.records.push({ start, end: start + c.ms, ms: c.ms, ok: c.status === 202, id: c.id });
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.done;
  }

  /** The creates whose request overlapped [from, to]. */
  between(from: number, to: number): CreateRecord[] {
    return this.records.filter((r) => r.start <= to && r.end >= from);
  }
}

const p95 = (xs: number[]) =>
  xs.length
    ? percentile(
        [...xs].sort((a, b) => a - b),
        95,
      )
    : 0;

interface CreatesFigure {
  n: number;
  p95_ms: number;
  refused: number;
  over_1s: number;
}

function creates(records: CreateRecord[]): CreatesFigure {
  const ok = records.filter((r) => r.ok).map((r) => r.ms);
  return {
    n: records.length,
    p95_ms: Number(p95(ok).toFixed(1)),
    refused: records.length - ok.length,
    over_1s: records.filter((r) => r.ms > 1000).length,
  };
}

/** A lag; infinite when a create's operation never reached analytics while the probe read. */
const late = (ms: number) => (Number.isFinite(ms) ? `${ms.toFixed(0)} ms` : "never (not all seen)");

const say = (c: CreatesFigure) => `${c.n} creates, p95 ${c.p95_ms.toFixed(1)} ms, ${c.refused} refused`;

/** Step 1: the concurrent indexes dropped and built again under load (as the step always did). */
export async function rebuildIndexesUnderLoad(ctx: MigrateContext): Promise<void> {
  // What the migrations leave built concurrently, a later migration's drop winning (the kit's own reading).
  const declared = (list: readonly unknown[]) => concurrentIndexChanges(list).build;
  const load = new CreateLoad(ctx.create);
  load.start();
  await new Promise((res) => setTimeout(res, 10_000));
  await load.stop();
  const before = creates(load.records);
  for (const [schema, list] of SCHEMAS) {
    for (const index of declared(list))
      await ctx.check.query(`drop index concurrently if exists "${schema}"."${index.name}"`);
  }
  const during = new CreateLoad(ctx.create);
  during.start();
  const built: string[] = [];
  const t0 = performance.now();
  for (const [schema, list] of SCHEMAS) {
    const indexes = declared(list);
    const t = performance.now();
    await buildConcurrentIndexes(ctx.dbUrl, schema, indexes);
    built.push(`${schema} ${indexes.length} in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  const buildS = (performance.now() - t0) / 1000;
  await during.stop();
  const meanwhile = creates(during.records);
  const valid = (
    await ctx.check.query(
      `select count(*)::int as n from pg_index i join pg_class c on c.oid = i.indexrelid where i.indisvalid and c.relname = any($1)`,
      [SCHEMAS.flatMap(([, list]) => declared(list).map((x) => x.name))],
    )
  ).rows[0].n;
  ctx.log(
    `\nthe migrations' concurrent indexes dropped and built again on the history under load: ${buildS.toFixed(1)} s (${built.join(", ")}), ${valid} valid; ` +
      `creates meanwhile: ${meanwhile.n}, p95 ${meanwhile.p95_ms.toFixed(1)} ms, ${meanwhile.refused} refused; ` +
      `the 10 s before: ${before.n}, p95 ${before.p95_ms.toFixed(1)} ms, ${before.refused} refused`,
  );
  await ctx.check.query(`analyze`);
}

interface Plan {
  schema: string;
  migrations: Migrations;
  /** The migration the step reverts to. */
  to: string;
  names: string[];
}

/** What step 2 reverts and runs again, per schema; refuses a list it could not run. */
export function migrationPlan(list = MIGRATIONS_OF_THIS_ISSUE): Plan[] {
  return SCHEMAS.filter(([schema]) => list[schema]?.length).map(([schema, migrations]) => {
    const names = list[schema]!;
    for (const name of names)
      if (!migrations.some((m) => m.name === name)) throw new Error(`${schema} has no migration ${name}`);
    const first = migrations.findIndex((m) => names.includes(m.name));
    if (first < 1)
      throw new Error(`${schema}: ${migrations[first]!.name} is its first migration, nothing to revert to`);
    const after = migrations.slice(first);
    for (const m of after) {
      if (!names.includes(m.name))
        throw new Error(
          `${schema} ${m.name} comes after ${migrations[first]!.name}: reverting that reverts it too; list it in MIGRATIONS_OF_THIS_ISSUE`,
        );
      if (!hasDown(m)) throw new Error(`${schema} ${m.name} has no down(): it cannot be reverted to run again`);
    }
    return { schema, migrations, to: migrations[first - 1]!.name, names: after.map((m) => m.name) };
  });
}

/** The lock modes of pg_locks, weakest first. */
const MODES = [
  "AccessShareLock",
  "RowShareLock",
  "RowExclusiveLock",
  "ShareUpdateExclusiveLock",
  "ShareLock",
  "ShareRowExclusiveLock",
  "ExclusiveLock",
  "AccessExclusiveLock",
];
const strength = (mode: string) => MODES.indexOf(mode);

interface LockRow {
  at: number;
  rel: string;
  mode: string;
  granted: boolean;
  app: string;
  pid: number;
  waited_ms: number;
}

/** The relation locks on a schema's tables, every session's but the reader's own. */
const LOCKS_SQL = `select n.nspname || '.' || c.relname as rel, l.mode, l.granted, coalesce(a.application_name, '') as app,
    l.pid, coalesce(extract(epoch from clock_timestamp() - a.query_start) * 1000, 0)::float8 as waited_ms
  from pg_locks l join pg_class c on c.oid = l.relation join pg_namespace n on n.oid = c.relnamespace
  join pg_stat_activity a on a.pid = l.pid
  where l.locktype = 'relation' and c.relkind in ('r', 'p') and l.pid <> pg_backend_pid()
    and n.nspname = any($1)`;

/**
 * A side connection reading pg_locks every 50 ms (and when asked: a migration's start and end),
 * and the analytics read model for the creates' operations (the consumers' lag).
 */
class Probe {
  readonly locks: LockRow[] = [];
  /** When each created operation was first seen in analytics.operations. */
  readonly projected = new Map<string, number>();
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  private constructor(
    private readonly client: pg.Client,
    private readonly load: CreateLoad,
  ) {}

  static async open(url: string, load: CreateLoad): Promise<Probe> {
    const client = new pg.Client({
      connectionString: url,
      application_name: `bench probe ${randomBytes(2).toString("hex")}`,
    });
    client.on("error", () => undefined);
    await client.connect();
    return new Probe(client, load);
  }

  /** A read every 50 ms (or as soon as the last one ends, when it took longer). */
  start(): void {
    this.running = true;
    this.loop = (async () => {
      while (this.running) {
        const t = performance.now();
        await this.tick();
        await new Promise((res) => setTimeout(res, Math.max(0, 50 - (performance.now() - t))));
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
    await this.client.end();
  }

  /** The locks held now (awaited inside a migration's transaction: what it holds). */
  async sample(): Promise<void> {
    const at = performance.now();
    const { rows } = await this.client.query(LOCKS_SQL, [SCHEMAS.map(([s]) => s)]);
    for (const r of rows) this.locks.push({ at, ...r });
  }

  private async tick(): Promise<void> {
    await this.sample();
    const waiting = this.load.records.filter((r) => r.ok && r.id && !this.projected.has(r.id)).map((r) => r.id!);
    if (waiting.length === 0) return;
    const at = performance.now();
    const { rows } = await this.client.query(
      `select operation_id from analytics.operations where operation_id = any($1)`,
      [waiting],
    );
    for (const r of rows) this.projected.set(r.operation_id, at);
  }
}

interface Window {
  schema: string;
  name: string;
  start: number;
  end: number;
  /** When the migrator's transaction committed (the locks went). */
  committed: number;
  app: string;
}

interface MigrationFigure {
  schema: string;
  migration: string;
  duration_ms: number;
  held_until_commit_ms: number;
  locks: Record<string, string>;
  creates: CreatesFigure;
  waiting_sessions: number;
  longest_wait_ms: number;
  analytics_lag_max_ms?: number;
}

/** The strongest mode the window's connection held on each table of its schema, strongest first. */
function strongestLocks(probe: Probe, w: Window): Record<string, string> {
  const held = new Map<string, string>();
  for (const l of probe.locks) {
    if (l.app !== w.app || !l.granted || l.at < w.start || l.at > w.committed) continue;
    if (!l.rel.startsWith(`${w.schema}.`)) continue;
    if (strength(l.mode) > strength(held.get(l.rel) ?? "")) held.set(l.rel, l.mode);
  }
  return Object.fromEntries([...held].sort((a, b) => strength(b[1]) - strength(a[1])));
}

/** How late the creates that replied within [from, to] reached analytics.operations (max). */
function lagMs(load: CreateLoad, probe: Probe, from: number, to: number): number {
  const lags = load.records
    .filter((r) => r.ok && r.id && r.end >= from && r.end <= to)
    .map((r) => (probe.projected.get(r.id!) ?? Infinity) - r.end);
  return lags.length ? Math.max(...lags) : 0;
}

function figure(w: Window, load: CreateLoad, probe: Probe): MigrationFigure {
  const others = probe.locks.filter(
    (l) => !l.granted && l.app !== w.app && l.at >= w.start && l.at <= w.committed && l.rel.startsWith(`${w.schema}.`),
  );
  return {
    schema: w.schema,
    migration: w.name,
    duration_ms: Number((w.end - w.start).toFixed(1)),
    held_until_commit_ms: Number((w.committed - w.end).toFixed(1)),
    locks: strongestLocks(probe, w),
    creates: creates(load.between(w.start, w.committed)),
    waiting_sessions: new Set(others.map((l) => l.pid)).size,
    longest_wait_ms: Number(Math.max(0, ...others.map((l) => l.waited_ms)).toFixed(1)),
    ...(w.schema === "analytics" ? { analytics_lag_max_ms: lagMs(load, probe, w.start, w.committed) } : {}),
  };
}

/**
 * One schema migrated up by `openDatabase` (the services' path), each migration's start and end
 * told inside the transaction; dispatch's `countSimHistories` after it, as at its start.
 */
async function migrateSchema(plan: Plan, ctx: MigrateContext, probe: Probe): Promise<Window[]> {
  const app = `bench migrate ${plan.schema}`;
  const marks: { name: string; start: number; end: number }[] = [];
  let committed = 0;
  const db = await openDatabase({
    url: ctx.dbUrl,
    schema: plan.schema,
    migrations: plan.migrations,
    poolMax: 2,
    applicationName: app,
    onMigration: async (name, phase) => {
      const now = performance.now();
      if (phase === "committed") committed ||= now;
      else if (phase === "start") marks.push({ name, start: now, end: NaN });
      else marks.at(-1)!.end = now;
      // Inside the transaction: what the migration holds (a read of a few milliseconds more).
      if (phase !== "committed") await probe.sample();
    },
  });
  const windows = marks.map((m) => ({ schema: plan.schema, app, committed, ...m }));
  if (plan.schema === "dispatch") {
    const start = performance.now();
    await countSimHistories({ db, log: createLogger("bench", { level: "warn" }) });
    const end = performance.now();
    windows.push({ schema: plan.schema, app, name: "countSimHistories (at start)", start, end, committed: end });
  }
  await db.close();
  return windows;
}

/** Step 2: the transactional migrations reverted, then run again while creates run. */
export async function rerunMigrationsUnderLoad(ctx: MigrateContext): Promise<MigrationFigure[]> {
  const plans = migrationPlan();
  const reverting = performance.now();
  for (const p of plans)
    await migrateDown({ url: ctx.dbUrl, schema: p.schema, migrations: p.migrations, poolMax: 2 }, p.to);
  ctx.log(
    `\nreverted by their down() (not timed as part of the claim: no load ran): ${plans.map((p) => `${p.schema} ${p.names.join(", ")}`).join("; ")} in ${((performance.now() - reverting) / 1000).toFixed(1)} s`,
  );
  const load = new CreateLoad(ctx.create);
  const probe = await Probe.open(ctx.dbUrl, load);
  const started = performance.now();
  load.start();
  probe.start();
  await new Promise((res) => setTimeout(res, 10_000));
  const migrating = performance.now();
  const windows: Window[] = [];
  for (const p of plans) windows.push(...(await migrateSchema(p, ctx, probe)));
  const migrated = performance.now();
  // The consumers' events of the last creates reach analytics: a second more of load.
  await new Promise((res) => setTimeout(res, 1_000));
  await load.stop();
  await probe.stop();
  const figures = windows.map((w) => figure(w, load, probe));
  report(ctx, { load, probe, started, migrating, migrated, figures, windows });
  await ctx.check.query(`analyze`);
  return figures;
}

function report(
  ctx: MigrateContext,
  r: {
    load: CreateLoad;
    probe: Probe;
    started: number;
    migrating: number;
    migrated: number;
    figures: MigrationFigure[];
    windows: Window[];
  },
): void {
  const before = creates(r.load.between(r.started, r.migrating));
  const during = creates(r.load.between(r.migrating, r.migrated));
  ctx.log(
    `the migrations run again by openDatabase under load: ${((r.migrated - r.migrating) / 1000).toFixed(1)} s in all; ` +
      `meanwhile ${say(during)}; the 10 s before: ${say(before)}`,
  );
  for (const f of r.figures) {
    // ROW EXCLUSIVE and weaker (a write's, a read's, a function's validation) block no read or write.
    const locks = Object.entries(f.locks)
      .filter(([, mode]) => strength(mode) > strength("RowExclusiveLock"))
      .map(([rel, mode]) => `${rel} ${mode}`);
    ctx.log(
      `  ${`${f.schema} ${f.migration}`.padEnd(46)} ${f.duration_ms.toFixed(1).padStart(8)} ms (+${f.held_until_commit_ms.toFixed(1)} ms to the commit); ` +
        `locks above ROW EXCLUSIVE: ${locks.join(", ") || "none"}; overlapping: ${say(f.creates)}; ` +
        `sessions waiting on its tables: ${f.waiting_sessions} (longest seen ${f.longest_wait_ms.toFixed(0)} ms)` +
        (f.analytics_lag_max_ms !== undefined
          ? `; its creates in analytics at most ${late(f.analytics_lag_max_ms)} after their reply`
          : ""),
    );
  }
  const slow = r.load.records.filter((c) => c.ms > 1000 && c.end >= r.migrating && c.start <= r.migrated);
  for (const c of slow) {
    const w = r.windows.find((x) => c.start <= x.committed && c.end >= x.start);
    ctx.log(
      `  create over 1 s: ${c.ms.toFixed(0)} ms at +${((c.start - r.migrating) / 1000).toFixed(2)} s${w ? `, during ${w.schema} ${w.name}` : ""}`,
    );
  }
  const beforeLag = lagMs(r.load, r.probe, r.started, r.migrating);
  ctx.log(`  creates in analytics at most ${late(beforeLag)} after their reply in the 10 s before`);
  ctx.log(`migrations under load: ${JSON.stringify({ before, during, migrations: r.figures })}`);
}
