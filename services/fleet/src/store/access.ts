import { one, type EntityManager } from "@transferops/kit";
import type { Grant } from "../domain/access.ts";
import { ARRAY_FROM_JSON, int, jsonList } from "./values.ts";

export interface GrantRecord {
  agent_id: string;
  allowed_sim_ids: string[];
  allowed_op_types: string[];
  max_amount: number;
}

export async function findGrant(em: EntityManager, agentId: string): Promise<GrantRecord | undefined> {
  const r = await one<GrantRecord>(
    em,
    `select agent_id, allowed_sim_ids::text[] as allowed_sim_ids, allowed_op_types, max_amount from fleet.access_grants where agent_id = ?`,
    [agentId],
  );
  return r && { ...r, max_amount: int(r.max_amount) };
}

/** Replaces the agent's grant as a whole. */
export async function upsertGrant(em: EntityManager, agentId: string, g: Grant, by: string): Promise<void> {
  await em.execute(
    `insert into fleet.access_grants (agent_id, allowed_sim_ids, allowed_op_types, max_amount, updated_by)
     values (?, ${ARRAY_FROM_JSON}::uuid[], ${ARRAY_FROM_JSON}, ?, ?)
     on conflict (agent_id) do update set allowed_sim_ids = excluded.allowed_sim_ids, allowed_op_types = excluded.allowed_op_types,
       max_amount = excluded.max_amount, updated_by = excluded.updated_by, updated_at = now()`,
    [agentId, jsonList(g.allowed_sim_ids), jsonList(g.allowed_op_types), g.max_amount, by],
  );
}

/** Takes a deleted SIM out of every grant; returns the agents whose grant named it. */
export async function removeSimFromGrants(em: EntityManager, simId: string): Promise<string[]> {
  const r = (await em.execute(
    `update fleet.access_grants set allowed_sim_ids = array_remove(allowed_sim_ids, ?::uuid), updated_at = now()
      where ?::uuid = any(allowed_sim_ids) returning agent_id`,
    [simId, simId],
  )) as { agent_id: string }[];
  return r.map((x) => x.agent_id);
}
