import { randomUUID } from "node:crypto";
import { fromBinary, toBinary, type DescMessage, type MessageShape } from "@bufbuild/protobuf";
import type { EventBus, BusMessage, Subscription } from "./bus.ts";
import { currentContext, runWithContext, correlationIdFrom } from "./context.ts";
import pg from "pg";
import {
  deferInsert,
  insertRows,
  takeDeferred,
  type ConcurrentIndex,
  type Database,
  type EntityManager,
} from "./db.ts";
import type { Logger } from "./log.ts";
import { inSpan, openSpan, SpanKind, traceHeaders } from "./tracing.ts";
import { outboxBacklog, outboxOldestAge } from "./metrics.ts";
import { PeriodicJob } from "./periodic.ts";

/** Topics of the platform; every event is a protobuf message defined in proto/. */
export const Topics = {
  fleet: "fleet",
  operations: "operations",
  messages: "messages",
  transactions: "transactions",
  alerts: "alerts",
  contacts: "contacts",
} as const;

export interface EventMeta {
  eventId: string;
  type: string;
  occurredAt: Date;
  correlationId: string;
}

/** SQL of the outbox and inbox tables, created by each service's first migration. */
export function outboxInboxSql(schema: string): string[] {
  return [
    `create table "${schema}".outbox (
      seq bigserial primary key,
      id uuid not null unique,
      topic text not null,
      key text not null,
      type text not null,
      payload bytea not null,
      headers jsonb not null,
      created_at timestamptz not null default now(),
      published_at timestamptz
    )`,
    `create index outbox_unpublished on "${schema}".outbox (seq) where published_at is null`,
    `create table "${schema}".inbox (
      event_id uuid not null,
      consumer text not null,
      received_at timestamptz not null default now(),
      primary key (consumer, event_id)
    )`,
  ];
}

/**
 * Autovacuum of a service's outbox by count (a migration of each service that publishes;
 * SHARE UPDATE EXCLUSIVE): every row is updated once (published) and deleted after
 * OUTBOX_RETENTION_H, a steady churn that a share of the table's size would let pile up
 * (docs/decisions/history.md, "Autovacuum").
 */
export function outboxAutovacuumSql(schema: string): string[] {
  return [
    `alter table "${schema}".outbox set (autovacuum_vacuum_scale_factor = 0, autovacuum_vacuum_threshold = 10000)`,
  ];
}

/** What `outboxAutovacuumSql` sets, reset to the server's defaults: a migration's `down()`. */
export function outboxAutovacuumResetSql(schema: string): string[] {
  return [`alter table "${schema}".outbox reset (autovacuum_vacuum_scale_factor, autovacuum_vacuum_threshold)`];
}

/** The PostgreSQL channel a service's outbox announces its commits on. */
export const outboxChannel = (schema: string): string => `${schema}_outbox`;

/**
 * SQL of the statement trigger that NOTIFYs `outboxChannel(schema)` whenever rows go into
 * the outbox: PostgreSQL delivers it at commit (one per transaction, identical notifications
 * folded), so every replica's relay hears of every committed event, whichever process wrote
 * it, and none polls an empty outbox (see `OutboxRelay`). A migration of each service.
 */
export function outboxNotifySql(schema: string): string[] {
  return [
    `create function "${schema}".outbox_notify() returns trigger language plpgsql as $$
     begin perform pg_notify('${outboxChannel(schema)}', ''); return null; end $$`,
    `create trigger outbox_notify after insert on "${schema}".outbox
     for each statement execute function "${schema}".outbox_notify()`,
  ];
}

/** An event to write to a service's outbox. */
export interface OutboxEvent<S extends DescMessage = DescMessage> {
  topic: string;
  key: string;
  schema: S;
  message: MessageShape<S>;
}

/** Columns of an outbox row, in the order of `outboxRow`'s values. */
export const OUTBOX_COLUMNS = "id, topic, key, type, payload, headers";

/**
 * An insert of `n` outbox rows of `schemaName` (their values `outboxRow`'s, in order) that a
 * statement can carry beside the change the events report, written only `where` holds
 * (e.g. `exists (select 1 from changed)`, a CTE of that statement).
 */
export function outboxInsertSql(schemaName: string, n: number, where = "true"): string {
  const row = "(?::uuid, ?::text, ?::text, ?::text, ?::bytea, ?::jsonb)";
  return `insert into "${schemaName}".outbox (${OUTBOX_COLUMNS})
    select v.* from (values ${Array.from({ length: n }, () => row).join(", ")}) as v(${OUTBOX_COLUMNS}) where ${where}`;
}

/**
 * The values of an event's outbox row (`OUTBOX_COLUMNS`), for a statement that writes it
 * together with the state change it reports (see `enqueueEvent`).
 */
export function outboxRow<S extends DescMessage>(event: OutboxEvent<S>): { id: string; values: unknown[] } {
  const id = randomUUID();
  const headers = {
    "event-id": id,
    "event-type": event.schema.typeName,
    "occurred-at": new Date().toISOString(),
    "correlation-id": currentContext()?.correlationId ?? id,
    ...traceHeaders(),
  };
  return {
    id,
    values: [
      id,
      event.topic,
      event.key,
      event.schema.typeName,
      Buffer.from(toBinary(event.schema, event.message)),
      JSON.stringify(headers),
    ],
  };
}

/**
 * The values of the outbox rows a statement writes beside its change (`outboxInsertSql`,
 * `n` = the result's length): first the rows this transaction deferred for the same outbox
 * so far (`enqueueEvent`; taken, so they are not written again at commit), then `events`'.
 * The outbox's `seq` then follows the order the transaction produced its events in, as
 * when every row waits for the commit.
 */
export function outboxValuesNow(em: EntityManager, schemaName: string, events: readonly OutboxEvent[]): unknown[][] {
  return [...takeDeferred(em, `"${schemaName}".outbox`), ...events.map((e) => outboxRow(e).values)];
}

/**
 * Writes an event to the outbox inside the caller's transaction: it is published if and
 * only if the state change commits.
 */
export async function enqueueEvent<S extends DescMessage>(
  em: EntityManager,
  schemaName: string,
  event: OutboxEvent<S>,
): Promise<string> {
  const row = outboxRow(event);
  const table = `"${schemaName}".outbox`;
  // In a transaction, the outbox rows go in one insert before commit (deferInsert).
  if (!deferInsert(em, table, OUTBOX_COLUMNS, row.values)) await insertRows(em, table, OUTBOX_COLUMNS, [row.values]);
  return row.id;
}

export interface RelayOptions {
  /**
   * The pass that runs whatever was heard, while the relay LISTENs (default 5 s): it only
   * catches a notification lost with its connection. Rows are found at once through the
   * NOTIFY their commit sends (`outboxNotifySql`) and the committing process's `kick()`.
   */
  intervalMs?: number;
  /** The pass's interval while the LISTEN connection is down (default 250 ms). */
  deafIntervalMs?: number;
  batchSize?: number;
  /**
   * How long a kick waits before its pass (default 200 ms), so the commits of that moment go
   * out in one batch: a pass is a transaction, and a relay may run one per `gatherMs` (at
   * 50 ms, one a transfer per relay at 20 transfers a second; at 200 ms, a quarter of that).
   */
  gatherMs?: number;
  /**
   * Published rows older than this are deleted (default: env OUTBOX_RETENTION_H, else 168
   * hours; 0 keeps them). Nothing reads a published row again: Kafka holds the events.
   * Rows never published are kept whatever their age.
   */
  retentionMs?: number;
  /** How often the relay deletes what the retention lets go (default 10 minutes). */
  purgeEveryMs?: number;
  /**
   * Inbox rows (event ids consumers applied) older than this are deleted (default: env
   * INBOX_RETENTION_H, else 0: kept). Off by default: the topics keep every event, and a
   * consumer group whose offsets are lost starts again from the earliest, where only the inbox
   * makes the replay a no-op. Safe to set above the longest time a group's offsets can be lost
   * for (docs/decisions/history.md, "Outbox and inbox").
   */
  inboxRetentionMs?: number;
}

/**
 * The index the inbox purge finds old rows by: a BRIN range index on `received_at`, which the
 * inbox fills in time order, so the index is a few pages and costs its writes nothing (a
 * btree would add an entry to every event every consumer applies). Each service's migration
 * declares it (ConcurrentIndex).
 */
export function inboxPurgeIndex(schema: string): ConcurrentIndex {
  return { name: "inbox_received_brin", on: `"${schema}".inbox using brin (received_at)` };
}

/**
 * Deletes the inbox rows received more than `retentionMs` ago, a batch at a time; returns how
 * many it deleted.
 */
export async function purgeInbox(db: Database, retentionMs: number, batch = 10_000): Promise<number> {
  const table = `"${db.schema}".inbox`;
  let removed = 0;
  for (;;) {
    const [r] = (await db.em().execute(
      `with gone as (delete from ${table} where ctid = any(array(
                       select ctid from ${table} where received_at < now() - make_interval(secs => ?) limit ?))
                     returning 1)
       select (select count(*) from gone)::int as removed`,
      [retentionMs / 1000, batch],
    )) as { removed: number }[];
    removed += r!.removed;
    if (r!.removed < batch) return removed;
  }
}

/** Rows looked at, oldest first, per purge statement. */
const PURGE_BATCH = 1000;

/**
 * Publishes committed outbox rows in order, then marks them. A crash between publish and
 * mark publishes the rows again: consumers dedupe on event id, so nothing is lost and
 * nothing takes effect twice.
 *
 * A pass runs when rows were committed: kicked by the committing process (`kick()`) and by
 * the outbox's NOTIFY, which every replica LISTENs to on a connection of its own; the timer
 * is a safety net only (every `intervalMs`, or `deafIntervalMs` while not listening), so an
 * idle service runs no transaction for its outbox.
 */
export class OutboxRelay {
  private timer?: NodeJS.Timeout;
  private listener?: pg.Client;
  private listening = false;
  private reconnect?: NodeJS.Timeout;
  private gathering?: NodeJS.Timeout;
  private running?: Promise<void>;
  private stopped = false;
  private again = false;
  private readonly batchSize: number;
  private readonly retentionMs: number;
  private readonly inboxRetentionMs: number;
  private readonly purging: PeriodicJob;

  constructor(
    private readonly db: Database,
    private readonly bus: EventBus,
    private readonly log: Logger,
    private readonly options: RelayOptions = {},
  ) {
    this.batchSize = options.batchSize ?? 200;
    this.retentionMs = options.retentionMs ?? Number(process.env.OUTBOX_RETENTION_H ?? 168) * 3_600_000;
    this.inboxRetentionMs = options.inboxRetentionMs ?? Number(process.env.INBOX_RETENTION_H ?? 0) * 3_600_000;
    this.purging = new PeriodicJob(
      "outbox purge",
      options.purgeEveryMs ?? 600_000,
      async () => {
        if (this.retentionMs > 0) await this.purge();
        if (this.inboxRetentionMs > 0 && !this.stopped) await purgeInbox(this.db, this.inboxRetentionMs);
      },
      log,
    );
  }

  start(): void {
    this.stopped = false;
    this.schedule();
    void this.listen();
    if (this.retentionMs > 0 || this.inboxRetentionMs > 0) this.purging.start();
    const service = this.db.schema;
    const read = async () =>
      (await this.db.em().execute(
        `select count(*)::int as backlog,
                coalesce(extract(epoch from now() - min(created_at)), 0)::float8 as age
           from "${service}".outbox where published_at is null`,
      )) as { backlog: number; age: number }[];
    outboxBacklog.add(service, async () => (await read()).map((r) => ({ labels: { service }, value: r.backlog })));
    outboxOldestAge.add(service, async () => (await read()).map((r) => ({ labels: { service }, value: r.age })));
  }

  /**
   * LISTENs to the outbox's channel; a pass follows (rows committed while deaf). A lost
   * connection is retried every second; meanwhile the timer polls at `deafIntervalMs`.
   */
  private async listen(): Promise<void> {
    if (this.stopped || !this.db.url) return;
    const client = new pg.Client({ connectionString: this.db.url, application_name: `${this.db.schema} outbox relay` });
    const lost = (err?: unknown) => {
      if (this.listener !== client) return;
      this.listener = undefined;
      this.listening = false;
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      if (this.stopped) return;
      this.log.warn({ err }, "outbox relay: LISTEN connection lost; polling until it is back");
      this.retryListen();
    };
    client.on("notification", () => this.kick());
    client.on("error", lost);
    client.on("end", () => lost());
    this.listener = client;
    try {
      await client.connect();
      await client.query(`LISTEN "${outboxChannel(this.db.schema)}"`);
    } catch (err) {
      lost(err);
      return;
    }
    if (this.listener !== client) {
      await client.end().catch(() => undefined); // stopped meanwhile
      return;
    }
    this.listening = true;
    this.kick();
  }

  private retryListen(): void {
    if (this.stopped || this.reconnect) return;
    this.reconnect = setTimeout(() => {
      this.reconnect = undefined;
      void this.listen();
    }, 1000);
    this.reconnect.unref();
  }

  /** Asks for a pass soon (after a commit, within `gatherMs`) instead of at the interval. */
  kick(): void {
    if (this.stopped || this.gathering) return;
    this.gathering = setTimeout(() => {
      this.gathering = undefined;
      this.pass();
    }, this.options.gatherMs ?? 200);
  }

  /** A pass now, or one more after the pass running. */
  private pass(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    this.running = this.passes().finally(() => {
      this.running = undefined;
    });
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => {
      this.pass();
      this.schedule();
    }, this.interval());
    this.timer.unref();
  }

  private interval(): number {
    return this.listening ? (this.options.intervalMs ?? 5000) : (this.options.deafIntervalMs ?? 250);
  }

  private async passes(): Promise<void> {
    do {
      this.again = false;
      try {
        // A batch short of the limit reached the end of the outbox: rows committed since
        // then come with their own kick (or the timer), so no empty pass is needed to see it.
        while ((await this.publishBatch()) >= this.batchSize && !this.stopped);
      } catch (err) {
        this.log.warn({ err }, "outbox relay pass failed; will retry");
        return;
      }
    } while (this.again && !this.stopped);
  }

  /** One batch: lock, publish, mark, in one transaction. Returns how many it published. */
  async publishBatch(): Promise<number> {
    const schema = this.db.schema;
    return this.db.tx(async (em) => {
      const batch = (await em.execute(
        `select id, topic, key, payload, headers from "${schema}".outbox
          where published_at is null order by seq limit ? for update skip locked`,
        [this.batchSize],
      )) as { id: string; topic: string; key: string; payload: Buffer; headers: Record<string, string> }[];
      if (!batch.length) return 0;
      await this.bus.publish(
        batch.map((r): BusMessage => ({
          topic: r.topic,
          key: r.key,
          value: new Uint8Array(r.payload),
          headers: r.headers,
        })),
      );
      // The mark need not wait for the disk (set_config: SET LOCAL in the same statement):
      // if a crash loses it, the rows are published again, which consumers already
      // tolerate (they dedupe on event id).
      await em.execute(
        `with async_commit as (select set_config('synchronous_commit', 'off', true))
         update "${schema}".outbox set published_at = now()
          where id in (select jsonb_array_elements_text(?::jsonb)::uuid) and exists (select 1 from async_commit)`,
        [JSON.stringify(batch.map((r) => r.id))],
      );
      return batch.length;
    });
  }

  /**
   * Deletes the published rows older than the retention, oldest first, a batch at a time,
   * until the oldest rows are younger than the retention or never published. Returns how
   * many it deleted.
   */
  async purge(): Promise<number> {
    const table = `"${this.db.schema}".outbox`;
    const seconds = this.retentionMs / 1000;
    let removed = 0;
    for (;;) {
      const [r] = (await this.db.em().execute(
        `with head as (select seq, created_at, published_at from ${table} order by seq limit ?),
              gone as (delete from ${table} o using head h
                        where o.seq = h.seq and h.published_at is not null
                          and h.created_at < now() - make_interval(secs => ?)
                        returning 1)
         select (select count(*) from gone)::int as removed`,
        [PURGE_BATCH, seconds],
      )) as { removed: number }[];
      removed += r!.removed;
      if (r!.removed === 0 || this.stopped) return removed;
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    outboxBacklog.remove(this.db.schema);
    outboxOldestAge.remove(this.db.schema);
    if (this.timer) clearTimeout(this.timer);
    if (this.gathering) clearTimeout(this.gathering);
    if (this.reconnect) clearTimeout(this.reconnect);
    this.gathering = undefined;
    const listener = this.listener;
    this.listener = undefined;
    this.listening = false;
    await listener?.end().catch(() => undefined);
    await Promise.all([this.running, this.purging.stop()]);
  }
}

export interface EventHandler<S extends DescMessage> {
  schema: S;
  handle(em: EntityManager, event: MessageShape<S>, meta: EventMeta): Promise<void>;
  /**
   * Whether the event can have an effect here, from the event alone (a pure function: a
   * redelivery decides the same). An event it refuses is skipped without a transaction or
   * an inbox row: it would change nothing, so there is nothing to apply once.
   */
  applies?(event: MessageShape<S>): boolean;
}

export const on = <S extends DescMessage>(
  schema: S,
  handle: (em: EntityManager, event: MessageShape<S>, meta: EventMeta) => Promise<void>,
  applies?: (event: MessageShape<S>) => boolean,
): EventHandler<DescMessage> => ({ schema, handle, applies }) as unknown as EventHandler<DescMessage>;

/**
 * Records the event id in the inbox and applies the effect in one transaction;
 * a redelivered event finds its id and changes nothing. Returns whether it applied.
 */
export async function consumeOnce(
  db: Database,
  consumer: string,
  eventId: string,
  effect: (em: EntityManager) => Promise<void>,
): Promise<boolean> {
  return db.tx(async (em) => {
    const inserted = (await em.execute(
      `insert into "${db.schema}".inbox (event_id, consumer) values (?, ?) on conflict do nothing returning event_id`,
      [eventId, consumer],
    )) as unknown[];
    if (!inserted.length) return false;
    await effect(em);
    return true;
  });
}

export interface ConsumerOptions {
  bus: EventBus;
  db: Database;
  /** Consumer group, e.g. `analytics.fleet`; also the inbox's consumer name. */
  group: string;
  topics: string[];
  handlers: EventHandler<DescMessage>[];
  log: Logger;
  /**
   * Applies what the bus hands over at once (`subscribeBatches`) in one transaction, with
   * every event's inbox row: for handlers that only write this service's own tables (a read
   * model). One failing event rolls the whole batch back, and the bus delivers it again.
   */
  batched?: boolean;
}

/** An event a consumer's handler applies: decoded, with its metadata. */
interface Decoded {
  handler: EventHandler<DescMessage>;
  event: MessageShape<DescMessage>;
  meta: EventMeta;
}

/**
 * Decodes a message for the handler of its type; undefined when no handler takes its type,
 * or when the handler says from the event alone that it cannot apply (`applies`).
 */
function decode(byType: Map<string, EventHandler<DescMessage>>, m: BusMessage): Decoded | undefined {
  const type = m.headers["event-type"];
  const handler = byType.get(type);
  if (!handler) return undefined;
  const meta: EventMeta = {
    eventId: m.headers["event-id"],
    type,
    occurredAt: new Date(m.headers["occurred-at"]),
    correlationId: correlationIdFrom(m.headers["correlation-id"]),
  };
  const event = fromBinary(handler.schema, m.value);
  if (handler.applies && !handler.applies(event)) return undefined;
  return { handler, event, meta };
}

/**
 * Applies a batch of events in one transaction: their inbox rows in one insert, then the
 * effect of each event whose row was new, in order. A redelivered event (already in the
 * inbox, or twice in the batch) changes nothing. Returns how many applied.
 */
export async function consumeBatchOnce(db: Database, consumer: string, events: Decoded[]): Promise<number> {
  return db.tx(async (em) => {
    const inserted = (await em.execute(
      `insert into "${db.schema}".inbox (event_id, consumer)
       select e::uuid, ?::text from jsonb_array_elements_text(?::jsonb) as e on conflict do nothing returning event_id`,
      [consumer, JSON.stringify(events.map((e) => e.meta.eventId))],
    )) as { event_id: string }[];
    const fresh = new Set(inserted.map((r) => r.event_id));
    let applied = 0;
    for (const e of events) {
      if (!fresh.delete(e.meta.eventId)) continue;
      await runWithContext({ correlationId: e.meta.correlationId }, () => e.handler.handle(em, e.event, e.meta));
      applied++;
    }
    return applied;
  });
}

/**
 * Runs a consumer's transaction again at once (three tries in all) when a deadlock or a
 * serialization failure rolled it back whole (two replicas on the same rows while a group
 * rebalances), before the redelivery the bus would do. The inbox rows were rolled back with it.
 */
async function againIfRolledBack<T>(tx: () => Promise<T>, log: Logger, what: Record<string, unknown>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await tx();
    } catch (err) {
      const code = (err as { code?: unknown }).code;
      if (attempt >= 3 || (code !== "40P01" && code !== "40001")) throw err;
      log.warn({ ...what, attempt, code }, "event rolled back; applying again");
    }
  }
}

/** Subscribes a service's handlers: decode by event type, apply once through the inbox. */
export async function startConsumer(options: ConsumerOptions): Promise<Subscription> {
  const byType = new Map(options.handlers.map((h) => [h.schema.typeName, h]));
  if (options.batched) {
    return options.bus.subscribeBatches(options.group, options.topics, async (messages) => {
      const events = messages.map((m) => decode(byType, m)).filter((e) => e !== undefined);
      if (!events.length) return;
      try {
        const applied = await againIfRolledBack(
          () => consumeBatchOnce(options.db, options.group, events),
          options.log,
          { events: events.length },
        );
        options.log.debug({ events: events.length, applied }, "events consumed");
      } catch (err) {
        options.log.error({ err, events: events.length }, "event batch failed; will be redelivered");
        throw err;
      }
    });
  }
  return options.bus.subscribe(options.group, options.topics, async (m) => {
    const decoded = decode(byType, m);
    if (!decoded) return;
    const { handler, event, meta } = decoded;
    const type = meta.type;
    const span = openSpan(
      `${options.group} ${type}`,
      SpanKind.CONSUMER,
      {
        "messaging.system": "kafka",
        "messaging.consumer.group.name": options.group,
        correlation_id: meta.correlationId,
      },
      m.headers,
    );
    const apply = () =>
      againIfRolledBack(
        () => consumeOnce(options.db, options.group, meta.eventId, (em) => handler.handle(em, event, meta)),
        options.log,
        { event: type, event_id: meta.eventId },
      );
    await runWithContext({ correlationId: meta.correlationId }, async () => {
      try {
        const applied = await inSpan(span, apply);
        options.log.debug({ event: type, event_id: meta.eventId, applied }, "event consumed");
      } catch (err) {
        options.log.error({ err, event: type, event_id: meta.eventId }, "event handler failed; will be redelivered");
        throw err;
      }
    });
  });
}
