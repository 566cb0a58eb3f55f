// How the history benchmark's build (history-build.ts) loads millions of rows fast: the bulk
// tables' indexes are dropped before the load and built again after it, as a restore does, on
// two connections; and the disk is checked before anything is written.
//
// Inserting row by row into tables that already carry their indexes updated every index at every
// row, in random places for the uuid keys (the primary keys, the inboxes' keys, the hashes): once
// those indexes outgrew the cache each row read and wrote index pages from disk, and the
// 1,000,000-operation build took 18 minutes. Built after the load, each index is one sorted pass.
//
// Safe here because nothing is served while the history is built: the benchmark measured the
// empty database before, and measures the history after, this build. The services run idle
// meanwhile; what their periodic jobs read is kept (`KEPT`), and every index is back, valid and
// with the definition it had (checked, and the build fails if not) before the history phase
// is timed.
import { statfsSync } from "node:fs";
import path from "node:path";
import pg from "pg";

/** The tables the build fills by the hundred thousand (per million operations). */
export const BULK_TABLES = [
  "dispatch.operations",
  "dispatch.proofs",
  "evidence.messages",
  "fleet.audit_log",
  "messaging.contacts",
  "analytics.operations",
  "analytics.messages",
  ...["dispatch", "evidence", "fleet", "intake", "messaging", "analytics"].flatMap((s) => [
    `${s}.inbox`,
    `${s}.outbox`,
  ]),
];

/**
 * Kept through the load: the partial indexes of in-flight states, which no history row enters
 * (so they cost the load nothing), read by the jobs the idle services still run: the evidence
 * sweep every 30 s (awaiting, running), the handsets' queue, evidence's re-drive every 5 s
 * (pending), the outbox relays and their purge (unpublished, `seq`). Dropped, each pass of
 * those jobs would read the whole table being loaded.
 */
const KEPT = new Set([
  "dispatch.operations_awaiting_evidence",
  "dispatch.operations_one_running_per_device",
  "dispatch.operations_queued_by_device",
  "evidence.messages_redrive",
  ...["dispatch", "evidence", "fleet", "intake", "messaging", "analytics"].flatMap((s) => [
    `${s}.outbox_pkey`,
    `${s}.outbox_unpublished`,
  ]),
]);

const SCHEMAS = ["dispatch", "evidence", "fleet", "intake", "analytics", "messaging"];

/** An index dropped for the load, and how to build it again. */
export interface DroppedIndex {
  schema: string;
  table: string;
  name: string;
  /** pg_get_indexdef: the index exactly as it was. */
  indexdef: string;
  /** The primary key or unique constraint it backed (attached again to the rebuilt index). */
  constraint?: { type: "p" | "u"; def: string };
  /** Its comment, put back. */
  comment?: string;
  bytes: number;
}

/**
 * Every index of the six schemas with what defines it: its definition, the constraint it backs,
 * its comment, whether it is valid and ready. Compared before and after the load.
 */
export async function indexCatalogue(db: pg.Client): Promise<Map<string, string>> {
  const r = await db.query(
    `select n.nspname || '.' || i.relname as name,
       concat_ws(' | ', pg_get_indexdef(x.indexrelid), c.contype::text || ' ' || pg_get_constraintdef(c.oid),
         obj_description(x.indexrelid, 'pg_class'), case when x.indisclustered then 'clustered' end,
         case when x.indisreplident then 'replica identity' end,
         case when not (x.indisvalid and x.indisready and x.indislive) then 'NOT VALID' end) as def
     from pg_index x join pg_class i on i.oid = x.indexrelid join pg_namespace n on n.oid = i.relnamespace
     left join pg_constraint c on c.conindid = x.indexrelid and c.contype in ('p', 'u', 'x')
     where n.nspname = any($1)`,
    [SCHEMAS],
  );
  return new Map(r.rows.map((row: { name: string; def: string }) => [row.name, row.def]));
}

/** Throws, naming each index, unless `after` holds exactly the indexes of `before`, all valid. */
export function sameIndexes(before: Map<string, string>, after: Map<string, string>): void {
  const problems: string[] = [];
  for (const [name, def] of before) {
    const now = after.get(name);
    if (now === undefined) problems.push(`missing: ${name} (${def})`);
    else if (now !== def) problems.push(`changed: ${name}: was ${def}, now ${now}`);
  }
  for (const [name, def] of after) if (!before.has(name)) problems.push(`new: ${name} (${def})`);
  for (const [name, def] of after) if (def.includes("NOT VALID")) problems.push(`not valid: ${name}`);
  if (problems.length) throw new Error(`the history's indexes differ from the schema's:\n  ${problems.join("\n  ")}`);
}

/**
 * Drops the secondary indexes, primary keys and unique constraints of BULK_TABLES, but those in
 * KEPT and those a foreign key references (none of the bulk tables' today), and returns them.
 */
export async function dropBulkIndexes(db: pg.Client): Promise<DroppedIndex[]> {
  const r = await db.query(
    `select n.nspname as schema, t.relname as table, i.relname as name, pg_get_indexdef(x.indexrelid) as indexdef,
       c.contype, pg_get_constraintdef(c.oid) as condef, obj_description(x.indexrelid, 'pg_class') as comment,
       pg_relation_size(t.oid) as bytes
     from pg_index x join pg_class i on i.oid = x.indexrelid join pg_class t on t.oid = x.indrelid
     join pg_namespace n on n.oid = t.relnamespace
     left join pg_constraint c on c.conindid = x.indexrelid and c.contype in ('p', 'u', 'x')
     where n.nspname || '.' || t.relname = any($1) and not (n.nspname || '.' || i.relname = any($2))
       and coalesce(c.contype, 'p') <> 'x'
       and not exists (select 1 from pg_constraint f where f.contype = 'f' and f.conindid = x.indexrelid)
     order by n.nspname, t.relname, i.relname`,
    [BULK_TABLES, [...KEPT]],
  );
  const dropped: DroppedIndex[] = r.rows.map((row) => ({
    schema: row.schema,
    table: row.table,
    name: row.name,
    indexdef: row.indexdef,
    constraint: row.contype ? { type: row.contype, def: row.condef } : undefined,
    comment: row.comment ?? undefined,
    bytes: Number(row.bytes),
  }));
  for (const d of dropped) {
    if (d.constraint) await db.query(`alter table "${d.schema}"."${d.table}" drop constraint "${d.name}"`);
    else await db.query(`drop index "${d.schema}"."${d.name}"`);
  }
  return dropped;
}

/**
 * How full the leaves of each bulk btree index are when the rows go in one at a time in the
 * build's order, as they did before and as they do in production: random keys (uuids, hashes)
 * split their pages to about 70 %, keys that arrive at one end of a descending index or
 * interleaved by SIM or device to about 50 %. Measured: 90 % (a fresh build's fill) times each
 * index's size built after the load over its size grown row by row, in one 300,000-operation
 * history written both ways. A fresh build packs every leaf to 90 %: the history's indexes would
 * be a third smaller than production's and read fewer pages. So each is built at its grown
 * fillfactor, then reset (its definition is the schema's again, and later inserts fill its pages
 * as usual). An index missing here is built packed. GIN indexes take no fillfactor: the search
 * index of the operations is 30 % smaller built after the load than grown.
 */
export const GROWN_FILL: Record<string, number> = {
  "dispatch.operations_agent_created": 51,
  "dispatch.operations_created": 50,
  "dispatch.operations_device_finished": 50,
  "dispatch.operations_device_updated": 50,
  "dispatch.operations_evidence_message": 69,
  "dispatch.operations_pkey": 73,
  "dispatch.operations_request_id": 53,
  "dispatch.operations_sim_changed": 50,
  "dispatch.operations_sim_created": 51,
  // Not measured (it came after the measurement): a SIM's references, which arrive in order
  // within each SIM's range, as operations_sim_created's keys do.
  "dispatch.operations_sim_operator_ref": 51,
  "dispatch.operations_sim_finished": 51,
  "dispatch.operations_sim_holding": 68,
  "dispatch.proofs_one_confirmation_per_operation": 71,
  "dispatch.proofs_pkey": 69,
  "dispatch.outbox_id_key": 73,
  "evidence.messages_movements": 50,
  "evidence.messages_one_per_hash": 69,
  "evidence.messages_one_proof_per_operation": 71,
  "evidence.messages_pkey": 72,
  "evidence.messages_proof_ref": 53,
  "evidence.messages_received": 59,
  "evidence.messages_sim_received": 60,
  "evidence.messages_sim_ref": 53,
  "evidence.messages_unlinked": 51,
  "evidence.outbox_id_key": 67,
  "messaging.contacts_live_email": 52,
  "messaging.contacts_pkey": 75,
  "messaging.contacts_updated": 64,
  "analytics.operations_agent_day": 76,
  "analytics.operations_agent_sim": 74,
  "analytics.operations_confirmed_amount": 69,
  "analytics.operations_day": 74,
  "analytics.operations_pkey": 74,
  "analytics.operations_proof_delay": 88,
  "analytics.messages_day": 77,
  "analytics.messages_sim_day": 61,
  "analytics.messages_pkey": 72,
  "analytics.inbox_pkey": 69,
  "fleet.inbox_pkey": 70,
  "intake.inbox_pkey": 70,
  "messaging.inbox_pkey": 70,
};

/** `indexdef` built at `fill` % (before its predicate, if partial). */
export function withFillfactor(indexdef: string, fill: number): string {
  const at = indexdef.indexOf(" WHERE ");
  const clause = ` WITH (fillfactor = ${fill})`;
  return at < 0 ? indexdef + clause : indexdef.slice(0, at) + clause + indexdef.slice(at);
}

/** A connection that builds indexes: its sorts in memory, two workers each (btree builds use them). */
export const INDEX_BUILD_SETTINGS = [`set maintenance_work_mem = '1GB'`, `set max_parallel_maintenance_workers = 2`];

/**
 * Builds the dropped indexes again, each table's as soon as the build says it is loaded
 * (`loaded`), while the other tables are still being written: the GIN and largest first, on as
 * many connections as run `lane` (each takes the next ready index when done). A primary key or
 * unique constraint is built as its index, then attached (`using index`, a moment's lock), so
 * that two builds on one table never wait for each other.
 */
export class IndexRebuild {
  private readonly ready: DroppedIndex[] = [];
  private wake: (() => void)[] = [];
  private closed = false;
  readonly times: { name: string; s: number }[] = [];

  constructor(private pending: DroppedIndex[]) {}

  /** `schema.table` is loaded (nothing more is written into it): its indexes can be built. */
  loaded(table: string): void {
    const weight = (d: DroppedIndex) => d.bytes * (d.indexdef.includes(" USING gin ") ? 4 : 1);
    this.ready.push(...this.pending.filter((d) => `${d.schema}.${d.table}` === table));
    this.ready.sort((x, y) => weight(y) - weight(x));
    this.pending = this.pending.filter((d) => `${d.schema}.${d.table}` !== table);
    for (const w of this.wake.splice(0)) w();
  }

  /** Every table is loaded: the lanes build what is left and end. */
  close(): void {
    for (const d of [...this.pending]) this.loaded(`${d.schema}.${d.table}`);
    this.closed = true;
    for (const w of this.wake.splice(0)) w();
  }

  /** Builds ready indexes on `db` until closed and none is left. */
  async lane(db: pg.Client): Promise<void> {
    for (const s of INDEX_BUILD_SETTINGS) await db.query(s);
    for (;;) {
      const d = this.ready.shift();
      if (d) await this.build(db, d);
      else if (this.closed) return;
      else await new Promise<void>((res) => this.wake.push(res));
    }
  }

  private async build(db: pg.Client, d: DroppedIndex): Promise<void> {
    const t = performance.now();
    const fill = GROWN_FILL[`${d.schema}.${d.name}`];
    await db.query(fill ? withFillfactor(d.indexdef, fill) : d.indexdef);
    if (fill) await db.query(`alter index "${d.schema}"."${d.name}" reset (fillfactor)`);
    if (d.constraint) {
      const kind = d.constraint.type === "p" ? "primary key" : "unique";
      await db.query(
        `alter table "${d.schema}"."${d.table}" add constraint "${d.name}" ${kind} using index "${d.name}"`,
      );
    }
    if (d.comment !== undefined)
      await db.query(`comment on index "${d.schema}"."${d.name}" is ${pg.escapeLiteral(d.comment)}`);
    this.times.push({ name: `${d.schema}.${d.name}`, s: (performance.now() - t) / 1000 });
  }
}

/** The server's WAL position and checkpoints so far (the server's: other databases' included). */
export async function serverWrites(db: pg.Client): Promise<{ lsn: string; checkpoints: number }> {
  const r = await db.query(
    `select pg_current_wal_lsn()::text as lsn, checkpoints_timed + checkpoints_req as checkpoints from pg_stat_bgwriter`,
  );
  return { lsn: r.rows[0].lsn, checkpoints: Number(r.rows[0].checkpoints) };
}

/**
 * What the server wrote to its WAL since `from`, and its checkpoints (max_wal_size 1 GB here: one
 * every half gigabyte or so of WAL, each writing the dirty shared buffers; a session cannot raise
 * it), for the build's log.
 */
export async function writtenSince(db: pg.Client, from: { lsn: string; checkpoints: number }): Promise<string> {
  const now = await serverWrites(db);
  const bytes = Number((await db.query(`select pg_wal_lsn_diff($1, $2) as n`, [now.lsn, from.lsn])).rows[0].n);
  return `${(bytes / 1024 ** 3).toFixed(1)} GB of WAL and ${now.checkpoints - from.checkpoints} checkpoints on the server meanwhile (all databases)`;
}

/**
 * The database's bytes an operation, with as many messages and all they leave: 5.16 kB measured
 * at 1,000,000 operations (5,155,356,007 bytes, 2026-11-29, with the indexes the history's fixes
 * added). decisions/history.md's "Size per year" had 4.45 kB, measured before those indexes and
 * in MiB per thousand operations (4.66 kB in bytes): too low for a guard.
 */
export const BYTES_PER_OPERATION = 5200;
/** A message beyond one an operation: its row and indexes, analytics' copy, two inbox rows. */
export const BYTES_PER_EXTRA_MESSAGE = 1700;
/**
 * The unlogged copies of the messages the build writes while chaining their balances
 * (history-build.ts), beside everything else until the move: two at the most (4,981 MB each for
 * 10,000,000 messages), the unchained and the chained one, then the chained one and the sort of
 * the move in time order.
 */
export const BYTES_PER_STAGED_MESSAGE = 1040;
/** What the disk must keep free after the build. */
export const FREE_FLOOR_BYTES = 10 * 1024 ** 3;

export function estimateHistoryBytes(operations: number, messages: number): number {
  return operations * BYTES_PER_OPERATION + Math.max(0, messages - operations) * BYTES_PER_EXTRA_MESSAGE;
}

/**
 * Free bytes on the disk of PostgreSQL's data directory, from the nearest directory of its path
 * this process can read (the data directory itself is PostgreSQL's alone); undefined when the
 * server is not on this machine.
 */
export async function serverFreeBytes(admin: pg.Client, host: string): Promise<number | undefined> {
  if (!["127.0.0.1", "localhost", "::1", "[::1]", ""].includes(host)) return undefined;
  const dir = (await admin.query(`show data_directory`)).rows[0].data_directory as string;
  for (let at = dir; ; at = path.dirname(at)) {
    try {
      const s = statfsSync(at);
      return s.bavail * s.bsize;
    } catch (err) {
      if (at === path.dirname(at)) throw err;
    }
  }
}

/** Refuses (throws) a build whose estimated size would leave less than FREE_FLOOR_BYTES free. */
export function checkDiskRoom(operations: number, messages: number, freeBytes: number | undefined): string {
  const gb = (b: number) => `${(b / 1024 ** 3).toFixed(1)} GB`;
  const need = estimateHistoryBytes(operations, messages);
  const staged = messages * BYTES_PER_STAGED_MESSAGE;
  if (freeBytes === undefined)
    return `history of about ${gb(need)} estimated; the server's free space not checked (not on this machine)`;
  const left = freeBytes - need - staged;
  if (left < FREE_FLOOR_BYTES)
    throw new Error(
      `refused: the history of ${operations.toLocaleString("en")} operations and ${messages.toLocaleString("en")} messages needs about ${gb(need)} ` +
        `(${BYTES_PER_OPERATION / 1000} kB an operation, as measured at 1,000,000), and ${gb(staged)} more while its balances are chained; ` +
        `PostgreSQL's disk has ${gb(freeBytes)} free, which would leave ${gb(left)}, under the ${gb(FREE_FLOOR_BYTES)} floor. ` +
        `Free space or build a smaller history.`,
    );
  return `history of about ${gb(need)} estimated (${gb(staged)} more while its balances are chained), ${gb(freeBytes)} free on PostgreSQL's disk (${gb(left)} left at the most)`;
}
