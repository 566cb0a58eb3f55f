import {
  enqueueEvent,
  one,
  outboxInsertSql,
  outboxValuesNow,
  PLANNED_AT_EACH_CALL,
  rows,
  type EntityManager,
  type OutboxEvent,
} from "@transferops/kit";
import { DEVICE_WORK_CHANNEL } from "./idle-devices.ts";
import {
  DEBITING_OP_TYPES,
  HOLDING_STATUSES,
  type DeviceOutcome,
  type OperationStatus,
  type Operator,
  type OpType,
  type Origin,
} from "../domain/index.ts";
import { PROOF_INSERT, proofValues, type NewProof } from "./proof-rows.ts";
import { likeEscape, toDate, toNumber } from "./sql.ts";
import { OPERATION_SEARCH_TEXT } from "./migrations/Migration0010SearchIndex.ts";
import { OPERATION_SEARCH_WINDOWS, searchWindows } from "./migrations/Migration0013SearchWindows.ts";

/** An operation row as the service works with it. Amounts in FCFA. */
export interface OperationRecord {
  operation_id: string;
  request_id: string;
  parent_operation_id: string | null;
  status: OperationStatus;
  origin: Origin;
  op_type: OpType;
  agent_id: string;
  operator: Operator;
  montant: number;
  msisdn_dest: string;
  dest_name: string | null;
  contact_id: string | null;
  merchant_code: string | null;
  partner_verified: boolean;
  sim_id: string | null;
  device_id: string | null;
  device_label: string | null;
  subscription_slot: number | null;
  ussd_string: string | null;
  ussd_response: string | null;
  device_outcome: DeviceOutcome | null;
  executed_at: Date | null;
  reject_reason: string | null;
  failure_reason: string | null;
  evidence_expires_at: Date | null;
  evidence_message_id: string | null;
  evidence_operator_ref: string | null;
  evidence_amount: number | null;
  evidence_fee: number | null;
  evidence_balance_after: number | null;
  evidence_raw_text: string | null;
  evidence_received_at: Date | null;
  evidence_kind: string | null;
  evidence_is_ambiguous: boolean | null;
  confirmed_by: "proof" | "attach" | "settle" | "arbitrate" | null;
  decision: string | null;
  decision_note: string | null;
  decided_by: string | null;
  decided_by_name: string | null;
  decided_at: Date | null;
  /** The operator's proof that arrived after this operation failed or was rejected (flows/proof.ts). */
  contradicting_message_id: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
  updated_at: Date;
  /** A retry (an operation naming this one as parent) exists. */
  has_retry: boolean;
  /**
   * Only on a row this transaction has just locked (`LOCKED_AT`): the database's clock when
   * the lock was granted, as the driver gives it (text, to the microsecond). The update that
   * follows stamps `updated_at` with it, so that its events, built before the statement that
   * writes them with the change, carry the row's `updated_at`.
   */
  locked_at?: string;
}

/**
 * Whether a retry names the row `o` as its parent. A scalar subquery, not `exists`: the
 * planner may run an `exists` as a hashed subplan that reads the whole table once per
 * query (13 ms at 40,000 rows on every claim and list), while this one is always a probe
 * of `operations_one_retry` per returned row.
 */
const HAS_RETRY = `coalesce((select true from dispatch.operations r where r.parent_operation_id = o.operation_id limit 1), false)
  as has_retry`;

export const OPERATION_COLUMNS = `o.operation_id, o.request_id, o.parent_operation_id, o.status, o.origin, o.op_type,
  o.agent_id, o.operator, o.montant, o.msisdn_dest, o.dest_name, o.contact_id, o.merchant_code, o.partner_verified,
  o.sim_id, o.device_id, o.device_label, o.subscription_slot, o.ussd_string, o.ussd_response, o.device_outcome,
  o.executed_at, o.reject_reason, o.failure_reason, o.evidence_expires_at, o.evidence_message_id,
  o.evidence_operator_ref, o.evidence_amount, o.evidence_fee, o.evidence_balance_after, o.evidence_raw_text,
  o.evidence_received_at, o.evidence_kind, o.evidence_is_ambiguous, o.confirmed_by, o.decision, o.decision_note,
  o.decided_by, o.decided_by_name, o.decided_at, o.contradicting_message_id, o.created_at, o.started_at, o.finished_at, o.updated_at,
  ${HAS_RETRY}`;

/**
 * The column a lock adds to `OPERATION_COLUMNS` (`OperationRecord.locked_at`). Evaluated
 * once the row is locked (a lock that waited for another transaction's update re-reads the
 * row, this column with it), so it is later than that update's `updated_at`: the row's
 * `updated_at` still only moves forward, on the database's one clock.
 */
export const LOCKED_AT = `clock_timestamp()::text as locked_at`;

type Raw = Record<string, unknown>;

const DATE_FIELDS = [
  "executed_at",
  "evidence_expires_at",
  "evidence_received_at",
  "decided_at",
  "created_at",
  "started_at",
  "finished_at",
  "updated_at",
] as const;
const NUMBER_FIELDS = [
  "montant",
  "evidence_amount",
  "evidence_fee",
  "evidence_balance_after",
  "subscription_slot",
] as const;

/**
 * A row of some of the operation's columns as the service works with it: each date and number
 * column the row holds converted (a page that reads the columns its row shows: store/queues.ts).
 */
export function fromRow<T extends Partial<OperationRecord>>(raw: Raw): T {
  const r: Raw = { ...raw };
  for (const f of DATE_FIELDS) if (f in r) r[f] = toDate(r[f]);
  for (const f of NUMBER_FIELDS) if (f in r) r[f] = toNumber(r[f]);
  return r as T;
}

export function toRecord(raw: Raw): OperationRecord {
  const r = fromRow<OperationRecord>(raw);
  r.has_retry = Boolean(r.has_retry);
  return r;
}

async function select(em: EntityManager, where: string, params: unknown[], tail = ""): Promise<OperationRecord[]> {
  const found = await rows<Raw>(
    em,
    `select ${OPERATION_COLUMNS} from dispatch.operations o where ${where} ${tail}`,
    params,
  );
  return found.map(toRecord);
}

export async function findOperation(em: EntityManager, operationId: string): Promise<OperationRecord | undefined> {
  return (await select(em, "o.operation_id = ?", [operationId]))[0];
}

/** Locks the row until the transaction ends: every transition reads its operation this way. */
export async function lockOperation(em: EntityManager, operationId: string): Promise<OperationRecord | undefined> {
  const found = await rows<Raw>(
    em,
    `select ${OPERATION_COLUMNS}, ${LOCKED_AT} from dispatch.operations o where o.operation_id = ? for update of o`,
    [operationId],
  );
  return found[0] && toRecord(found[0]);
}

export async function findByRequestId(em: EntityManager, requestId: string): Promise<OperationRecord | undefined> {
  return (await select(em, "o.request_id = ?", [requestId]))[0];
}

/** What creation writes: the request's fields; every other column starts empty. A new operation always has its SIM. */
export type NewOperation = Pick<
  OperationRecord,
  | "operation_id"
  | "request_id"
  | "parent_operation_id"
  | "status"
  | "origin"
  | "op_type"
  | "agent_id"
  | "operator"
  | "montant"
  | "msisdn_dest"
  | "dest_name"
  | "contact_id"
  | "merchant_code"
  | "partner_verified"
  | "device_id"
  | "device_label"
  | "subscription_slot"
  | "created_at"
> & { sim_id: string };

/** A create's insert: nothing when the request_id exists (the caller then reads that row). */
const INSERT_OPERATION = `insert into dispatch.operations as o (operation_id, request_id, parent_operation_id, status,
     origin, op_type, agent_id, operator, montant, msisdn_dest, dest_name, contact_id, merchant_code, partner_verified,
     sim_id, device_id, device_label, subscription_slot, created_at, updated_at)
   values (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
   on conflict (request_id) do nothing`;

const insertValues = (op: NewOperation): unknown[] => [
  op.operation_id,
  op.request_id,
  op.parent_operation_id,
  op.status,
  op.origin,
  op.op_type,
  op.agent_id,
  op.operator,
  op.montant,
  op.msisdn_dest,
  op.dest_name,
  op.contact_id,
  op.merchant_code,
  op.partner_verified,
  op.sim_id,
  op.device_id,
  op.device_label,
  op.subscription_slot,
  op.created_at,
  op.created_at,
];

/**
 * Inserts an operation; undefined when its request_id already exists (the unique index
 * decides, so concurrent repeats of one request_id leave exactly one row).
 */
export async function insertOperation(em: EntityManager, op: NewOperation): Promise<OperationRecord | undefined> {
  const inserted = await rows<Raw>(em, `${INSERT_OPERATION} returning ${OPERATION_COLUMNS}`, insertValues(op));
  return inserted[0] ? toRecord(inserted[0]) : undefined;
}

/** Debits not yet proven or ended (domain HOLDING_STATUSES): their money is committed but not yet measured. */
const sqlList = (values: readonly string[]) => values.map((v) => `'${v}'`).join(", ");
const HOLDING = `status in (${sqlList(HOLDING_STATUSES)})`;

/**
 * THE FREE BALANCE RULE, written once. A SIM's free balance is its last measured balance
 * less the amount of every debiting operation (deposit, float_deposit) on it that may have
 * left since that measurement (`measured`: a SQL expression of the SIM's balance_updated_at,
 * null when never measured) and is not proven failed, whatever route created it:
 *
 * - in flight or awaiting its proof (HOLDING_STATUSES: queued, running, awaiting_evidence,
 *   awaiting_manual_dial), whenever it was created;
 * - changed after the measurement (`updated_at` later than it), or handed to a handset that
 *   reported no dial (`executed_at` null) less than the lease (`leaseS`, RUNNING_TIMEOUT_S)
 *   before it: a dial no one reported may run until then (a handset deleted, or its operation
 *   cancelled, while it dialled), so a measurement before that end does not show it; and
 *   - no_evidence (a ussd_timeout, the sweep, a lost handset): a late SMS can still prove it;
 *   - confirmed, unless its proof carried the balance after it and the measurement is that
 *     reading or a newer one (settled or arbitrated on word, or proven without a balance:
 *     held until the next reading);
 *   - failed or rejected after it was handed to a handset (or dialled by hand), when only a
 *     person's word (settle, arbitrate) says it failed, when it was cancelled while its
 *     handset dialled and the handset has not reported or reported `ussd_ok`,
 *     `ussd_unconfirmed` or `ussd_timeout`, or when an operator proof contradicts it.
 *
 * A debit the handset or the operator failed (ussd_failed, name_mismatch, sim_absent, a
 * cancel before dialling) is proven failed and holds nothing. The domain's statuses are in
 * vocabulary.ts (HOLDING_STATUSES); selection (`simLoads`) and the check under the SIM's
 * lock (`reservedOn`, every create and change that adds to it) both use this. Two sums, each
 * from its index: what is in flight (`operations_sim_holding`) and what changed since the
 * measurement (`operations_sim_changed`), so the cost does not grow with the SIM's history.
 */
const DEBITING = `op_type in (${sqlList(DEBITING_OP_TYPES)})`;
const HELD_DEBITS = (sim: string, measured: string, leaseS: string) => `(
  (select coalesce(sum(montant), 0) from dispatch.operations
    where sim_id = ${sim} and ${HOLDING} and ${DEBITING})
  + (select coalesce(sum(montant), 0) from dispatch.operations
    where sim_id = ${sim} and status in ('no_evidence', 'confirmed', 'failed', 'rejected') and ${DEBITING}
      -- within the index's range: updated_at is never before started_at
      and updated_at > coalesce(${measured}, '-infinity'::timestamptz) - make_interval(secs => ${leaseS})
      and (updated_at > coalesce(${measured}, '-infinity'::timestamptz)
        or (executed_at is null and started_at > coalesce(${measured}, '-infinity'::timestamptz) - make_interval(secs => ${leaseS})))
      and (status = 'no_evidence'
        or (status = 'confirmed'
            and (evidence_balance_after is null or evidence_received_at is null or evidence_received_at > ${measured}))
        or (status in ('failed', 'rejected') and (started_at is not null or origin = 'matching')
            and (decided_by is not null or contradicting_message_id is not null
                 or (status = 'rejected' and (device_outcome is null
                     or device_outcome in ('ussd_ok', 'ussd_unconfirmed', 'ussd_timeout'))))))))`;

/** The row a create writes, as `insertOperation` would return it: every other column empty. */
export function freshRecord(op: NewOperation): OperationRecord {
  return {
    ...op,
    ussd_string: null,
    ussd_response: null,
    device_outcome: null,
    executed_at: null,
    reject_reason: null,
    failure_reason: null,
    evidence_expires_at: null,
    evidence_message_id: null,
    evidence_operator_ref: null,
    evidence_amount: null,
    evidence_fee: null,
    evidence_balance_after: null,
    evidence_raw_text: null,
    evidence_received_at: null,
    evidence_kind: null,
    evidence_is_ambiguous: null,
    confirmed_by: null,
    decision: null,
    decision_note: null,
    decided_by: null,
    decided_by_name: null,
    decided_at: null,
    contradicting_message_id: null,
    started_at: null,
    finished_at: null,
    updated_at: op.created_at,
    has_retry: false,
  };
}

/**
 * A create's writes in one statement (one round trip, in the caller's transaction): the
 * operation (nothing when its request_id exists: `undefined`), its outbox rows, the
 * announcement of its device's work (`pg_notify`, sent at commit). What the SIM holds is
 * read under its lock after this (reservation.ts).
 */
export async function insertQueuedOperation(
  em: EntityManager,
  op: NewOperation,
  outbox: { values: unknown[] }[],
): Promise<{ record: OperationRecord } | undefined> {
  // The outbox insert runs whatever the final select reads; the announcement, a select,
  // only because it is read.
  const found = await one<{ inserted: number }>(
    em,
    `with ins as (${INSERT_OPERATION} returning o.device_id),
     queued as (${outboxInsertSql("dispatch", outbox.length, "exists (select 1 from ins)")}),
     announced as (select pg_notify(?, device_id) from ins where device_id is not null)
     select (select count(*) from ins)::int as inserted,
            (select count(*) from announced)::int as announced`,
    [...insertValues(op), ...outbox.flatMap((row) => row.values), DEVICE_WORK_CHANNEL],
  );
  if (!found || found.inserted === 0) return undefined;
  return { record: freshRecord(op) };
}

/** Columns a transition may write. */
export type OperationChange = Partial<
  Pick<
    OperationRecord,
    | "status"
    | "sim_id"
    | "device_id"
    | "msisdn_dest"
    | "montant"
    | "contact_id"
    | "ussd_string"
    | "ussd_response"
    | "device_outcome"
    | "executed_at"
    | "reject_reason"
    | "failure_reason"
    | "evidence_expires_at"
    | "evidence_message_id"
    | "evidence_operator_ref"
    | "evidence_amount"
    | "evidence_fee"
    | "evidence_balance_after"
    | "evidence_raw_text"
    | "evidence_received_at"
    | "evidence_kind"
    | "evidence_is_ambiguous"
    | "confirmed_by"
    | "decision"
    | "decision_note"
    | "decided_by"
    | "decided_by_name"
    | "decided_at"
    | "contradicting_message_id"
    | "started_at"
    | "finished_at"
  >
>;

/**
 * Writes a change to the row the caller locked and read (`before`), and the outbox rows of
 * the events `events` says of the row as the change leaves it (`after`), if any; `updated_at`
 * moves with every change. The row is locked, so it is `before` with the change: the row's
 * 45 columns are not read again.
 *
 * A row locked with its `locked_at` (every lock of a transition: `lockOperation`, the
 * claim's `pollDevice`, the proof's `lockProofCandidates`) is stamped with that clock, so
 * the events are built before the statement and the change and its outbox rows are one
 * statement (one round trip), with the rows this transaction deferred for the outbox before
 * them (`outboxValuesNow`: the outbox keeps the order of the events). Otherwise `updated_at`
 * is the clock of the update, and the events wait for the commit (`enqueueEvent`).
 */
export async function updateOperation(
  em: EntityManager,
  before: OperationRecord,
  change: OperationChange,
  events: (after: OperationRecord) => OutboxEvent[] = () => [],
  proof?: NewProof,
): Promise<OperationRecord> {
  const sets: string[] = [];
  const params: unknown[] = [];
  const { locked_at: lockedAt, ...after }: Raw = { ...before };
  for (const [column, value] of Object.entries(change)) {
    if (value === undefined) continue;
    sets.push(`${column} = ?`);
    params.push(value);
    after[column] = value;
  }
  if (lockedAt === undefined) {
    sets.push("updated_at = clock_timestamp()");
    const updated = await one<{ updated_at: unknown }>(
      em,
      `update dispatch.operations as o set ${sets.join(", ")} where o.operation_id = ? returning o.updated_at`,
      [...params, before.operation_id],
    );
    after.updated_at = toDate(updated!.updated_at);
    const record = after as unknown as OperationRecord;
    for (const event of events(record)) await enqueueEvent(em, "dispatch", event);
    if (proof) await em.execute(PROOF_INSERT(), proofValues(proof));
    return record;
  }
  sets.push("updated_at = ?::timestamptz");
  after.updated_at = toDate(lockedAt);
  const record = after as unknown as OperationRecord;
  const outbox = outboxValuesNow(em, "dispatch", events(record));
  const update = `update dispatch.operations as o set ${sets.join(", ")} where o.operation_id = ?`;
  const values = [...params, lockedAt, before.operation_id];
  if (outbox.length === 0 && !proof) {
    await em.execute(update, values);
    return record;
  }
  // One statement: the change, then what it writes beside it, each only with the row's
  // update: the proof row of the message that confirms it (the proof's step), its events'
  // outbox rows.
  const changed = "exists (select 1 from changed)";
  const proven = proof ? `,\n     proven as (${PROOF_INSERT(changed)})` : "";
  const queued = outbox.length > 0 ? outboxInsertSql("dispatch", outbox.length, changed) : "select 1";
  await em.execute(`with changed as (${update} returning 1)${proven}\n     ${queued}`, [
    ...values,
    ...(proof ? proofValues(proof) : []),
    ...outbox.flat(),
  ]);
  return record;
}

export interface OperationListFilter {
  status: OperationStatus | null;
  sim_id: string | null;
  agent_id: string | null;
  origin?: Origin | null;
  from: Date | null;
  to: Date | null;
  search_text: string | null;
  search_digits: string | null;
  limit: number;
}

/** Newest first. */
export async function listOperations(em: EntityManager, f: OperationListFilter): Promise<OperationRecord[]> {
  const where: string[] = ["true"];
  const params: unknown[] = [];
  const add = (sql: string, ...p: unknown[]) => {
    where.push(sql);
    params.push(...p);
  };
  if (f.status) add("o.status = ?", f.status);
  if (f.sim_id) add("o.sim_id = ?", f.sim_id);
  if (f.agent_id) add("o.agent_id = ?", f.agent_id);
  if (f.origin) add("o.origin = ?", f.origin);
  if (f.from) add("o.created_at >= ?", f.from);
  if (f.to) add("o.created_at < ?", f.to);
  if (f.search_text || f.search_digits) {
    // On the searched text (Migration0010SearchIndex): the text within the name, request_id or
    // operation_id, the digits within the number's (after chr(2)). A part with a run of six
    // digits is found through the windows' index (Migration0013SearchWindows), the text then
    // checked; a shorter one through the text's trigrams.
    const ors: string[] = [];
    const part = (pattern: string, windows: string[]) => {
      if (windows.length === 0) {
        ors.push(`${OPERATION_SEARCH_TEXT} like ?`);
        params.push(pattern);
      } else {
        ors.push(`(${OPERATION_SEARCH_WINDOWS} @> ?::text[] and ${OPERATION_SEARCH_TEXT} like ?)`);
        // As an array's text: the driver would spread a list into one value per item.
        params.push(`{${windows.map((w) => `"${w}"`).join(",")}}`, pattern);
      }
    };
    if (f.search_text && !/[\u0001\u0002]/.test(f.search_text))
      part(`%${likeEscape(f.search_text)}%`, searchWindows(f.search_text));
    if (f.search_digits) part(`%\u0002%${f.search_digits}%`, searchWindows(f.search_digits, true));
    where.push(ors.length ? `(${ors.join(" or ")})` : "false");
  }
  // Planned for its filters at each call: a generic plan walks the newest-first index through
  // the whole history for a search or a rare status (kit PLANNED_AT_EACH_CALL).
  const found = await rows<Raw>(
    em,
    `${PLANNED_AT_EACH_CALL}select ${OPERATION_COLUMNS} from dispatch.operations o where ${where.join(" and ")}
     order by o.created_at desc, o.operation_id desc limit ${f.limit}`,
    params,
  );
  return found.map(toRecord);
}

/** Load of each SIM for selection: operations in flight (queued or running) and when it last finished one. */
export interface SimLoad {
  in_flight: number;
  /** FCFA of debiting operations committed on the SIM and not finished (see SimCandidate.reserved). */
  reserved: number;
  last_finished_at: Date | null;
}

export async function simLoads(
  em: EntityManager,
  sims: readonly { sim_id: string; measured_at: Date | null }[],
  leaseS: number,
): Promise<Map<string, SimLoad>> {
  const loads = new Map<string, SimLoad>();
  if (sims.length === 0) return loads;
  // Per SIM, index lookups only (operations_sim_holding for what is in flight and its
  // debits, op_type included so the table is not read,
  // operations_sim_finished for the last finish, an ordered read of one entry rather than
  // `max()`, which stale statistics can turn into an aggregate over the SIM's history, as
  // in deviceQueueState): the cost does not grow with history.
  const found = await rows<{ sim_id: string; in_flight: unknown; reserved: unknown; last_finished_at: unknown }>(
    em,
    `select s.sim_id, l.in_flight, h.reserved,
            (select f.finished_at from dispatch.operations f
              where f.sim_id = s.sim_id and f.finished_at is not null
              order by f.finished_at desc limit 1) as last_finished_at
       from jsonb_to_recordset(?::jsonb) as s(sim_id text, measured_at timestamptz)
       cross join (select ?::int as lease_s) as p
       cross join lateral (
         select count(*) filter (where status in ('queued', 'running')) as in_flight
           from dispatch.operations
          where sim_id = s.sim_id and status in ('queued', 'running')) as l
       cross join lateral (select ${HELD_DEBITS("s.sim_id", "s.measured_at", "p.lease_s")} as reserved) as h`,
    [
      JSON.stringify(sims.map((s) => ({ sim_id: s.sim_id, measured_at: s.measured_at?.toISOString() ?? null }))),
      leaseS,
    ],
  );
  for (const r of found) {
    loads.set(r.sim_id, {
      in_flight: Number(r.in_flight),
      reserved: Number(r.reserved),
      last_finished_at: toDate(r.last_finished_at),
    });
  }
  return loads;
}

/** What the SIM's free balance holds (`HELD_DEBITS`), measured at `measuredAt`, with a handset's lease of `leaseS`. */
export async function reservedOn(
  em: EntityManager,
  simId: string,
  measuredAt: Date | null,
  leaseS: number,
): Promise<number> {
  const r = await one<{ reserved: unknown }>(
    em,
    `select ${HELD_DEBITS("p.sim_id", "p.measured_at", "p.lease_s")} as reserved
       from (select ?::text as sim_id, ?::timestamptz as measured_at, ?::int as lease_s) as p`,
    [simId, measuredAt, leaseS],
  );
  return Number(r?.reserved ?? 0);
}

/**
 * Within a transaction: serialises every change of what one SIM holds (a transaction-scoped
 * advisory lock, held until commit) and answers what it holds, so that two concurrent creates
 * cannot both spend the same balance.
 */
export async function lockSimReservation(
  em: EntityManager,
  simId: string,
  measuredAt: Date | null,
  leaseS: number,
): Promise<number> {
  await lockSim(em, simId);
  return reservedOn(em, simId, measuredAt, leaseS);
}

/** The SIM's lock alone (see lockSimReservation), for a change that adds to what the SIM holds. */
export async function lockSim(em: EntityManager, simId: string): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('dispatch.sim_reservation'), hashtext(?))`, [simId]);
}

export async function countRows(em: EntityManager, sql: string, params: unknown[] = []): Promise<number> {
  const r = await one<{ n: unknown }>(em, sql, params);
  return Number(r?.n ?? 0);
}
