import type { ServiceImpl } from "@connectrpc/connect";
import { DomainError, ts, type Violation } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin } from "../domain/agents.ts";
import { invalid, notFound, refusal } from "../domain/reasons.ts";
import { FLEET_PRESERVED, isResetConfirmed, RESET_NOTES, RESET_PHRASE } from "../domain/reset.ts";
import { freezeTransition, type FreezeAction } from "../domain/sims.ts";
import { BALANCE_STALE_AFTER_MS, isLimitOpType, isOperator, LIMIT_OP_TYPES, OPERATORS } from "../domain/vocabulary.ts";
import { deviceChanged, productionDataReset, simChanged } from "../events/fleet.ts";
import { audit } from "../store/agents.ts";
import { lockBreaker, readBreaker, setBreaker } from "../store/breaker.ts";
import { deviceIdsWithStatus, setAllDeviceStatus } from "../store/devices.ts";
import { fleetCounts } from "../store/health.ts";
import { currentLimits, recordLimit } from "../store/limits.ts";
import { countOpenNotifications } from "../store/notifications.ts";
import { countPreserved, deleteProductionData } from "../store/reset.ts";
import { findSimForUpdate, listSims, updateSimFields, type SimRecord } from "../store/sims.ts";
import { type FleetDeps, isUnimplemented } from "../flows/ports.ts";
import { toLimit, toSim, toSnapshotRow } from "../flows/mappers.ts";
import { credentialKey } from "../store/credentials.ts";

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

const reasonOf = (err: unknown) =>
  isUnimplemented(err) ? "not implemented by the service yet" : err instanceof Error ? err.message : String(err);

export function adminHandlers(deps: FleetDeps): Impl {
  const { db, config } = deps;

  const freeze = async (simId: string, actor: string, action: FreezeAction) => {
    const sim = await db.tx(async (em) => {
      const before = await findSimForUpdate(em, simId);
      if (!before) throw notFound("sim", simId);
      const t = freezeTransition(before.id, before.status, action);
      if (t instanceof DomainError) throw t;
      if (!t.changed) return before;
      await updateSimFields(em, before.id, { status: t.to });
      const after: SimRecord = { ...before, status: t.to };
      await audit(em, {
        actor,
        action: `sim.${action}`,
        target: before.id,
        details: { from: before.status, to: t.to },
      });
      await simChanged(em, after, action === "freeze" ? "frozen" : "unfrozen");
      return after;
    });
    deps.published();
    return { sim: toSim(sim) };
  };

  return {
    async freezeSim(req) {
      requireAdmin(req.caller);
      return freeze(req.simId, req.caller!.agentId, "freeze");
    },

    async unfreezeSim(req) {
      requireAdmin(req.caller);
      return freeze(req.simId, req.caller!.agentId, "unfreeze");
    },

    async getSimSnapshot(req) {
      requireAdmin(req.caller);
      const sims = await listSims(db.em());
      sims.sort((a, b) => a.operator.localeCompare(b.operator) || a.msisdn.localeCompare(b.msisdn));
      return { sims: sims.map(toSnapshotRow) };
    },

    async setCircuitBreaker(req) {
      requireAdmin(req.caller);
      const result = await db.tx(async (em) => {
        await lockBreaker(em);
        const breaker = await setBreaker(em, req.active, req.caller!.agentId);
        // Tripping is an emergency stop: every active handset is frozen too, so queued
        // work is not handed out either. Only the lift route restores them.
        const frozen = req.active ? await setAllDeviceStatus(em, "active", "frozen") : [];
        for (const d of frozen) await deviceChanged(em, d, "frozen");
        const ids = frozen.map((d) => d.id);
        await audit(em, {
          actor: req.caller!.agentId,
          action: "breaker.set",
          details: { active: req.active, frozen_device_ids: ids },
        });
        return { breaker, frozen: ids, frozenUntilLift: await deviceIdsWithStatus(em, "frozen") };
      });
      deps.published();
      return {
        status: result.breaker.active ? "active" : "inactive",
        frozenDeviceIds: result.frozen,
        changedAt: ts(result.breaker.changed_at),
        frozenUntilLiftDeviceIds: result.frozenUntilLift,
      };
    },

    async liftCircuitBreaker(req) {
      requireAdmin(req.caller);
      const restored = await db.tx(async (em) => {
        const before = await lockBreaker(em);
        await setBreaker(em, false, req.caller!.agentId);
        const devices = await setAllDeviceStatus(em, "frozen", "active");
        for (const d of devices) await deviceChanged(em, d, "restored");
        const ids = devices.map((d) => d.id);
        await audit(em, {
          actor: req.caller!.agentId,
          action: "breaker.lift",
          details: { was_active: before.active, restored_device_ids: ids },
        });
        return ids;
      });
      deps.published();
      return { status: "inactive", restoredDeviceIds: restored };
    },

    async recordFleetLimit(req) {
      requireAdmin(req.caller);
      const opType = req.opType || "deposit";
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
      if (problems.length) throw invalid(problems);
      const limit = await db.tx(async (em) => {
        const l = await recordLimit(em, {
          operator: req.operator ?? null,
          op_type: opType,
          max_amount: Number(req.maxAmount),
          max_daily_agent: Number(req.maxDailyAgent),
          max_daily_sim: Number(req.maxDailySim),
          by: req.caller!.agentId,
        });
        await audit(em, {
          actor: req.caller!.agentId,
          action: "limits.record",
          details: { ...l, effective_from: l.effective_from.toISOString() },
        });
        return l;
      });
      return { limit: toLimit(limit) };
    },

    async getFleetLimits(req) {
      requireAdmin(req.caller);
      return { enforced: false, limits: (await currentLimits(db.em())).map(toLimit) };
    },

    async resetProductionData(req) {
      requireAdmin(req.caller);
      if (!isResetConfirmed(req.confirm)) {
        throw refusal("reset_not_confirmed", `confirm must equal exactly "${RESET_PHRASE}"; nothing was touched`);
      }
      const caller = req.caller!;
      const deleted: Record<string, number> = {};
      const notes: string[] = [];
      let cleaned = true;
      let queuePurged = false;
      deps.log.warn({ actor: caller.agentId }, "production data reset ordered");
      try {
        const r = await deps.dispatch.resetOperations({ caller });
        for (const [k, v] of Object.entries(r.deleted)) deleted[k] = Number(v);
        queuePurged = r.queuePurged;
      } catch (err) {
        cleaned = false;
        notes.push(`Operations were not reset (dispatch: ${reasonOf(err)}); run the reset again.`);
        deps.log.error({ err }, "dispatch reset failed");
      }
      try {
        const r = await deps.evidence.resetEvidence({ caller });
        for (const [k, v] of Object.entries(r.deleted)) deleted[k] = Number(v);
      } catch (err) {
        cleaned = false;
        notes.push(
          `Evidences and daily reconciliations were not reset (evidence: ${reasonOf(err)}); run the reset again.`,
        );
        deps.log.error({ err }, "evidence reset failed");
      }
      const at = new Date();
      // Every session is deleted: every gateway forgets every answer.
      const preserved = await deps.credentials.change([credentialKey.all], async (em) => {
        const fleet = await deleteProductionData(em);
        Object.assign(deleted, fleet.deleted);
        const kept = await countPreserved(em);
        await audit(em, {
          actor: caller.agentId,
          action: "reset.production_data",
          details: { deleted, preserved: kept, queue_purged: queuePurged, cleaned, failures: notes },
        });
        await productionDataReset(em, deleted, fleet.agentIds, at);
        return kept;
      });
      deps.published();
      notes.push(...RESET_NOTES, "Every session was deleted, yours included: sign in again.");
      return {
        cleaned,
        deleted: toBig(deleted),
        preserved: toBig(Object.fromEntries(FLEET_PRESERVED.map((k) => [k, preserved[k] ?? 0]))),
        queuePurged,
        notes,
      };
    },

    async getFleetHealth(req) {
      requireAdmin(req.caller);
      const em = db.em();
      const counts = await fleetCounts(em, config.deviceSilentAfterS, BALANCE_STALE_AFTER_MS / 1000);
      const breaker = await readBreaker(em);
      const open = await countOpenNotifications(em);
      const notes: string[] = [];
      let backlog: { pastWindowNotSwept: number; unprovenWaiting: number } | undefined;
      try {
        backlog = await deps.dispatch.getSweepBacklog({});
      } catch (err) {
        notes.push(`Sweep backlog unknown (dispatch: ${reasonOf(err)})`);
      }
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
    },
  };
}

const toBig = (o: Record<string, number>) => Object.fromEntries(Object.entries(o).map(([k, v]) => [k, BigInt(v)]));
