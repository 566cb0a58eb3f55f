import { isUuid } from "@transferops/kit";
import type { ServiceImpl } from "@connectrpc/connect";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin, requireSession } from "../domain/agents.ts";
import { notFound } from "../domain/reasons.ts";
import { agentAccess, grantAccess, ownGrant, ownSims } from "../flows/access.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toOwnSim } from "../flows/mappers.ts";

type Impl = Pick<ServiceImpl<typeof FleetService>, "grantAccess" | "getAgentAccess" | "getOwnLimits" | "listOwnSims">;

export function accessHandlers(deps: FleetDeps): Impl {
  return {
    async grantAccess(req) {
      requireAdmin(req.caller);
      if (!isUuid(req.agentId)) throw notFound("agent", req.agentId);
      const grant = await grantAccess(deps, req.caller!.agentId, req.agentId, {
        allowed_sim_ids: req.allowedSimIds,
        allowed_op_types: req.allowedOpTypes,
        max_amount: req.maxAmount === undefined ? undefined : Number(req.maxAmount),
      });
      return { grant };
    },

    async getAgentAccess(req) {
      requireAdmin(req.caller);
      return { grant: await agentAccess(deps, req.agentId) };
    },

    async getOwnLimits(req) {
      requireSession(req.caller);
      return { grant: await ownGrant(deps, req.caller!.agentId) };
    },

    async listOwnSims(req) {
      requireSession(req.caller);
      return { sims: (await ownSims(deps, req.caller!.agentId)).map(toOwnSim) };
    },
  };
}
