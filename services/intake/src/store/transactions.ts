import { one, rows, type EntityManager } from "@transferops/kit";
import {
  checkWrite,
  TRANSACTION_STATES,
  type ReceiverFields,
  type TransactionState,
  type Writer,
} from "../domain/index.ts";

/** A row as PostgreSQL returns it through `em.execute` (timestamps may arrive as text). */
export interface TransactionRecord {
  id: string;
  request_id: string;
  parent_request_id: string | null;
  master_transaction_id: string | null;
  contact_id: string;
  customer_name: string | null;
  customer_phone: string | null;
  receiver_name: string;
  receiver_phone: string;
  operator: string;
  received_amount_xaf: string;
  rate: number | null;
  send_amount_eur: number | null;
  partner_verify: boolean;
  receiver_verified: boolean;
  transaction_date: Date | string;
  state: TransactionState;
  launched_by: string | null;
  launched_by_name: string | null;
  launched_at: Date | string | null;
  operation_id: string | null;
  outcome: string | null;
  settled_at: Date | string | null;
  settled_by: string | null;
  settled_by_name: string | null;
  payment_confirmed_at: Date | string | null;
  payment_confirmed_by: string | null;
  cancelled_reason: string | null;
  created_at: Date | string;
  updated_at: Date | string;
}

const T = "intake.transactions";

/** Intake's one write: the transfer details. Null when the request_id is taken (nothing written). */
export async function insertTransaction(
  em: EntityManager,
  values: Record<string, unknown>,
): Promise<TransactionRecord | undefined> {
  const columns = Object.keys(values);
  checkWrite("intake", columns);
  return one<TransactionRecord>(
    em,
    `insert into ${T} (${columns.join(", ")}) values (${columns.map(() => "?").join(", ")})
     on conflict (request_id) do nothing returning *`,
    Object.values(values),
  );
}

export async function findTransaction(em: EntityManager, id: string, lock = false) {
  return one<TransactionRecord>(em, `select * from ${T} where id = ?${lock ? " for update" : ""}`, [id]);
}

export async function findByRequestId(em: EntityManager, requestId: string) {
  return one<TransactionRecord>(em, `select * from ${T} where request_id = ?`, [requestId]);
}

/**
 * A conditional update: sets `values` (columns the writer owns, plus updated_at) on the
 * row where `where` holds. Returns the row after, or undefined when nothing matched.
 */
export async function updateWhere(
  em: EntityManager,
  writer: Writer,
  id: string,
  values: Record<string, unknown>,
  where = "true",
  whereParams: unknown[] = [],
): Promise<TransactionRecord | undefined> {
  const columns = Object.keys(values);
  checkWrite(writer, columns);
  const set = columns.map((c) => `${c} = ?`).join(", ");
  return one<TransactionRecord>(
    em,
    `update ${T} set ${set}, updated_at = clock_timestamp() where id = ? and (${where}) returning *`,
    [...Object.values(values), id, ...whereParams],
  );
}

export interface ListScope {
  state: TransactionState | null;
  limit: number;
  /** Null for an admin (everything); otherwise pending work plus what this agent launched. */
  agentId: string | null;
}

/** A part of the list: rows one index range holds in the list's order (Migration0006ListIndexes). */
interface ListPart {
  where: string;
  params: unknown[];
}

/**
 * The list's rows as disjoint parts, each read newest first from an index that starts with its
 * equalities: everything (`transactions_newest`), a state (`transactions_state_newest`), an
 * agent's launches in a state (`transactions_agent_state`). An agent sees every pending
 * transaction and what it launched in the other states: one part each.
 */
function listParts(q: ListScope): ListPart[] {
  if (!q.agentId) return [q.state ? { where: "state = ?", params: [q.state] } : { where: "true", params: [] }];
  return (q.state ? [q.state] : TRANSACTION_STATES).map((state) =>
    state === "pending"
      ? { where: "state = ?", params: [state] }
      : { where: "launched_by = ? and state = ?", params: [q.agentId, state] },
  );
}

/**
 * Newest first. Each part's page is read from its index and the pages merged (a Merge Append
 * pulls from each only the rows the limit takes), the same plan generic or planned for its
 * values: a page reads about a page of entries whatever the history holds. As one filtered walk
 * of `transactions_newest` it read every transaction for a rare state or an agent with few
 * launches (docs/decisions/history.md, "Per table").
 */
export async function listTransactions(em: EntityManager, q: ListScope): Promise<TransactionRecord[]> {
  const parts = listParts(q);
  const pages = parts.map((p) => `(select * from ${T} where ${p.where} order by created_at desc, id desc limit ?)`);
  return rows<TransactionRecord>(
    em,
    `select * from (${pages.join(" union all ")}) t order by created_at desc, id desc limit ?`,
    [...parts.flatMap((p) => [...p.params, q.limit]), q.limit],
  );
}

/** Launched transactions whose operation was never recorded and whose claim is older than `staleMs`. */
export async function unlinkedClaims(em: EntityManager, staleMs: number, limit: number): Promise<string[]> {
  const r = await rows<{ id: string }>(
    em,
    `select id from ${T} where state = 'launched' and operation_id is null
       and launched_at < clock_timestamp() - (? * interval '1 millisecond') order by launched_at limit ?`,
    [staleMs, limit],
  );
  return r.map((x) => x.id);
}

/** Test switch: protection (3) of the launch off (its unique index dropped), to show (1) and (2) hold without it. */
export async function dropOneOperationPerTransaction(em: EntityManager): Promise<void> {
  await em.execute(`drop index if exists intake.transactions_operation_id`);
}

/** One rewrite of a transaction's receiver, as stored (never changed or deleted). */
export interface ReceiverChangeRecord {
  id: string;
  transaction_id: string;
  agent_id: string;
  agent_name: string;
  changed_at: Date | string;
  before: ReceiverFields;
  after: ReceiverFields;
  receiver_verified: boolean;
}

export async function insertReceiverChange(
  em: EntityManager,
  c: Omit<ReceiverChangeRecord, "changed_at">,
): Promise<ReceiverChangeRecord> {
  return (await one<ReceiverChangeRecord>(
    em,
    `insert into intake.receiver_changes (id, transaction_id, agent_id, agent_name, before, after, receiver_verified)
     values (?, ?, ?, ?, ?::jsonb, ?::jsonb, ?) returning *`,
    [
      c.id,
      c.transaction_id,
      c.agent_id,
      c.agent_name,
      JSON.stringify(c.before),
      JSON.stringify(c.after),
      c.receiver_verified,
    ],
  ))!;
}

/** A transaction's receiver rewrites, oldest first. */
export async function receiverChanges(em: EntityManager, transactionId: string): Promise<ReceiverChangeRecord[]> {
  return rows<ReceiverChangeRecord>(
    em,
    `select * from intake.receiver_changes where transaction_id = ? order by changed_at, id`,
    [transactionId],
  );
}
