import { one, rows, type EntityManager } from "@transferops/kit";
import type { ChainMessage } from "../domain/balance-chain.ts";
import type { BalanceState, Link, MessageRecord } from "../domain/message.ts";
import { MOVEMENT_KINDS, UNMATCHED_QUEUE_KINDS, type Outcome } from "../domain/outcomes.ts";
import type { Scope } from "../domain/scope.ts";
import type { Window } from "../domain/window.ts";
import { dayUpsert } from "./reconciliations.ts";

type Row = Omit<
  MessageRecord,
  "amount" | "fee" | "commission" | "balance_after" | "balance" | "previous_balance" | "operation_snapshot"
> & {
  amount: string | number | null;
  fee: string | number | null;
  commission: string | number | null;
  balance_after: string | number | null;
  balance: string | number | null;
  previous_balance: string | number | null;
  operation_snapshot: Buffer | null;
};

const num = (v: string | number | null): number | null => (v === null ? null : Number(v));
/** timestamptz columns come back as text from the driver's raw queries. */
const date = (v: Date | string | null): Date | null => (v === null ? null : new Date(v));

/** What the board's lists show of a message: the contract's evidence row (flows/mappers.ts `toEvidence`). */
export type EvidenceRecord = Pick<
  MessageRecord,
  | "id"
  | "sim_id"
  | "source"
  | "sender"
  | "raw_text"
  | "received_at"
  | "device_received_at"
  | "client_message_id"
  | "subscription_slot"
  | "kind"
  | "amount"
  | "fee"
  | "balance_after"
  | "operator_ref"
  | "counterparty_msisdn"
  | "counterparty_name"
  | "direction"
  | "language"
  | "outcome"
  | "is_ambiguous"
  | "operation_id"
  | "link"
  | "dismissed_at"
  | "dismiss_reason"
  | "dismissed_by"
  | "stored_at"
>;

/**
 * Its columns, and no more: a board page of 50 read every message column (38, its operation's
 * snapshot among them), of which the row shows 26; each column a row is a parse in the driver
 * (docs/decisions/history.md, "A page's rows: the columns a row shows").
 */
const EVIDENCE_COLUMNS = `id, sim_id, source, sender, raw_text, received_at, device_received_at, client_message_id,
  subscription_slot, kind, amount, fee, balance_after, operator_ref, counterparty_msisdn, counterparty_name, direction,
  language, outcome, is_ambiguous, operation_id, link, dismissed_at, dismiss_reason, dismissed_by, stored_at`;

/** Every column of a message: the board row's and the rest. */
const COLUMNS = `${EVIDENCE_COLUMNS}, sms_hash, commission, parse_rule, state, linked_at, linked_by, operation_snapshot,
  balance_state, balance, previous_balance, correlated_at, attempts`;

/** bigint columns come back as strings from the driver; amounts are FCFA, far below 2^53. */
function evidenceRecord(r: Pick<Row, keyof EvidenceRecord>): EvidenceRecord {
  return {
    ...r,
    received_at: date(r.received_at)!,
    device_received_at: date(r.device_received_at),
    dismissed_at: date(r.dismissed_at),
    stored_at: date(r.stored_at)!,
    amount: num(r.amount),
    fee: num(r.fee),
    balance_after: num(r.balance_after),
  };
}

function record(r: Row): MessageRecord {
  return {
    ...r,
    ...evidenceRecord(r),
    linked_at: date(r.linked_at),
    correlated_at: date(r.correlated_at),
    commission: num(r.commission),
    balance: num(r.balance),
    previous_balance: num(r.previous_balance),
    operation_snapshot: r.operation_snapshot ? new Uint8Array(r.operation_snapshot) : null,
  };
}

/** A new message: where it came from, and what its parser read (`Reading`, below). */
export type NewMessage = Pick<
  MessageRecord,
  | "id"
  | "sim_id"
  | "sms_hash"
  | "sender"
  | "raw_text"
  | "received_at"
  | "device_received_at"
  | "client_message_id"
  | "subscription_slot"
> &
  Reading;

/** A SIM's lock (transaction-scoped), its SIM id the parameter: lockSim, lockSimMessage, insertMessage. */
const SIM_LOCK = `pg_advisory_xact_lock(hashtext('evidence.sim'), hashtext(?))`;

/** SIM locks taken, by transaction (its EntityManager). */
const simLocks = new WeakMap<EntityManager, Set<string>>();

/** The SIMs whose lock this transaction holds (the set is the transaction's: add to it). */
function heldSims(em: EntityManager): Set<string> {
  let held = simLocks.get(em);
  if (!held) simLocks.set(em, (held = new Set<string>()));
  return held;
}

/**
 * Inserts a message and adds it to its day's counts (`dayUpsert`, a CTE that changes nothing
 * when the insert met a duplicate), under its SIM's lock, in one statement; undefined when
 * (sim_id, sms_hash) is already stored (a duplicate). The lock is taken before the statement
 * writes (a one-time filter, as in lockSimMessage) and held to the transaction's end, so the
 * balance chain's check that follows needs no statement of its own.
 *
 * The SIM's lock first, because each of a SIM's days has two rows that writes lock in the
 * same transaction: the day's counts (daily_reconciliations, `dayUpsert`) and its chain's count
 * of changes (day_chains, by the messages' row trigger, which runs at the end of the statement
 * that wrote the message). Which of them a write takes first differs from path to path (this
 * statement the counts; an update, then addToDay, the chain's row), so two writes of one SIM's
 * day may only meet under the SIM's lock. Without it, two submissions on one SIM at once
 * deadlocked, and PostgreSQL rolled one back: a 503 to the handset (docs/decisions/evidence.md,
 * "A SIM's lock before its day's rows").
 */
export async function insertMessage(em: EntityManager, m: NewMessage): Promise<MessageRecord | undefined> {
  // The new row as the day counts it: what the insert leaves to the columns' defaults is unlinked, undismissed.
  const day = dayUpsert(
    undefined,
    { ...m, is_ambiguous: false, operation_id: null, link: null, dismissed_at: null },
    "m",
  );
  const r = await one<Row>(
    em,
    `with m as (
       insert into evidence.messages (id, sim_id, sms_hash, sender, raw_text, received_at, device_received_at,
         client_message_id, subscription_slot, kind, amount, fee, commission, balance_after, operator_ref,
         counterparty_msisdn, counterparty_name, direction, language, parse_rule, state, outcome, correlated_at)
       select ?::uuid, ?, ?, ?, ?, ?::timestamptz, ?::timestamptz, ?, ?::smallint, ?, ?::bigint, ?::bigint, ?::bigint,
         ?::bigint, ?, ?, ?, ?, ?, ?, ?, ?, ?::timestamptz
        where (select ${SIM_LOCK}) is not null
       on conflict (sim_id, sms_hash) do nothing
       returning ${COLUMNS}),
     day as (${day.sql})
     select * from m`,
    [
      m.id,
      m.sim_id,
      m.sms_hash,
      m.sender,
      m.raw_text,
      m.received_at,
      m.device_received_at,
      m.client_message_id,
      m.subscription_slot,
      m.kind,
      m.amount,
      m.fee,
      m.commission,
      m.balance_after,
      m.operator_ref,
      m.counterparty_msisdn,
      m.counterparty_name,
      m.direction,
      m.language,
      m.parse_rule,
      m.state,
      m.outcome,
      m.state === "done" ? new Date() : null,
      m.sim_id,
      ...day.params,
    ],
  );
  heldSims(em).add(m.sim_id);
  return r && record(r);
}

export async function findByHash(
  em: EntityManager,
  simId: string,
  smsHash: string,
): Promise<MessageRecord | undefined> {
  const r = await one<Row>(em, `select ${COLUMNS} from evidence.messages where sim_id = ? and sms_hash = ?`, [
    simId,
    smsHash,
  ]);
  return r && record(r);
}

export async function findMessage(em: EntityManager, id: string): Promise<MessageRecord | undefined> {
  const r = await one<Row>(em, `select ${COLUMNS} from evidence.messages where id = ?`, [id]);
  return r && record(r);
}

export async function lockMessage(em: EntityManager, id: string): Promise<MessageRecord | undefined> {
  const r = await one<Row>(em, `select ${COLUMNS} from evidence.messages where id = ? for update`, [id]);
  return r && record(r);
}

/**
 * Serializes correlation, attach and dismissal of one SIM's messages until the transaction
 * ends (see message-state.md). Two keys, so the hash space is the SIM id's alone.
 */
export async function lockSim(em: EntityManager, simId: string): Promise<void> {
  // Held until the transaction ends: a second ask in the same one (the chain check after a
  // correlation) needs no statement.
  const held = heldSims(em);
  if (held.has(simId)) return;
  await em.execute(`select ${SIM_LOCK}`, [simId]);
  held.add(simId);
}

/**
 * lockSim, then lockMessage, in one statement: the SIM's lock is an uncorrelated subquery
 * of the filter, which PostgreSQL evaluates once before it reads any row (a one-time
 * filter), so the two locks are taken in the same order as by two statements. The row is
 * read as a lock reads it: a version committed while the statement waited for the SIM's
 * lock is the one returned (the filter is checked again on it), as by a second statement.
 * Anything else this transaction reads must come in a later statement, whose snapshot
 * follows the lock's wait (this one's precedes it).
 */
export async function lockSimMessage(em: EntityManager, simId: string, id: string): Promise<MessageRecord | undefined> {
  const held = heldSims(em);
  if (held.has(simId)) return lockMessage(em, id);
  const r = await one<Row>(
    em,
    `select ${COLUMNS} from evidence.messages
      where id = ? and (select ${SIM_LOCK}) is not null
      for update`,
    [id, simId],
  );
  held.add(simId);
  return r && record(r);
}

/** The message that proved an operation with this operator reference on this SIM, if any. */
export async function findProofByRef(
  em: EntityManager,
  simId: string,
  operatorRef: string,
  exceptId: string,
): Promise<MessageRecord | undefined> {
  const r = await one<Row>(
    em,
    `select ${COLUMNS} from evidence.messages
      where sim_id = ? and operator_ref = ? and link = 'proof' and id <> ?
      order by linked_at limit 1`,
    [simId, operatorRef, exceptId],
  );
  return r && record(r);
}

export interface Correlation {
  outcome: Outcome;
  is_ambiguous: boolean;
  operation_id: string | null;
  link: Link | null;
  linked_by?: string | null;
  operation_snapshot: Uint8Array | null;
  balance_state: BalanceState;
}

/**
 * Records the end of correlation (or a person's attach) on a locked message (`m`, as read
 * under its lock), and adds the change to its day's row (`dayUpsert`) in the same statement:
 * what the day counts of the message after the update is `m` with the correlation's fields,
 * known before it runs.
 */
export async function finishCorrelation(em: EntityManager, m: MessageRecord, c: Correlation): Promise<MessageRecord> {
  const after = {
    ...m,
    state: "done" as const,
    outcome: c.outcome,
    is_ambiguous: c.is_ambiguous,
    operation_id: c.operation_id,
    link: c.link,
  };
  const day = dayUpsert(m, after, "u");
  const r = await one<Row>(
    em,
    `with u as (
       update evidence.messages set state = 'done', outcome = ?, is_ambiguous = ?, operation_id = ?, link = ?,
         linked_at = case when ?::uuid is null then null else now() end, linked_by = ?, operation_snapshot = ?,
         balance_state = ?, correlated_at = coalesce(correlated_at, now()), last_error = null
       where id = ? returning ${COLUMNS}),
     day as (${day.sql})
     select * from u`,
    [
      c.outcome,
      c.is_ambiguous,
      c.operation_id,
      c.link,
      c.operation_id,
      c.linked_by ?? null,
      c.operation_snapshot ? Buffer.from(c.operation_snapshot) : null,
      c.balance_state,
      m.id,
      ...day.params,
    ],
  );
  return record(r!);
}

export async function recordBalance(
  em: EntityManager,
  id: string,
  b: { balance_state: BalanceState; balance: number | null; previous_balance: number | null },
): Promise<MessageRecord> {
  const r = await one<Row>(
    em,
    `update evidence.messages set balance_state = ?, balance = ?, previous_balance = ? where id = ? returning ${COLUMNS}`,
    [b.balance_state, b.balance, b.previous_balance, id],
  );
  return record(r!);
}

/** Counts a failed correlation attempt; the message stays pending for a retry or the re-drive. */
export async function recordAttemptFailure(em: EntityManager, id: string, error: string): Promise<void> {
  await em.execute(
    `update evidence.messages set attempts = attempts + 1, last_attempt_at = now(), last_error = ? where id = ?`,
    [error.slice(0, 500), id],
  );
}

export async function dismissMessage(
  em: EntityManager,
  id: string,
  reason: string,
  by: string,
): Promise<MessageRecord> {
  const r = await one<Row>(
    em,
    `update evidence.messages set dismissed_at = now(), dismiss_reason = ?, dismissed_by = ? where id = ? returning ${COLUMNS}`,
    [reason, by, id],
  );
  return record(r!);
}

/**
 * Messages whose correlation or balance is unfinished, stored before `before`, oldest first.
 * After a failed attempt a message waits 2^attempts seconds (at most 5 minutes) before the
 * next, so a service that stays down is not hammered; it is never given up on.
 */
export async function unfinished(
  em: EntityManager,
  now: Date,
  before: Date,
  limit: number,
): Promise<{ id: string; sim_id: string }[]> {
  return rows(
    em,
    `select id, sim_id from evidence.messages
      where (state = 'pending' or balance_state = 'pending') and stored_at < ?
        and (last_attempt_at is null
             or last_attempt_at < ?::timestamptz - make_interval(secs => least(power(2, attempts), 300)))
      order by stored_at limit ?`,
    [before, now, limit],
  );
}

function windowSql(window: Window, params: unknown[]): string {
  let sql = "";
  if (window.from) {
    sql += " and received_at >= ?";
    params.push(window.from);
  }
  if (window.to) {
    sql += " and received_at < ?";
    params.push(window.to);
  }
  return sql;
}

const kindsSql = (kinds: readonly string[]) => `(${kinds.map((k) => `'${k}'`).join(", ")})`;
const MOVEMENTS_SQL = kindsSql(MOVEMENT_KINDS);
const QUEUE_SQL = kindsSql(UNMATCHED_QUEUE_KINDS);

/**
 * A board list's page, newest first, of the messages `where` admits in the caller's scope. The
 * fleet's page walks the list's own index. An agent's is read SIM by SIM of its grant, a page at
 * most from each SIM's entries (`messages_unmatched_sim`, `messages_movements_sim`), then the
 * newest of those: walking the fleet's entries for the grant's read about as many entries as
 * the fleet has for each one shown, and all of the window's when the grant's SIMs had fewer
 * than a page (Migration0015ScopedQueues).
 */
async function boardPage(
  em: EntityManager,
  where: string,
  scope: Scope,
  window: Window,
  limit: number,
): Promise<EvidenceRecord[]> {
  const params: unknown[] = [];
  let sql: string;
  if (scope.fleet) {
    sql = `select ${EVIDENCE_COLUMNS} from evidence.messages where ${where}${windowSql(window, params)}
      order by received_at desc, id desc limit ?`;
  } else {
    // As JSON: the driver would expand an array parameter into a list, and an empty one into nothing.
    params.push(JSON.stringify([...scope.simIds]));
    // The page's keys from the SIMs' index entries (index-only), then its rows alone: a grant
    // of many SIMs reads a page of entries from each, not a page of whole rows.
    sql = `with page as (
        select x.id from jsonb_array_elements_text(?::jsonb) as g(sim)
        cross join lateral (select id, received_at from evidence.messages
          where sim_id = g.sim and ${where}${windowSql(window, params)}
          order by received_at desc, id desc limit ?) as x
        order by x.received_at desc, x.id desc limit ?)
      select ${EVIDENCE_COLUMNS} from evidence.messages where id in (select id from page)
      order by received_at desc, id desc`;
    params.push(limit);
  }
  params.push(limit);
  return (await rows<Pick<Row, keyof EvidenceRecord>>(em, sql, params)).map(evidenceRecord);
}

/**
 * The unmatched queue: finished messages that name no operation, nobody dismissed, of a
 * kind that could prove something or tells of a refusal (outcomes.ts `inUnmatchedQueue`).
 */
export function listUnmatched(
  em: EntityManager,
  scope: Scope,
  window: Window,
  limit: number,
): Promise<EvidenceRecord[]> {
  return boardPage(
    em,
    `state = 'done' and operation_id is null and dismissed_at is null and (kind is null or kind in ${QUEUE_SQL})`,
    scope,
    window,
    limit,
  );
}

/** Movements, newest first; dismissed ones included. */
export function listMovements(
  em: EntityManager,
  scope: Scope,
  window: Window,
  limit: number,
): Promise<EvidenceRecord[]> {
  return boardPage(em, `kind in ${MOVEMENTS_SQL}`, scope, window, limit);
}

export async function deleteSimMessages(
  em: EntityManager,
  simId: string,
): Promise<{ messages: number; reconciliations: number }> {
  const [m] = await rows<{ n: string }>(
    em,
    `with d as (delete from evidence.messages where sim_id = ? returning 1) select count(*) as n from d`,
    [simId],
  );
  const [d] = await rows<{ n: string }>(
    em,
    `with d as (delete from evidence.daily_reconciliations where sim_id = ? returning 1) select count(*) as n from d`,
    [simId],
  );
  await em.execute(`delete from evidence.day_chains where sim_id = ?`, [simId]);
  return { messages: Number(m.n), reconciliations: Number(d.n) };
}

export async function deleteAllMessages(em: EntityManager): Promise<{ messages: number; reconciliations: number }> {
  const [m] = await rows<{ n: string }>(
    em,
    `with d as (delete from evidence.messages returning 1) select count(*) as n from d`,
  );
  const [d] = await rows<{ n: string }>(
    em,
    `with d as (delete from evidence.daily_reconciliations returning 1) select count(*) as n from d`,
  );
  await em.execute(`delete from evidence.day_chains`);
  return { messages: Number(m.n), reconciliations: Number(d.n) };
}

/**
 * Messages the balance chain reads: finished, the operator's word, not a restatement; of the
 * table's row `alias` (none: unqualified).
 */
export const inChain = (alias?: string) => {
  const t = alias ? `${alias}.` : "";
  return `${t}state = 'done' and ${t}outcome not in ('unknown_sender', 'restated')`;
};
export const IN_CHAIN = inChain();

/**
 * The chain messages that print a balance just before and just after `m` on its SIM, in
 * operator-timestamp order (storage order breaks ties), and whether `m` repeats an operator
 * reference an earlier message of the same kind already put in the chain: the three
 * index probes in one statement, each row tagged with the question it answers.
 */
export async function chainNeighbours(
  em: EntityManager,
  m: MessageRecord,
): Promise<{ previous?: MessageRecord; next?: MessageRecord; repeat: boolean }> {
  const base = `select ${COLUMNS} from evidence.messages where sim_id = ? and id <> ? and ${IN_CHAIN}`;
  const at = [m.sim_id, m.id, m.received_at, m.stored_at];
  const asksRepeat = m.operator_ref !== null && m.kind !== "BAL";
  const found = await rows<Row & { side: "previous" | "next" | "repeat" }>(
    em,
    `(select 'previous' as side, * from (${base} and balance_after is not null and (received_at, stored_at) < (?, ?)
        order by received_at desc, stored_at desc limit 1) p)
     union all
     (select 'next' as side, * from (${base} and balance_after is not null and (received_at, stored_at) > (?, ?)
        order by received_at, stored_at limit 1) n)` +
      (asksRepeat
        ? `
     union all
     (select 'repeat' as side, * from (${base} and operator_ref = ? and kind is not distinct from ?
        and (received_at, stored_at) < (?, ?) limit 1) r)`
        : ""),
    asksRepeat ? [...at, ...at, m.sim_id, m.id, m.operator_ref, m.kind, m.received_at, m.stored_at] : [...at, ...at],
  );
  const side = (s: string) => {
    const r = found.find((f) => f.side === s);
    if (!r) return undefined;
    const { side: _, ...row } = r;
    return record(row);
  };
  return { previous: side("previous"), next: side("next"), repeat: found.some((f) => f.side === "repeat") };
}

/** What the balance chain reads of a message (domain/balance-chain.ts, ChainMessage), and its SIM. */
export const CHAIN_COLUMNS = `id, sim_id, received_at, stored_at, kind, amount, fee, commission, balance_after, direction,
  operator_ref, outcome`;

/**
 * A SIM's last chain message before a time (the parameter) that printed a balance: a lateral
 * subquery over `s.sim_id`, one descent of `messages_sim_balance`. With `only`, a condition
 * over the outer row alone, the descent runs only where it holds (a one-time filter).
 */
export const lastBalanceBefore = (only = "true") => `select ${CHAIN_COLUMNS} from evidence.messages m
  where (${only}) and m.sim_id = s.sim_id and ${IN_CHAIN} and m.balance_after is not null and m.received_at < ?
  order by m.received_at desc, m.stored_at desc limit 1`;
export const LAST_BALANCE_BEFORE = lastBalanceBefore();

/** One SIM's chain of a period: its chain messages, and the last one before that printed a balance. */
export interface PeriodChain {
  before?: ChainMessage;
  messages: ChainMessage[];
}

/**
 * The SIMs' chain messages of [from, to), and for each the last chain message before `from`
 * that printed a balance, in one statement (a day's reconciliation of the fleet, or of one
 * SIM; a page of its balance chain when the chain's beginning fell short): per SIM, a descent
 * of `messages_sim_balance` to its last balance before `from`; the SIMs' messages of the
 * period through `messages_sim_received` (`sim_id = any(...)`, which the planner estimates at
 * 10 SIMs, as many as a reconciliation asks at once: flows/reconciliation.ts, SIMS_PER_SUM). What it reads is those SIMs' messages
 * of the period and a few entries a SIM, never a statement a SIM. Read through
 * `messages_received` with `sim_id in (...)`, as until 2026-12-01, ten SIMs of a fleet's day
 * read all the day's messages to keep a tenth of them (100,001 rows for 10,137 at 100,000
 * messages a day). Only the columns the chain reads (not the text, nor the operation's
 * snapshot).
 */
export async function chainsOfPeriod(
  em: EntityManager,
  simIds: readonly string[],
  from: Date,
  to: Date,
): Promise<Map<string, PeriodChain>> {
  const chains = new Map<string, PeriodChain>(simIds.map((id) => [id, { messages: [] }]));
  if (simIds.length === 0) return chains;
  const found = await rows<ChainRow & { before: boolean }>(
    em,
    `with sims as (${simIds.length === 1 ? "select ?::text as sim_id" : "select distinct jsonb_array_elements_text(?::jsonb) as sim_id"})
     select true as before, b.* from sims s cross join lateral (${LAST_BALANCE_BEFORE}) b
     union all
     select false, ${CHAIN_COLUMNS} from evidence.messages m
      where m.sim_id = any(array(select sim_id from sims)) and ${IN_CHAIN} and m.received_at >= ? and m.received_at < ?`,
    [simIds.length === 1 ? simIds[0] : JSON.stringify(simIds), from, from, to],
  );
  for (const r of found) {
    const chain = chains.get(r.sim_id)!;
    const m = chainMessage(r);
    if (r.before) chain.before = m;
    else chain.messages.push(m);
  }
  return chains;
}

/**
 * One SIM's chain messages of [from, to) from the start, at least `atLeast` of them if it has
 * that many, and the last chain message before `from` that printed a balance (a page of its
 * balance chain: flows/reconciliation.ts balanceChain). The first `atLeast` in
 * `messages_sim_received`'s order, then the rest of the last one's millisecond: the chain
 * orders messages by the millisecond of their time (domain/balance-chain.ts chainOf, as the
 * driver reads a time), so what is read is the chain's beginning, whatever order the messages
 * of that millisecond take in it. One walk of the index, stopped at `atLeast`, and a probe of
 * that millisecond. `whole`: the day was read to its end.
 */
export async function chainBeginning(
  em: EntityManager,
  simId: string,
  from: Date,
  to: Date,
  atLeast: number,
): Promise<PeriodChain & { whole: boolean }> {
  const found = await rows<ChainRow & { before: boolean }>(
    em,
    `with p as materialized (
       select ${CHAIN_COLUMNS} from evidence.messages m
        where m.sim_id = ? and ${IN_CHAIN} and m.received_at >= ? and m.received_at < ?
        order by m.received_at limit ?),
     last as (select date_trunc('milliseconds', max(p.received_at)) as ms from p)
     select true as before, b.* from (select ?::text as sim_id) s cross join lateral (${LAST_BALANCE_BEFORE}) b
     union all
     select false, p.* from p
     union all
     select false, ${CHAIN_COLUMNS} from evidence.messages m
      where m.sim_id = ? and ${IN_CHAIN} and m.received_at >= (select ms from last)
        and m.received_at < least((select ms from last) + interval '1 millisecond', ?)
        and m.id not in (select id from p)`,
    [simId, from, to, atLeast, simId, from, simId, to],
  );
  const chain: PeriodChain = { messages: [] };
  for (const r of found) {
    if (r.before) chain.before = chainMessage(r);
    else chain.messages.push(chainMessage(r));
  }
  return { ...chain, whole: chain.messages.length < atLeast };
}

export type ChainRow = Pick<Row, "id" | "sim_id" | "kind" | "direction" | "operator_ref" | "outcome"> & {
  received_at: Date | string;
  stored_at: Date | string;
  amount: string | number | null;
  fee: string | number | null;
  commission: string | number | null;
  balance_after: string | number | null;
};

export function chainMessage(r: ChainRow): ChainMessage {
  return {
    id: r.id,
    received_at: date(r.received_at)!,
    stored_at: date(r.stored_at)!,
    kind: r.kind,
    amount: num(r.amount),
    fee: num(r.fee),
    commission: num(r.commission),
    balance_after: num(r.balance_after),
    direction: r.direction,
    operator_ref: r.operator_ref,
    outcome: r.outcome,
  };
}

/** What a wording rule may read again: finished, unlinked, undismissed orphans and unknown texts. */
const REREADABLE = `state = 'done' and outcome in ('orphan', 'stored', 'not_correlated')
  and operation_id is null and dismissed_at is null`;

/** The newest rereadable messages (a trial's scan), at most `limit`. */
export async function rereadableNewest(em: EntityManager, limit: number): Promise<MessageRecord[]> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.messages where ${REREADABLE} order by stored_at desc, id desc limit ?`,
    [limit],
  );
  return found.map(record);
}

/** The newest stored messages whatever became of them (a trial's scan of what a rule would read differently). */
export async function storedNewest(em: EntityManager, limit: number): Promise<MessageRecord[]> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.messages where state = 'done' order by stored_at desc, id desc limit ?`,
    [limit],
  );
  return found.map(record);
}

/**
 * The next rereadable messages in storage order after a re-read's cursor (kept on its
 * wording rule row, compared in SQL at the column's full precision), stored at most
 * `marginMs` after its activation.
 */
export async function rereadableAfter(
  em: EntityManager,
  versionId: string,
  marginMs: number,
  limit: number,
): Promise<MessageRecord[]> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.messages m
      where ${REREADABLE}
        and (select m.stored_at <= w.activated_at + make_interval(secs => ? / 1000.0)
                and (w.reread_after_id is null or (m.stored_at, m.id) > (w.reread_after_at, w.reread_after_id))
               from evidence.wording_rules w where w.id = ?)
      order by m.stored_at, m.id limit ?`,
    [marginMs, versionId, limit],
  );
  return found.map(record);
}

/**
 * What a retired version's reading may be taken back from: a finished message it read that
 * names no operation (nothing confirmed, restated or attached by it) and nobody dismissed.
 * Unlike an activation's re-reading, movements and messages dispatch answered ambiguous or
 * divergent are read again too: their reading came from the version being taken back.
 */
const READ_BY_RETIRED = `state = 'done' and outcome in ('orphan', 'stored', 'not_correlated', 'movement', 'ambiguous', 'divergent')
  and operation_id is null and dismissed_at is null`;

/** Which messages a re-reading may change: after an activation, or after a retirement. */
export type RereadScope = "activated" | "retired";

const SCOPES: Record<RereadScope, string> = { activated: REREADABLE, retired: READ_BY_RETIRED };

/**
 * The next messages whose reading came from a retired version (`parse_rule`), and whether one
 * it read is still being correlated (it joins them when it finishes). No cursor: each one read
 * again leaves the set. `like 'taught.%'` lets the planner use the partial index of taught readings.
 */
export async function readByRetired(
  em: EntityManager,
  parseRule: string,
  limit: number,
): Promise<{ messages: MessageRecord[]; pending: boolean }> {
  const found = await rows<Row>(
    em,
    `select ${COLUMNS} from evidence.messages where parse_rule = ? and parse_rule like 'taught.%' and ${READ_BY_RETIRED}
      order by stored_at, id limit ?`,
    [parseRule, limit],
  );
  const pending = await one<{ id: string }>(
    em,
    `select id from evidence.messages where parse_rule = ? and parse_rule like 'taught.%' and state = 'pending' limit 1`,
    [parseRule],
  );
  return { messages: found.map(record), pending: pending !== undefined };
}

export type Reading = Pick<
  MessageRecord,
  | "kind"
  | "amount"
  | "fee"
  | "commission"
  | "balance_after"
  | "operator_ref"
  | "counterparty_msisdn"
  | "counterparty_name"
  | "direction"
  | "language"
  | "parse_rule"
  | "state"
  | "outcome"
>;

/**
 * Records a message's new reading (a locked message, still in the re-reading's scope). A
 * dispatch answer of ambiguity went with the reading it was given for.
 */
export async function recordReading(
  em: EntityManager,
  id: string,
  r: Reading,
  scope: RereadScope,
): Promise<MessageRecord | undefined> {
  const updated = await one<Row>(
    em,
    `update evidence.messages set kind = ?, amount = ?, fee = ?, commission = ?, balance_after = ?, operator_ref = ?,
       counterparty_msisdn = ?, counterparty_name = ?, direction = ?, language = ?, parse_rule = ?, state = ?, outcome = ?,
       is_ambiguous = false, attempts = 0, last_attempt_at = null, last_error = null
     where id = ? and ${SCOPES[scope]} returning ${COLUMNS}`,
    [
      r.kind,
      r.amount,
      r.fee,
      r.commission,
      r.balance_after,
      r.operator_ref,
      r.counterparty_msisdn,
      r.counterparty_name,
      r.direction,
      r.language,
      r.parse_rule,
      r.state,
      r.outcome,
      id,
    ],
  );
  return updated && record(updated);
}
