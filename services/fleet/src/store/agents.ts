import { one, PLANNED_AT_EACH_CALL, rows, type EntityManager } from "@transferops/kit";
import type { AuditFilter } from "../domain/audit.ts";
import { date } from "./values.ts";
import type { AgentRecord, Role } from "../domain/agents.ts";

const COLUMNS = `id, login, full_name, role, is_active, must_change_password, password_hash, created_at`;

export async function findAgent(em: EntityManager, id: string): Promise<AgentRecord | undefined> {
  return one<AgentRecord>(em, `select ${COLUMNS} from fleet.agents where id = ?`, [id]);
}

export async function findAgentForUpdate(em: EntityManager, id: string): Promise<AgentRecord | undefined> {
  return one<AgentRecord>(em, `select ${COLUMNS} from fleet.agents where id = ? for update`, [id]);
}

export async function findAgentByLogin(em: EntityManager, login: string): Promise<AgentRecord | undefined> {
  return one<AgentRecord>(em, `select ${COLUMNS} from fleet.agents where lower(login) = lower(?)`, [login]);
}

export async function listAgents(em: EntityManager): Promise<AgentRecord[]> {
  return rows<AgentRecord>(em, `select ${COLUMNS} from fleet.agents order by created_at, login`);
}

/** Holds the bootstrap's lock until the transaction ends: one bootstrap at a time. */
export async function lockBootstrap(em: EntityManager): Promise<void> {
  await em.execute(`select pg_advisory_xact_lock(hashtext('fleet.bootstrap'))`);
}

export async function adminExists(em: EntityManager): Promise<boolean> {
  return (await rows(em, `select 1 from fleet.agents where role = 'admin' limit 1`)).length > 0;
}

/** Inserts an agent; returns undefined when the login is taken (unique index). */
export async function insertAgent(
  em: EntityManager,
  a: { id: string; login: string; full_name: string; role: Role; password_hash: string },
): Promise<AgentRecord | undefined> {
  return one<AgentRecord>(
    em,
    `insert into fleet.agents (id, login, full_name, role, password_hash) values (?, ?, ?, ?, ?)
     on conflict ((lower(login))) do nothing returning ${COLUMNS}`,
    [a.id, a.login, a.full_name, a.role, a.password_hash],
  );
}

export async function updateAgent(
  em: EntityManager,
  id: string,
  change: {
    full_name?: string;
    is_active?: boolean;
    role?: Role;
    password_hash?: string;
    must_change_password?: boolean;
  },
): Promise<AgentRecord | undefined> {
  const sets: string[] = [];
  const params: unknown[] = [];
  for (const [k, v] of Object.entries(change)) {
    if (v === undefined) continue;
    sets.push(`${k} = ?`);
    params.push(v);
  }
  sets.push("updated_at = now()");
  return one<AgentRecord>(em, `update fleet.agents set ${sets.join(", ")} where id = ? returning ${COLUMNS}`, [
    ...params,
    id,
  ]);
}

export interface AuditEntry {
  actor?: string;
  action: string;
  target?: string;
  details?: Record<string, unknown>;
}

export async function audit(em: EntityManager, entry: AuditEntry): Promise<void> {
  const { sql, params } = auditInsert(entry);
  await em.execute(sql, params);
}

/**
 * The audit row's insert as SQL text and parameters, for a statement of its own or a CTE of
 * another. With `rows`, one row for each row its `from …` clause gives (none, none written),
 * `rows.details` (SQL over those rows, a jsonb object) added to the entry's details.
 */
export function auditInsert(
  entry: AuditEntry,
  rows?: { from: string; params: unknown[]; details?: string },
): { sql: string; params: unknown[] } {
  const insert = `insert into fleet.audit_log (actor_agent_id, action, target_id, details)`;
  const params = [entry.actor ?? null, entry.action, entry.target ?? null, JSON.stringify(entry.details ?? {})];
  if (!rows) return { sql: `${insert} values (?, ?, ?, ?)`, params };
  return {
    sql: `${insert} select ?::uuid, ?::text, ?::text, ?::jsonb${rows.details ? ` || ${rows.details}` : ""} ${rows.from}`,
    params: [...params, ...rows.params],
  };
}

export interface AuditRecord {
  id: string;
  at: Date;
  actor_agent_id: string | null;
  action: string;
  target_id: string | null;
  details: Record<string, unknown>;
}

/**
 * The audit log, newest first (id order, numeric: the order rows were written). Each filter has
 * an index that starts with its column and ends with `id` (Migration0007AuditFilters): a filtered
 * page reads its entries newest first and stops at the page. With an action (exact or a prefix)
 * the statement is planned at each call for its values (kit PLANNED_AT_EACH_CALL): under a
 * generic plan a rare or absent action walks the primary key through the whole window, and a
 * prefix reads the whole log (docs/decisions/history.md). A prefix no action starts with still
 * reads the whole log (left, docs/decisions/fleet.md).
 */
export async function listAudit(em: EntityManager, f: AuditFilter): Promise<AuditRecord[]> {
  const where: string[] = [];
  const params: unknown[] = [];
  const add = (sql: string, v: unknown) => {
    where.push(sql);
    params.push(v);
  };
  if (f.action && "exact" in f.action) add(`action = ?`, f.action.exact);
  if (f.action && "prefix" in f.action) add(`starts_with(action, ?)`, f.action.prefix);
  if (f.target) add(`target_id = ?`, f.target);
  if (f.actor) add(`actor_agent_id = ?::uuid`, f.actor);
  if (f.from) add(`at >= ?`, f.from);
  if (f.to) add(`at < ?`, f.to);
  if (f.before) add(`id < ?::bigint`, f.before);
  const planned = f.action ? PLANNED_AT_EACH_CALL : "";
  const list = await rows<AuditRecord>(
    em,
    `${planned}select id::text as id, at, actor_agent_id, action, target_id, details from fleet.audit_log
     ${where.length ? `where ${where.join(" and ")}` : ""} order by audit_log.id desc limit ?`,
    [...params, f.limit],
  );
  return list.map((r) => ({ ...r, at: date(r.at) }));
}
