// What must hold after each fault, read from the services' own tables and from the broker.
import { Kafka, logLevel } from "kafkajs";
import pg from "pg";
import type { AckedCreate, AckedSms } from "./load.ts";
import { HINTS_GROUP_PREFIX } from "../../gateway/src/http/change-feed.ts";

export class Checks {
  private readonly pool: pg.Pool;

  constructor(
    databaseUrl: string,
    /** The name the checks' connections carry, so the PostgreSQL fault spares them. */
    readonly applicationName: string,
  ) {
    this.pool = new pg.Pool({ connectionString: databaseUrl, max: 2, application_name: applicationName });
    this.pool.on("error", () => undefined);
  }

  /** One statement on the checks' own connections (also the simulation's invariants). */
  async query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return (await this.pool.query(sql, params)).rows as T[];
  }

  /** Kills every connection the services hold to the database (pg_terminate_backend). */
  async killServiceConnections(): Promise<number> {
    const rows = await this.query<{ killed: boolean }>(
      `select pg_terminate_backend(pid) as killed from pg_stat_activity
        where datname = current_database() and pid <> pg_backend_pid() and application_name <> $1`,
      [this.applicationName],
    );
    return rows.filter((r) => r.killed).length;
  }

  /** Acknowledged creates with no operation behind them. */
  async lostCreates(acked: AckedCreate[]): Promise<AckedCreate[]> {
    if (!acked.length) return [];
    const found = await this.query<{ request_id: string; operation_id: string }>(
      `select request_id, operation_id from dispatch.operations where request_id = any($1)`,
      [acked.map((a) => a.requestId)],
    );
    const stored = new Map(found.map((r) => [r.request_id, r.operation_id]));
    return acked.filter((a) => stored.get(a.requestId) !== a.operationId);
  }

  /** Acknowledged SMS the evidence service does not hold. */
  async lostSms(acked: AckedSms[]): Promise<AckedSms[]> {
    if (!acked.length) return [];
    const found = await this.query<{ key: string }>(
      `select sim_id || '/' || client_message_id as key from evidence.messages where client_message_id = any($1)`,
      [acked.map((a) => a.clientMessageId)],
    );
    const stored = new Set(found.map((r) => r.key));
    return acked.filter((a) => !stored.has(`${a.simId}/${a.clientMessageId}`));
  }

  /** Operations still running longer than their lease (plus `slackS` for the sweep to pass). */
  async stuckRunning(leaseS: number, slackS: number): Promise<string[]> {
    const rows = await this.query<{ operation_id: string }>(
      `select operation_id from dispatch.operations
        where status = 'running' and started_at < now() - make_interval(secs => $1)`,
      [leaseS + slackS],
    );
    return rows.map((r) => r.operation_id);
  }

  /**
   * Confirmations that break "one operation, one proving SMS; one SMS, one operation",
   * in each service and between them: as descriptions, empty when all is well.
   */
  async doubleConfirmations(): Promise<string[]> {
    const problems: string[] = [];
    const twiceInEvidence = await this.query<{ operation_id: string; n: number }>(
      `select operation_id, count(*)::int as n from evidence.messages where link = 'proof'
        group by operation_id having count(*) > 1`,
    );
    for (const r of twiceInEvidence) problems.push(`operation ${r.operation_id} proven by ${r.n} messages`);
    const twiceInDispatch = await this.query<{ message: string; n: number }>(
      `select evidence_message_id as message, count(*)::int as n from dispatch.operations
        where evidence_message_id is not null group by 1 having count(*) > 1`,
    );
    for (const r of twiceInDispatch) problems.push(`message ${r.message} confirms ${r.n} operations`);
    const twiceInProofs = await this.query<{ operation_id: string; n: number }>(
      `select operation_id, count(*)::int as n from dispatch.proofs where outcome = 'confirmed'
        group by operation_id having count(*) > 1`,
    );
    for (const r of twiceInProofs) problems.push(`operation ${r.operation_id} has ${r.n} confirming proofs`);
    // The two services must name the same pairs.
    const disagree = await this.query<{ operation_id: string; message: string; other: string | null }>(
      `select m.operation_id, m.id::text as message, o.evidence_message_id as other
         from evidence.messages m join dispatch.operations o on o.operation_id = m.operation_id
        where m.link = 'proof' and o.evidence_message_id is not null and o.evidence_message_id <> m.id::text
       union all
       select o.operation_id, o.evidence_message_id, m.operation_id::text
         from dispatch.operations o join evidence.messages m on m.id::text = o.evidence_message_id
        where m.operation_id is not null and m.operation_id <> o.operation_id`,
    );
    for (const r of disagree)
      problems.push(`operation ${r.operation_id} and message ${r.message} disagree (other side names ${r.other})`);
    return problems;
  }

  /**
   * Acknowledged SMS that did not (yet) confirm the operation they are the receipt of,
   * or that confirmed another one.
   */
  async unprovenBySms(acked: AckedSms[]): Promise<string[]> {
    if (!acked.length) return [];
    const rows = await this.query<{
      client_message_id: string;
      message: string;
      linked: string | null;
      link: string | null;
      status: string | null;
      proven_by: string | null;
    }>(
      `select m.client_message_id, m.id::text as message, m.operation_id::text as linked, m.link,
              o.status, o.evidence_message_id as proven_by
         from evidence.messages m left join dispatch.operations o on o.operation_id = m.operation_id
        where m.client_message_id = any($1)`,
      [acked.map((a) => a.clientMessageId)],
    );
    const byId = new Map(rows.map((r) => [r.client_message_id, r]));
    const problems: string[] = [];
    for (const a of acked) {
      const r = byId.get(a.clientMessageId);
      if (!r) continue; // counted as lost
      // The receipt proves its operation, or, when the operator's own repeat of the same text
      // (another client id, same reference) got there first, is its restatement.
      const proves = r.link === "proof" ? r.proven_by === r.message : r.link === "restatement";
      if (r.linked !== a.operationId || !proves || r.status !== "confirmed") {
        problems.push(
          `SMS ${a.clientMessageId} about ${a.operationId}: linked to ${r.linked ?? "nothing"} (${r.link ?? "-"}), operation ${r.status ?? "?"}`,
        );
      }
    }
    return problems;
  }

  /** Messages evidence still holds pending (correlation or balance), stored before `before`. */
  async pendingMessages(before: Date): Promise<string[]> {
    const rows = await this.query<{ id: string }>(
      `select id::text from evidence.messages
        where (state = 'pending' or balance_state = 'pending') and stored_at < $1`,
      [before],
    );
    return rows.map((r) => r.id);
  }

  /** Outbox rows of every service not yet published to Kafka, created before `before`. */
  async unpublished(before: Date): Promise<number> {
    const schemas = await this.query<{ schema: string }>(
      `select table_schema as schema from information_schema.tables where table_name = 'outbox'`,
    );
    let total = 0;
    for (const { schema } of schemas) {
      const [r] = await this.query<{ n: number }>(
        `select count(*)::int as n from ${pg.escapeIdentifier(schema)}.outbox where published_at is null and created_at < $1`,
        [before],
      );
      total += r.n;
    }
    return total;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** The consumer groups of one run (its topic prefix) against the broker's end offsets. */
export class EventFlow {
  private readonly kafka: Kafka;

  constructor(
    brokers: string,
    private readonly prefix: string,
  ) {
    this.kafka = new Kafka({
      clientId: "chaos-check",
      brokers: brokers.split(","),
      logLevel: logLevel.NOTHING,
      retry: { retries: 3 },
    });
  }

  /** The end offset of every partition of the run's topics: `topic/partition` → offset. */
  async ends(): Promise<Map<string, bigint>> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const out = new Map<string, bigint>();
      for (const topic of (await admin.listTopics()).filter((t) => t.startsWith(this.prefix))) {
        for (const p of await admin.fetchTopicOffsets(topic)) out.set(`${topic}/${p.partition}`, BigInt(p.high));
      }
      return out;
    } finally {
      await admin.disconnect();
    }
  }

  /** Groups (with the topic partitions) that have not yet consumed up to `ends`. */
  async behind(ends: Map<string, bigint>): Promise<string[]> {
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      // A gateway's change feed (one group a start, counting changes, doing no work) is left
      // behind by a gateway killed: not a consumer whose lag loses anything.
      const groups = (await admin.listGroups()).groups
        .map((g) => g.groupId)
        .filter((g) => g.startsWith(this.prefix) && !g.startsWith(this.prefix + HINTS_GROUP_PREFIX));
      const late: string[] = [];
      for (const groupId of groups) {
        // The topics the group consumes: those it committed offsets on.
        for (const t of await admin.fetchOffsets({ groupId })) {
          const committed = new Map(t.partitions.map((p) => [p.partition, BigInt(p.offset)]));
          for (const [key, end] of ends) {
            const [topic, partition] = key.split("/");
            if (topic !== t.topic) continue;
            // -1 (or absent): nothing committed, caught up only if there is nothing to read.
            const at = committed.get(Number(partition)) ?? -1n;
            if (end > 0n && at < end)
              late.push(`${groupId.slice(this.prefix.length)} ${key.slice(this.prefix.length)}`);
          }
        }
      }
      return late;
    } finally {
      await admin.disconnect();
    }
  }
}
