import { rows, type EntityManager } from "@transferops/kit";
import { fromRow, type OperationRecord } from "./operations.ts";
import { toNumber } from "./sql.ts";

/** null: the whole fleet; otherwise the agent's own operations plus those on its granted SIMs. */
export interface QueueScopeFilter {
  agent_id: string | null;
  sim_ids: readonly string[];
}

export interface QueueFilter {
  scope: QueueScopeFilter | null;
  from: Date | null;
  to: Date | null;
  limit: number;
}

function scoped(where: string[], params: unknown[], scope: QueueScopeFilter | null): void {
  if (scope === null) return;
  if (scope.sim_ids.length > 0) {
    where.push(`(o.agent_id = ? or o.sim_id in (?))`);
    params.push(scope.agent_id, [...scope.sim_ids]);
  } else {
    where.push(`o.agent_id = ?`);
    params.push(scope.agent_id);
  }
}

function window(where: string[], params: unknown[], column: string, f: { from: Date | null; to: Date | null }): void {
  if (f.from) {
    where.push(`${column} >= ?`);
    params.push(f.from);
  }
  if (f.to) {
    where.push(`${column} < ?`);
    params.push(f.to);
  }
}

/** What both queues show of an operation (flows/mappers.ts, `toUnproven` and `toSettledOnWord`). */
type QueueRowRecord = Pick<
  OperationRecord,
  | "operation_id"
  | "request_id"
  | "montant"
  | "msisdn_dest"
  | "dest_name"
  | "contact_id"
  | "sim_id"
  | "device_id"
  | "finished_at"
>;

/**
 * A queue row's columns, and no more: a page of 50 read every operation column (46, and a probe
 * of the retries for each), of which a row shows 12 or 13; each column a row is a parse in the
 * driver (docs/decisions/history.md, "A page's rows: the columns a row shows").
 */
const QUEUE_ROW_COLUMNS = `o.operation_id, o.request_id, o.montant, o.msisdn_dest, o.dest_name, o.contact_id,
  o.sim_id, o.device_id, o.finished_at`;

/** What the arbitration queue shows of an operation. */
export interface UnprovenRecord
  extends QueueRowRecord, Pick<OperationRecord, "status" | "op_type" | "ussd_response" | "contradicting_message_id"> {
  /** The ambiguous proofs naming the operation among their candidates. */
  ambiguous: number;
}

/** The ambiguous proofs naming each are counted in the page's statement, a probe of the partial GIN index `proofs_ambiguous` a row. */
const UNPROVEN_COLUMNS = `${QUEUE_ROW_COLUMNS}, o.status, o.op_type, o.ussd_response, o.contradicting_message_id,
  (select count(*) from dispatch.proofs a
    where a.outcome = 'ambiguous' and a.candidate_operation_ids @> jsonb_build_array(o.operation_id)) as ambiguous`;

/**
 * Transfers that dialled and got no proof (no_evidence), and first of all those failed or
 * rejected that an operator's message then proved (contradicting evidence: a person said it
 * failed, the operator says it went); newest finished first; windowed on finished_at.
 *
 * The page is read in the order of the partial indexes (docs/decisions/history.md): each part
 * of the order (contradicted or not, finished_at known or not) is a walk of its index newest
 * first that stops at the page (`operations_contradicted_page`, in the branch's order with what
 * its filter reads: Migration0018ContradictedPage; `operations_no_evidence_page`, in the
 * branch's order, so that even the statement's generic plan walks it: Migration0015UnprovenOrder),
 * and only the page's rows are read whole. In an agent's scope each part with a `finished_at` (the contradicted and the
 * backlog) is read SIM by SIM of the grant and from the agent's own (`scopedUnprovenPage`).
 * One statement whose order the indexes cannot give (`desc nulls last` on an ascending index,
 * the contradicted first) read and sorted the window's whole backlog.
 */
export async function listUnproven(em: EntityManager, f: QueueFilter): Promise<UnprovenRecord[]> {
  const base: string[] = [`o.op_type not in ('balance', 'mini_statement')`];
  const baseParams: unknown[] = [];
  window(base, baseParams, "o.finished_at", f);
  const filters = [...base];
  const filterParams = [...baseParams];
  scoped(filters, filterParams, f.scope);
  const contradicted = `o.contradicting_message_id is not null and (o.status = 'no_evidence' or
    (o.status in ('failed', 'rejected') and (o.started_at is not null or o.origin = 'matching')))`;
  const plain = `o.contradicting_message_id is null and o.status = 'no_evidence'`;
  const parts: string[] = [];
  const params: unknown[] = [];
  for (const which of [contradicted, plain]) {
    for (const [finished, order] of [
      ["o.finished_at is not null", "o.finished_at desc, o.operation_id"],
      ["o.finished_at is null", "o.operation_id"],
    ]) {
      const where = `${which} and ${finished}`;
      if (finished === "o.finished_at is not null" && f.scope !== null) {
        // Each part in an agent's scope: SIM by SIM of the grant, and its own.
        const page = scopedUnprovenPage(`${where} and ${base.join(" and ")}`, baseParams, f.scope, f.limit);
        parts.push(page.sql);
        params.push(...page.params);
        continue;
      }
      parts.push(`(select o.operation_id, o.contradicting_message_id is null as plain, o.finished_at
        from dispatch.operations o where ${where} and ${filters.join(" and ")}
        order by ${order} limit ${f.limit})`);
      params.push(...filterParams);
    }
  }
  const found = await rows<Record<string, unknown>>(
    em,
    `with page as (
       select * from (${parts.join("\n union all ")}) u
        order by u.plain, u.finished_at desc nulls last, u.operation_id limit ${f.limit})
     select ${UNPROVEN_COLUMNS} from page p join dispatch.operations o on o.operation_id = p.operation_id
      order by p.plain, p.finished_at desc nulls last, p.operation_id`,
    params,
  );
  return found.map((raw) => ({ ...fromRow<UnprovenRecord>(raw), ambiguous: toNumber(raw.ambiguous) ?? 0 }));
}

/**
 * A part of the arbitration queue in an agent's scope (its grant's SIMs, then its own
 * operations): for each SIM of the grant, a page at most of its newest, and a page at most of the
 * agent's own, their newest page merged (an operation both on a granted SIM and the agent's
 * counted once). The backlog's part reads `operations_no_evidence_sim` and `_agent`
 * (Migration0016ScopedQueues), the contradicted part `operations_contradicted_sim` and `_agent`
 * (Migration0017ScopedContradicted). Walking the fleet's entries for the scope read about 50 over
 * the scope's share, and every entry of the window (of the history, with `all`) when the scope
 * had fewer than a page.
 * `cond` is the part's condition and the window; `condParams` its parameters.
 */
function scopedUnprovenPage(
  cond: string,
  condParams: readonly unknown[],
  scope: QueueScopeFilter,
  limit: number,
): { sql: string; params: unknown[] } {
  const newest = `order by o.finished_at desc, o.operation_id limit ${limit}`;
  const sql = `(select * from (
      select x.operation_id, x.plain, x.finished_at from jsonb_array_elements_text(?::jsonb) as g(sim)
        cross join lateral (select o.operation_id, o.contradicting_message_id is null as plain, o.finished_at
          from dispatch.operations o where o.sim_id = g.sim and ${cond} ${newest}) as x
      union
      (select o.operation_id, o.contradicting_message_id is null as plain, o.finished_at
        from dispatch.operations o where o.agent_id = ? and ${cond} ${newest})) s
    order by s.finished_at desc, s.operation_id limit ${limit})`;
  return { sql, params: [JSON.stringify([...scope.sim_ids]), ...condParams, scope.agent_id, ...condParams] };
}

/** What the settled-on-word queue shows of an operation. */
export type SettledOnWordRecord = QueueRowRecord &
  Pick<OperationRecord, "decided_at" | "decided_by_name" | "decision_note">;

const SETTLED_ON_WORD_COLUMNS = `${QUEUE_ROW_COLUMNS}, o.decided_at, o.decided_by_name, o.decision_note`;

/**
 * Confirmed by a person (board settle `arrived`, admin arbitration `confirmed`) while no
 * operator message proves it: it leaves the list as soon as any evidence attaches.
 * Windowed on the decision time. Walks `operations_settled_on_word` (partial on this
 * predicate, in this order: Migration0016ScopedQueues), which holds these alone: a page
 * reads a page, and an agent's scope what the window holds of them at most.
 */
export async function listSettledOnWord(em: EntityManager, f: QueueFilter): Promise<SettledOnWordRecord[]> {
  const where = [
    `o.status = 'confirmed'`,
    `o.confirmed_by in ('settle', 'arbitrate')`,
    `o.evidence_message_id is null`,
  ];
  const params: unknown[] = [];
  scoped(where, params, f.scope);
  window(where, params, "o.decided_at", f);
  const found = await rows<Record<string, unknown>>(
    em,
    `select ${SETTLED_ON_WORD_COLUMNS} from dispatch.operations o where ${where.join(" and ")}
      order by o.decided_at desc, o.operation_id limit ${f.limit}`,
    params,
  );
  return found.map((raw) => fromRow<SettledOnWordRecord>(raw));
}
