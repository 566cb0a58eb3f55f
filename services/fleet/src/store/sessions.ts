import { one, type EntityManager } from "@transferops/kit";
import type { AgentRecord } from "../domain/agents.ts";

export async function insertSession(
  em: EntityManager,
  s: { id: string; agent_id: string; token_hash: string; created_at: Date; expires_at: Date },
): Promise<void> {
  await em.execute(
    `insert into fleet.sessions (id, agent_id, token_hash, created_at, expires_at) values (?, ?, ?, ?, ?)`,
    [s.id, s.agent_id, s.token_hash, s.created_at, s.expires_at],
  );
}

/** A live session (not revoked, not expired) and its agent. */
export async function findLiveSession(
  em: EntityManager,
  tokenHash: string,
): Promise<(AgentRecord & { session_id: string; expires_at: Date }) | undefined> {
  return one(
    em,
    `select s.id as session_id, s.expires_at, a.id, a.login, a.full_name, a.role, a.is_active, a.must_change_password, a.created_at
       from fleet.sessions s join fleet.agents a on a.id = s.agent_id
      where s.token_hash = ? and s.revoked_at is null and s.expires_at > now()`,
    [tokenHash],
  );
}

export async function revokeSession(em: EntityManager, sessionId: string): Promise<void> {
  await em.execute(`update fleet.sessions set revoked_at = now() where id = ? and revoked_at is null`, [sessionId]);
}

/** Revokes every live session of an agent; the records are kept. */
export async function revokeAgentSessions(em: EntityManager, agentId: string): Promise<number> {
  const r = (await em.execute(
    `update fleet.sessions set revoked_at = now() where agent_id = ? and revoked_at is null returning id`,
    [agentId],
  )) as unknown[];
  return r.length;
}
