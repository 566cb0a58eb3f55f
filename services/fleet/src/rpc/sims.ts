import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { big, fromTs } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin, requireApiKey } from "../domain/agents.ts";
import { pinAad, seal } from "../domain/pin-crypto.ts";
import { invalid } from "../domain/reasons.ts";
import { checkNewSim, checkReading, checkSimPatch, parseSlot, type SimPatch } from "../domain/sims.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toSim } from "../flows/mappers.ts";
import {
  assignSim,
  createSim,
  deleteSim,
  getSim,
  listSims,
  recordSimBalance,
  simHistory,
  unassignSim,
  updateSim,
} from "../flows/sims.ts";

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  | "listSims"
  | "getSim"
  | "createSim"
  | "updateSim"
  | "deleteSim"
  | "assignSim"
  | "unassignSim"
  | "recordSimBalance"
  | "getSimHistory"
>;

export function simsHandlers(deps: FleetDeps): Impl {
  return { ...simReads(deps), ...simWrites(deps) };
}

/** Reading SIMs. */
function simReads(deps: FleetDeps): Pick<Impl, "listSims" | "getSim" | "getSimHistory"> {
  return {
    async listSims(req) {
      requireAdmin(req.caller);
      return { sims: (await listSims(deps, req.unassigned)).map(toSim) };
    },
    async getSim(req) {
      requireAdmin(req.caller);
      return { sim: toSim(await getSim(deps, req.simId)) };
    },
    async getSimHistory(req) {
      requireAdmin(req.caller);
      const { sim, activity } = await simHistory(deps, req.simId);
      return {
        simId: sim.id,
        totalOperations: activity.totalOperations,
        totalConfirmed: activity.totalConfirmed,
        totalFailed: activity.totalFailed,
        totalNoEvidence: activity.totalNoEvidence,
        balanceMirror: big(sim.balance_mirror),
        operations: activity.operations.map((o) => ({
          operationId: o.operationId,
          status: o.status,
          opType: o.opType,
          montant: o.montant,
          msisdnDest: o.msisdnDest,
          createdAt: o.createdAt,
          finishedAt: o.finishedAt,
        })),
      };
    },
  };
}

/** Changing SIMs. */
function simWrites(
  deps: FleetDeps,
): Pick<Impl, "createSim" | "updateSim" | "deleteSim" | "assignSim" | "unassignSim" | "recordSimBalance"> {
  const { config } = deps;
  return {
    async createSim(req) {
      requireAdmin(req.caller);
      const problems = checkNewSim(req);
      if (problems.length) throw invalid(problems);
      const id = randomUUID();
      const pin = seal(config.pinKeyring, req.pin, pinAad(id));
      const sim = await createSim(deps, req.caller!.agentId, {
        id,
        operator: req.operator,
        msisdn: req.msisdn,
        deviceId: req.deviceId,
        subscriptionSlot: req.subscriptionSlot,
        pin,
      });
      return { sim: toSim(sim) };
    },
    async updateSim(req) {
      requireAdmin(req.caller);
      const patch: SimPatch = {
        status: req.status,
        low: { set: req.setLowBalanceThreshold, value: req.lowBalanceThreshold },
        high: { set: req.setHighBalanceThreshold, value: req.highBalanceThreshold },
      };
      const problems = checkSimPatch(patch);
      if (problems.length) throw invalid(problems);
      return { sim: toSim(await updateSim(deps, req.caller!.agentId, req.simId, patch)) };
    },
    async deleteSim(req) {
      requireAdmin(req.caller);
      await deleteSim(deps, req.caller!.agentId, req.simId);
      return {};
    },
    async assignSim(req) {
      requireAdmin(req.caller);
      if (parseSlot(req.subscriptionSlot) === undefined)
        throw invalid([{ field: "subscription_slot", message: "must be 0 or 1" }]);
      const sim = await assignSim(deps, req.caller!.agentId, req.simId, req.deviceId, req.subscriptionSlot);
      return { sim: toSim(sim) };
    },
    async unassignSim(req) {
      requireAdmin(req.caller);
      return { sim: toSim(await unassignSim(deps, req.caller!.agentId, req.simId)) };
    },
    async recordSimBalance(req) {
      requireApiKey(req.caller);
      const now = new Date();
      const observedAt = fromTs(req.observedAt) ?? now;
      const source = req.source || "api";
      const problems = checkReading(req.balance, observedAt, source, now);
      if (problems.length) throw invalid(problems);
      const result = await recordSimBalance(deps, {
        simId: req.simId,
        balance: Number(req.balance),
        observedAt,
        source,
        via: "api",
      });
      return { sim: toSim(result.sim), applied: result.applied };
    },
  };
}
