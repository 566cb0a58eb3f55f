import type { ServiceImpl } from "@connectrpc/connect";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { requireAdmin } from "../domain/index.ts";
import { resetOperations, simActivity, sweepBacklog } from "../flows/fleet-facing.ts";
import { actorOf, toSimOperation } from "../flows/mappers.ts";
import { check } from "@transferops/kit";
import type { DispatchDeps } from "../flows/ports.ts";

type Impl = Pick<ServiceImpl<typeof DispatchService>, "getSimActivity" | "resetOperations" | "getSweepBacklog">;

/** The RPCs fleet calls: a SIM's history and in-flight count, the reset, the sweep backlog. */
export function fleetFacingHandlers(deps: DispatchDeps): Impl {
  return {
    async getSimActivity(req) {
      const a = await simActivity(deps, req.simId);
      return {
        queuedOrRunning: a.queued_or_running,
        totalOperations: a.total_operations,
        totalConfirmed: a.total_confirmed,
        totalFailed: a.total_failed,
        totalNoEvidence: a.total_no_evidence,
        operations: a.operations.map(toSimOperation),
      };
    },

    async resetOperations(req) {
      check(requireAdmin(actorOf(req.caller), "reset production data"));
      const deleted = await resetOperations(deps, req.caller?.agentId);
      return { deleted: { operations: BigInt(deleted.operations), proofs: BigInt(deleted.proofs) }, queuePurged: true };
    },

    async getSweepBacklog() {
      return sweepBacklog(deps).then((b) => ({
        pastWindowNotSwept: b.past_window_not_swept,
        unprovenWaiting: b.unproven_waiting,
      }));
    },
  };
}
