import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { big, fromTs, isUuid } from "@transferops/kit";
import { DispatchAgentSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { invalid, notFound } from "../domain/reasons.ts";
import { checkReading } from "../domain/sims.ts";
import { agentScope, dispatchContext, lookupSim, recordProvenBalance, revealPin } from "../flows/internal.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toCandidate, toGrant, toSimSummary } from "../flows/mappers.ts";

// The RPCs other services call. They carry no caller of their own: the gateway never
// exposes them, and the network policy admits only the platform's services to fleet.

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  "getDispatchContext" | "revealPin" | "recordProvenBalance" | "lookupSim" | "getAgentScope"
>;

export function internalHandlers(deps: FleetDeps): Impl {
  return {
    async getDispatchContext(req) {
      const { breakerActive, agent, grant, sims } = await dispatchContext(deps, {
        agentId: req.agentId,
        simId: req.simId,
        operator: req.operator || undefined,
      });
      return {
        breakerActive,
        agent: create(DispatchAgentSchema, {
          agentId: req.agentId,
          fullName: agent?.full_name ?? "",
          role: agent?.role ?? "",
          isActive: agent?.is_active ?? false,
          exists: agent !== undefined,
        }),
        grant: agent && grant ? toGrant(agent, grant) : undefined,
        sims: sims.map(toCandidate),
      };
    },

    async revealPin(req) {
      if (!isUuid(req.simId)) throw notFound("sim", req.simId);
      // Only to the device holding the SIM, on a live token (flows/internal.ts).
      return revealPin(deps, req.simId, req.operationId, req.deviceId, req.deviceTokenVersion);
    },

    async recordProvenBalance(req) {
      const now = new Date();
      const observedAt = fromTs(req.observedAt) ?? now;
      const source = req.source || "sms";
      const problems = checkReading(req.balance, observedAt, source, now);
      if (problems.length) throw invalid(problems);
      if (!isUuid(req.simId)) throw notFound("sim", req.simId);
      const r = await recordProvenBalance(deps, {
        simId: req.simId,
        balance: Number(req.balance),
        observedAt,
        source,
        via: "proof",
        messageId: req.messageId,
      });
      return {
        applied: r.applied,
        previousBalance: big(r.previous),
        balance: big(r.sim.balance_mirror),
      };
    },

    async lookupSim(req) {
      if (!isUuid(req.simId)) throw notFound("sim", req.simId);
      return { sim: toSimSummary(await lookupSim(deps, req.simId)) };
    },

    async getAgentScope(req) {
      const scope = isUuid(req.agentId) ? await agentScope(deps, req.agentId) : undefined;
      if (!scope) return { allowedSimIds: [], role: "", isActive: false, fullName: "", exists: false };
      const { agent, grant } = scope;
      return {
        allowedSimIds: grant?.allowed_sim_ids ?? [],
        role: agent.role,
        isActive: agent.is_active,
        fullName: agent.full_name,
        exists: true,
      };
    },
  };
}
