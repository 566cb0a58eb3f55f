import { one, rows, type EntityManager } from "@transferops/kit";

const count = async (em: EntityManager, sql: string): Promise<number> => (await one<{ n: number }>(em, sql))?.n ?? 0;
const deleted = async (em: EntityManager, sql: string): Promise<number> =>
  (await rows(em, sql + " returning 1")).length;

/**
 * Deletes fleet's production data in the caller's transaction: notifications, webhook
 * deliveries (with their attempts), SIMs, devices, every session and every non-admin
 * agent. Returns rows deleted per table.
 */
export async function deleteProductionData(
  em: EntityManager,
): Promise<{ deleted: Record<string, number>; agentIds: string[] }> {
  // Lock the tables being emptied so no heartbeat, SIM or login lands half-way.
  await em.execute(`lock table fleet.sims, fleet.devices, fleet.sessions, fleet.agents in share row exclusive mode`);
  const attempts = await count(em, `select count(*)::int as n from fleet.webhook_attempts`);
  const result: Record<string, number> = {};
  result.notifications = await deleted(em, `delete from fleet.notifications`);
  result.webhook_deliveries = await deleted(em, `delete from fleet.webhook_deliveries`);
  result.webhook_attempts = attempts;
  result.sims = await deleted(em, `delete from fleet.sims`);
  result.devices = await deleted(em, `delete from fleet.devices`);
  result.sessions = await deleted(em, `delete from fleet.sessions`);
  const agents = await rows<{ id: string }>(em, `delete from fleet.agents where role <> 'admin' returning id`);
  result.agents = agents.length;
  return { deleted: result, agentIds: agents.map((a) => a.id) };
}

/** Rows the reset keeps, per table. */
export async function countPreserved(em: EntityManager): Promise<Record<string, number>> {
  return {
    access_profiles: await count(em, `select count(*)::int as n from fleet.access_grants`),
    limits: await count(em, `select count(*)::int as n from fleet.fleet_limits`),
    audit_log: await count(em, `select count(*)::int as n from fleet.audit_log`),
    admin_agents: await count(em, `select count(*)::int as n from fleet.agents where role = 'admin'`),
    webhooks: await count(em, `select count(*)::int as n from fleet.webhooks`),
  };
}
