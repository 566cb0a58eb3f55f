import { isUuid } from "@transferops/kit";
import type { AccessGrant } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import { checkGrant, type GrantInput } from "../domain/access.ts";
import { invalid, notFound } from "../domain/reasons.ts";
import { findGrant, upsertGrant } from "../store/access.ts";
import { audit, findAgent, findAgentForUpdate } from "../store/agents.ts";
import { credentialKey } from "../store/credentials.ts";
import { existingSimIds, listSims, type SimWithDevice } from "../store/sims.ts";
import { toGrant } from "./mappers.ts";
import type { FleetDeps } from "./ports.ts";

/**
 * An agent's new access grant, checked against the SIMs that exist, audited. A new grant
 * changes what the agent's open streams may read: every gateway hears it and ends them
 * (the board reconnects under the new grant).
 */
export async function grantAccess(
  { credentials }: FleetDeps,
  actor: string,
  agentId: string,
  input: GrantInput,
): Promise<AccessGrant> {
  return credentials.change([credentialKey.agent(agentId)], async (em) => {
    const agent = isUuid(agentId) ? await findAgentForUpdate(em, agentId) : undefined;
    if (!agent) throw notFound("agent", agentId);
    const known = await existingSimIds(em, [...input.allowed_sim_ids]);
    const checked = checkGrant(input, known);
    if (!checked.ok) {
      throw invalid(checked.violations, {
        rejected_sim_ids: checked.rejected.sim_ids,
        rejected_op_types: checked.rejected.op_types,
      });
    }
    const previous = await findGrant(em, agent.id);
    await upsertGrant(em, agent.id, checked.grant, actor);
    await audit(em, {
      actor,
      action: "access.grant",
      target: agent.id,
      details: { previous: previous ?? null, grant: checked.grant },
    });
    return toGrant(agent, { agent_id: agent.id, ...checked.grant });
  });
}

/** The agent's grant (the defaults where none was given), or 404. */
export async function agentAccess({ db }: FleetDeps, agentId: string): Promise<AccessGrant> {
  const em = db.em();
  const agent = isUuid(agentId) ? await findAgent(em, agentId) : undefined;
  if (!agent) throw notFound("agent", agentId);
  return toGrant(agent, await findGrant(em, agent.id));
}

/** The SIMs the agent's grant allows. */
export async function ownSims({ db }: FleetDeps, agentId: string): Promise<SimWithDevice[]> {
  const em = db.em();
  const grant = await findGrant(em, agentId);
  if (!grant?.allowed_sim_ids.length) return [];
  return listSims(em, { ids: grant.allowed_sim_ids });
}

/** The calling agent's own grant. */
export async function ownGrant({ db }: FleetDeps, agentId: string): Promise<AccessGrant> {
  const em = db.em();
  const agent = await findAgent(em, agentId);
  if (!agent) throw notFound("agent", agentId);
  return toGrant(agent, await findGrant(em, agent.id));
}
