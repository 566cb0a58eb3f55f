import { DomainError } from "@transferops/kit";
import type { Caller } from "@transferops/kit/gen/transferops/common/v1/identity_pb";
import { notFound } from "../domain/reasons.ts";
import { FLEET_PRESERVED, RESET_NOTES } from "../domain/reset.ts";
import { freezeTransition, type FreezeAction } from "../domain/sims.ts";
import { BALANCE_STALE_AFTER_MS } from "../domain/vocabulary.ts";
import { deviceChanged, productionDataReset, simChanged } from "../events/fleet.ts";
import { audit } from "../store/agents.ts";
import { lockBreaker, readBreaker, setBreaker } from "../store/breaker.ts";
import { credentialKey } from "../store/credentials.ts";
import { deviceIdsWithStatus, setAllDeviceStatus } from "../store/devices.ts";
import { fleetCounts } from "../store/health.ts";
import { currentLimits, recordLimit, type LimitRecord } from "../store/limits.ts";
import { countOpenNotifications } from "../store/notifications.ts";
import { countPreserved, deleteProductionData } from "../store/reset.ts";
import { findSimForUpdate, listSims, updateSimFields, type SimRecord } from "../store/sims.ts";
import { isUnimplemented, type FleetDeps } from "./ports.ts";

const reasonOf = (err: unknown) =>
  isUnimplemented(err) ? "not implemented by the service yet" : err instanceof Error ? err.message : String(err);

/** Freezes or unfreezes a SIM under its lock (a no-op where it already is), audited, SimChanged. */
export async function freezeSim(deps: FleetDeps, simId: string, actor: string, action: FreezeAction) {
  const sim = await deps.db.tx(async (em) => {
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
  return sim;
}

/** Every SIM, by operator then number. */
export async function simSnapshot(deps: FleetDeps): Promise<SimRecord[]> {
  const sims = await listSims(deps.db.em());
  sims.sort((a, b) => a.operator.localeCompare(b.operator) || a.msisdn.localeCompare(b.msisdn));
  return sims;
}

/** Sets the circuit breaker; tripping it freezes every active handset too. */
export async function setCircuitBreaker(deps: FleetDeps, actor: string, active: boolean) {
  const result = await deps.db.tx(async (em) => {
    await lockBreaker(em);
    const breaker = await setBreaker(em, active, actor);
    // Tripping is an emergency stop: every active handset is frozen too, so queued
    // work is not handed out either. Only the lift route restores them.
    const frozen = active ? await setAllDeviceStatus(em, "active", "frozen") : [];
    for (const d of frozen) await deviceChanged(em, d, "frozen");
    const ids = frozen.map((d) => d.id);
    await audit(em, { actor, action: "breaker.set", details: { active, frozen_device_ids: ids } });
    return { breaker, frozen: ids, frozenUntilLift: await deviceIdsWithStatus(em, "frozen") };
  });
  deps.published();
  return result;
}

/** Lifts the circuit breaker and restores the handsets it froze; the ids restored. */
export async function liftCircuitBreaker(deps: FleetDeps, actor: string): Promise<string[]> {
  const restored = await deps.db.tx(async (em) => {
    const before = await lockBreaker(em);
    await setBreaker(em, false, actor);
    const devices = await setAllDeviceStatus(em, "frozen", "active");
    for (const d of devices) await deviceChanged(em, d, "restored");
    const ids = devices.map((d) => d.id);
    await audit(em, {
      actor,
      action: "breaker.lift",
      details: { was_active: before.active, restored_device_ids: ids },
    });
    return ids;
  });
  deps.published();
  return restored;
}

/** Records a fleet limit (already checked), audited. */
export async function recordFleetLimit(deps: FleetDeps, limit: Parameters<typeof recordLimit>[1]) {
  return deps.db.tx(async (em) => {
    const l = await recordLimit(em, limit);
    await audit(em, {
      actor: limit.by,
      action: "limits.record",
      details: { ...l, effective_from: l.effective_from.toISOString() },
    });
    return l;
  });
}

/** The limits in force. */
export async function fleetLimits(deps: FleetDeps): Promise<LimitRecord[]> {
  return currentLimits(deps.db.em());
}

export interface ResetResult {
  cleaned: boolean;
  deleted: Record<string, number>;
  preserved: Record<string, number>;
  queuePurged: boolean;
  notes: string[];
}

/**
 * Deletes the production data: dispatch's and evidence's first (a failure is noted, the
 * reset goes on), then fleet's with every session, audited, ProductionDataReset.
 */
export async function resetProductionData(deps: FleetDeps, caller: Caller): Promise<ResetResult> {
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
    notes.push(`Evidences and daily reconciliations were not reset (evidence: ${reasonOf(err)}); run the reset again.`);
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
  const kept = Object.fromEntries(FLEET_PRESERVED.map((k) => [k, preserved[k] ?? 0]));
  return { cleaned, deleted, preserved: kept, queuePurged, notes };
}

/** The fleet's counts, the breaker, open notifications and dispatch's sweep backlog (noted when unknown). */
export async function fleetHealth(deps: FleetDeps) {
  const em = deps.db.em();
  const counts = await fleetCounts(em, deps.config.deviceSilentAfterS, BALANCE_STALE_AFTER_MS / 1000);
  const breaker = await readBreaker(em);
  const open = await countOpenNotifications(em);
  const notes: string[] = [];
  let backlog: { pastWindowNotSwept: number; unprovenWaiting: number } | undefined;
  try {
    backlog = await deps.dispatch.getSweepBacklog({});
  } catch (err) {
    notes.push(`Sweep backlog unknown (dispatch: ${reasonOf(err)})`);
  }
  return { counts, breaker, open, backlog, notes };
}
