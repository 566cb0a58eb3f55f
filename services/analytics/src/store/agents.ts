import { rows, type EntityManager } from "@transferops/kit";

export interface KnownAgentRow {
  agent_id: string;
  full_name: string;
  role: string;
  is_active: boolean;
}

/** Keeps the newest state of an agent: an older event never overwrites a newer one. */
export async function upsertAgent(em: EntityManager, a: KnownAgentRow, occurredAt: Date): Promise<void> {
  await em.execute(
    `insert into analytics.agents (agent_id, full_name, role, is_active, updated_at) values (?, ?, ?, ?, ?)
     on conflict (agent_id) do update set full_name = excluded.full_name, role = excluded.role,
       is_active = excluded.is_active, updated_at = excluded.updated_at
     where analytics.agents.updated_at <= excluded.updated_at`,
    [a.agent_id, a.full_name, a.role, a.is_active, occurredAt],
  );
}

export async function listAgents(em: EntityManager): Promise<KnownAgentRow[]> {
  return rows<KnownAgentRow>(
    em,
    `select agent_id, full_name, role, is_active from analytics.agents order by full_name`,
  );
}
