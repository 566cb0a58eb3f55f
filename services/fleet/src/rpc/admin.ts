import type { ServiceImpl } from "@connectrpc/connect";
import { DEFAULT_OP_TYPE, ts, type Violation } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin } from "../domain/agents.ts";
import { invalid, refusal } from "../domain/reasons.ts";
import { isResetConfirmed, RESET_PHRASE } from "../domain/reset.ts";
import { isLimitOpType, isOperator, LIMIT_OP_TYPES, OPERATORS } from "../domain/vocabulary.ts";
import {
  fleetHealth,
  fleetLimits,
  freezeSim,
  liftCircuitBreaker,
  recordFleetLimit,
  resetProductionData,
  setCircuitBreaker,
  simSnapshot,
} from "../flows/admin.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toLimit, toSim, toSnapshotRow } from "../flows/mappers.ts";

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  | "freezeSim"
  | "unfreezeSim"
  | "getSimSnapshot"
  | "setCircuitBreaker"
  | "liftCircuitBreaker"
  | "recordFleetLimit"
  | "getFleetLimits"
  | "resetProductionData"
  | "getFleetHealth"
>;

export function adminHandlers(deps: FleetDeps): Impl {
  return { ...simAdmin(deps), ...fleetAdmin(deps) };
}

/** Freezing SIMs and their snapshot. */
function simAdmin(deps: FleetDeps): Pick<Impl, "freezeSim" | "unfreezeSim" | "getSimSnapshot"> {
  return {
    async freezeSim(req) {
      requireAdmin(req.caller);
      return { sim: toSim(await freezeSim(deps, req.simId, req.caller!.agentId, "freeze")) };
    },
    async unfreezeSim(req) {
      requireAdmin(req.caller);
      return { sim: toSim(await freezeSim(deps, req.simId, req.caller!.agentId, "unfreeze")) };
    },
    async getSimSnapshot(req) {
      requireAdmin(req.caller);
      return { sims: (await simSnapshot(deps)).map(toSnapshotRow) };
    },
  };
}

/** The breaker, the limits, the reset and the health of the fleet. */
function fleetAdmin(
  deps: FleetDeps,
): Pick<
  Impl,
  | "setCircuitBreaker"
  | "liftCircuitBreaker"
  | "recordFleetLimit"
  | "getFleetLimits"
  | "resetProductionData"
  | "getFleetHealth"
> {
  return {
    async setCircuitBreaker(req) {
      requireAdmin(req.caller);
      const result = await setCircuitBreaker(deps, req.caller!.agentId, req.active);
      return {
        status: result.breaker.active ? "active" : "inactive",
        frozenDeviceIds: result.frozen,
        changedAt: ts(result.breaker.changed_at),
        frozenUntilLiftDeviceIds: result.frozenUntilLift,
      };
    },
    async liftCircuitBreaker(req) {
      requireAdmin(req.caller);
      return { status: "inactive", restoredDeviceIds: await liftCircuitBreaker(deps, req.caller!.agentId) };
    },
    async recordFleetLimit(req) {
      requireAdmin(req.caller);
      const opType = req.opType || DEFAULT_OP_TYPE;
      const problems = limitProblems(req, opType);
      if (problems.length) throw invalid(problems);
      const limit = await recordFleetLimit(deps, {
        operator: req.operator ?? null,
        op_type: opType,
        max_amount: Number(req.maxAmount),
        max_daily_agent: Number(req.maxDailyAgent),
        max_daily_sim: Number(req.maxDailySim),
        by: req.caller!.agentId,
      });
      return { limit: toLimit(limit) };
    },
    async getFleetLimits(req) {
      requireAdmin(req.caller);
      return { enforced: false, limits: (await fleetLimits(deps)).map(toLimit) };
    },
    async resetProductionData(req) {
      requireAdmin(req.caller);
      if (!isResetConfirmed(req.confirm)) {
        throw refusal("reset_not_confirmed", `confirm must equal exactly "${RESET_PHRASE}"; nothing was touched`);
      }
      const r = await resetProductionData(deps, req.caller!);
      return { ...r, deleted: toBig(r.deleted), preserved: toBig(r.preserved) };
    },
    async getFleetHealth(req) {
      requireAdmin(req.caller);
      return toFleetHealth(await fleetHealth(deps));
    },
  };
}

/** A limit's problems, every one at once: its operator (or none), its type, its three amounts. */
function limitProblems(
  req: { operator?: string; maxAmount: bigint; maxDailyAgent: bigint; maxDailySim: bigint },
  opType: string,
): Violation[] {
  const problems: Violation[] = [];
  if (req.operator !== undefined && !isOperator(req.operator)) {
    problems.push({
      field: "operator",
      message: `unknown operator code ${req.operator}; use ${OPERATORS.join(", ")} or null`,
    });
  }
  if (!isLimitOpType(opType))
    problems.push({ field: "op_type", message: `must be one of ${LIMIT_OP_TYPES.join(", ")}` });
  for (const [field, v] of [
    ["max_amount", req.maxAmount],
    ["max_daily_agent", req.maxDailyAgent],
    ["max_daily_sim", req.maxDailySim],
  ] as const) {
    if (v <= 0n) problems.push({ field, message: "must be an integer above 0" });
  }
  return problems;
}

function toFleetHealth({ counts, breaker, open, backlog, notes }: Awaited<ReturnType<typeof fleetHealth>>) {
  return {
    breakerActive: breaker.active,
    devicesTotal: counts.devices_total,
    devicesOnline: counts.devices_online,
    devicesFrozen: counts.devices_frozen,
    simsTotal: counts.sims_total,
    simsUnmeasured: counts.sims_unmeasured,
    simsStale: counts.sims_stale,
    simsFrozen: counts.sims_frozen,
    simsUnassigned: counts.sims_unassigned,
    pastWindowNotSwept: backlog?.pastWindowNotSwept,
    unprovenWaiting: backlog?.unprovenWaiting,
    notificationsOpen: open,
    notes,
  };
}

const toBig = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, BigInt(v)]));
