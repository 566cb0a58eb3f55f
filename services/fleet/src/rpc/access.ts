import { isUuid } from "@transferops/kit";
import type { ServiceImpl } from "@connectrpc/connect";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { checkGrant } from "../domain/access.ts";
import { requireAdmin, requireSession } from "../domain/agents.ts";
import { invalid, notFound } from "../domain/reasons.ts";
import { findGrant, upsertGrant } from "../store/access.ts";
import { audit, findAgent, findAgentForUpdate } from "../store/agents.ts";
import { existingSimIds, listSims } from "../store/sims.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toGrant, toOwnSim } from "../flows/mappers.ts";
import { credentialKey } from "../store/credentials.ts";

type Impl = Pick<ServiceImpl<typeof FleetService>, "grantAccess" | "getAgentAccess" | "getOwnLimits" | "listOwnSims">;

export function accessHandlers({ db, credentials }: FleetDeps): Impl {
  return {
    async grantAccess(req) {
      requireAdmin(req.caller);
      if (!isUuid(req.agentId)) throw notFound("agent", req.agentId);
      // A new grant changes what the agent's open streams may read: every gateway hears it
      // and ends them (the board reconnects under the new grant).
      const grant = await credentials.change([credentialKey.agent(req.agentId)], async (em) => {
        const agent = isUuid(req.agentId) ? await findAgentForUpdate(em, req.agentId) : undefined;
        if (!agent) throw notFound("agent", req.agentId);
        const known = await existingSimIds(em, req.allowedSimIds);
        const checked = checkGrant(
          {
            allowed_sim_ids: req.allowedSimIds,
            allowed_op_types: req.allowedOpTypes,
            max_amount: req.maxAmount === undefined ? undefined : Number(req.maxAmount),
          },
          known,
        );
        if (!checked.ok) {
          throw invalid(checked.violations, {
            rejected_sim_ids: checked.rejected.sim_ids,
            rejected_op_types: checked.rejected.op_types,
          });
        }
        const previous = await findGrant(em, agent.id);
        await upsertGrant(em, agent.id, checked.grant, req.caller!.agentId);
        await audit(em, {
          actor: req.caller!.agentId,
          action: "access.grant",
          target: agent.id,
          details: { previous: previous ?? null, grant: checked.grant },
        });
        return toGrant(agent, { agent_id: agent.id, ...checked.grant });
      });
      return { grant };
    },

    async getAgentAccess(req) {
      requireAdmin(req.caller);
      const em = db.em();
      const agent = isUuid(req.agentId) ? await findAgent(em, req.agentId) : undefined;
      if (!agent) throw notFound("agent", req.agentId);
      return { grant: toGrant(agent, await findGrant(em, agent.id)) };
    },

    async getOwnLimits(req) {
      requireSession(req.caller);
      const em = db.em();
      const agent = await findAgent(em, req.caller!.agentId);
      if (!agent) throw notFound("agent", req.caller!.agentId);
      return { grant: toGrant(agent, await findGrant(em, agent.id)) };
    },

    async listOwnSims(req) {
      requireSession(req.caller);
      const em = db.em();
      const grant = await findGrant(em, req.caller!.agentId);
      if (!grant?.allowed_sim_ids.length) return { sims: [] };
      const sims = await listSims(em, { ids: grant.allowed_sim_ids });
      return { sims: sims.map(toOwnSim) };
    },
  };
}
