import { DomainError, type EntityManager } from "@transferops/kit";
import type { GetSimActivityResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { balanceOutOfBand } from "../domain/alerts.ts";
import type { Sealed } from "../domain/pin-crypto.ts";
import { msisdnExists, notFound, simBusy, simUnassigned } from "../domain/reasons.ts";
import { balanceAlertDue, balanceBand, checkPlacement, patchThresholds, type SimPatch } from "../domain/sims.ts";
import type { SimStatus } from "../domain/vocabulary.ts";
import { raiseAlert } from "../events/alerts.ts";
import { simChanged, simDeleted } from "../events/fleet.ts";
import { removeSimFromGrants } from "../store/access.ts";
import { audit } from "../store/agents.ts";
import { findDeviceForUpdate } from "../store/devices.ts";
import {
  deleteSim as deleteSimRow,
  findSim,
  findSimForUpdate,
  insertSim,
  listSims as listSimRows,
  lockDeviceOccupants,
  msisdnTaken,
  updateSimFields,
  type SimRecord,
} from "../store/sims.ts";
import { applyReading, type Reading } from "./balance.ts";
import { simActivity, type FleetDeps } from "./ports.ts";

/** The SIMs, all or only those in no device. */
export async function listSims(deps: FleetDeps, unassigned?: boolean): Promise<SimRecord[]> {
  return listSimRows(deps.db.em(), { unassigned });
}

/** The SIM, or 404. */
export async function getSim(deps: FleetDeps, simId: string): Promise<SimRecord> {
  const sim = await findSim(deps.db.em(), simId);
  if (!sim) throw notFound("sim", simId);
  return sim;
}

/** Places a SIM in a device's slot after the device lock: 404, then the 409s in their order. */
async function placeable(em: EntityManager, deviceId: string, slot: number, movingSimId?: string): Promise<void> {
  const device = await findDeviceForUpdate(em, deviceId);
  if (!device) throw notFound("device", deviceId);
  const occupants = await lockDeviceOccupants(em, deviceId);
  const refusal = checkPlacement({ device_id: device.id, status: device.status }, occupants, slot, movingSimId);
  if (refusal) throw refusal;
}

export interface NewSim {
  id: string;
  operator: string;
  msisdn: string;
  deviceId?: string;
  subscriptionSlot?: number;
  /** The PIN already sealed for this SIM's id. */
  pin: Sealed;
}

/** A new SIM (already checked), placed in its device's slot if one is named, audited, SimChanged. */
export async function createSim(deps: FleetDeps, actor: string, req: NewSim): Promise<SimRecord> {
  const { id, pin } = req;
  const sim = await deps.db.tx(async (em) => {
    if (req.deviceId !== undefined) {
      const device = await findDeviceForUpdate(em, req.deviceId);
      if (!device) throw notFound("device", req.deviceId);
    }
    if (await msisdnTaken(em, req.msisdn)) throw msisdnExists(req.msisdn);
    if (req.deviceId !== undefined) await placeable(em, req.deviceId, req.subscriptionSlot!);
    const inserted = await insertSim(em, {
      id,
      operator: req.operator,
      msisdn: req.msisdn,
      device_id: req.deviceId ?? null,
      subscription_slot: req.subscriptionSlot ?? null,
      pin_key_id: pin.keyId,
      pin_ciphertext: pin.ciphertext,
    });
    if (!inserted) throw msisdnExists(req.msisdn);
    const created = (await findSimForUpdate(em, id))!;
    await audit(em, {
      actor,
      action: "sim.create",
      target: id,
      details: {
        operator: created.operator,
        msisdn: created.msisdn,
        device_id: created.device_id,
        subscription_slot: created.subscription_slot,
        pin_key_id: pin.keyId,
      },
    });
    await simChanged(em, created, "created");
    return created;
  });
  deps.published();
  return sim;
}

/** Deletes the SIM and removes it from every grant, audited, SimDeleted. */
export async function deleteSim(deps: FleetDeps, actor: string, simId: string): Promise<void> {
  await deps.db.tx(async (em) => {
    const sim = await findSimForUpdate(em, simId);
    if (!sim) throw notFound("sim", simId);
    await deleteSimRow(em, sim.id);
    const grants = await removeSimFromGrants(em, sim.id);
    await audit(em, {
      actor,
      action: "sim.delete",
      target: sim.id,
      details: {
        operator: sim.operator,
        msisdn: sim.msisdn,
        device_id: sim.device_id,
        balance_mirror: sim.balance_mirror,
        removed_from_grants: grants,
      },
    });
    await simDeleted(em, sim.id);
  });
  deps.published();
}

/** Puts the SIM in the device's slot (a no-op where it already is), audited, SimChanged. */
export async function assignSim(
  deps: FleetDeps,
  actor: string,
  simId: string,
  deviceId: string,
  slot: number,
): Promise<SimRecord> {
  const sim = await deps.db.tx(async (em) => {
    const before = await findSimForUpdate(em, simId);
    if (!before) throw notFound("sim", simId);
    await placeable(em, deviceId, slot, before.id);
    if (before.device_id === deviceId && before.subscription_slot === slot) return before;
    await updateSimFields(em, before.id, { device_id: deviceId, subscription_slot: slot, absent_since: null });
    const after: SimRecord = { ...before, device_id: deviceId, subscription_slot: slot, absent_since: null };
    await audit(em, {
      actor,
      action: "sim.assign",
      target: before.id,
      details: {
        from: { device_id: before.device_id, subscription_slot: before.subscription_slot },
        to: { device_id: deviceId, subscription_slot: slot },
      },
    });
    await simChanged(em, after, "assigned");
    return after;
  });
  deps.published();
  return sim;
}

/** Takes the SIM out of its device, refused while dispatch has work queued or running on it. */
export async function unassignSim(deps: FleetDeps, actor: string, simId: string): Promise<SimRecord> {
  const current = await getSim(deps, simId);
  if (current.device_id === null) throw simUnassigned(current.id);
  const sim = await deps.db.tx(async (em) => {
    const before = await findSimForUpdate(em, simId);
    if (!before) throw notFound("sim", simId);
    if (before.device_id === null) throw simUnassigned(before.id);
    // Asked under the SIM's lock, so no assignment change slips between the answer and
    // the update; a create racing past it is held by dispatch when it learns of the
    // unassignment (its queued work leaves the handset).
    const activity = await simActivity(deps, before.id);
    if (activity.queuedOrRunning > 0) throw simBusy(before.id, activity.queuedOrRunning);
    await updateSimFields(em, before.id, { device_id: null, subscription_slot: null, absent_since: null });
    const after: SimRecord = { ...before, device_id: null, subscription_slot: null, absent_since: null };
    await audit(em, {
      actor,
      action: "sim.unassign",
      target: before.id,
      details: { from: { device_id: before.device_id, subscription_slot: before.subscription_slot } },
    });
    await simChanged(em, after, "unassigned");
    return after;
  });
  deps.published();
  return sim;
}

/** A balance reading sent through the API (already checked), in one transaction. */
export async function recordSimBalance(deps: FleetDeps, reading: Reading) {
  const result = await deps.db.tx((em) => applyReading(em, reading));
  deps.published();
  return result;
}

/** The SIM and its operations as dispatch reports them. */
export async function simHistory(
  deps: FleetDeps,
  simId: string,
): Promise<{ sim: SimRecord; activity: GetSimActivityResponse }> {
  const sim = await getSim(deps, simId);
  return { sim, activity: await simActivity(deps, sim.id) };
}

/**
 * An admin's change of a SIM's status or balance thresholds (the patch already checked):
 * the row, the balance alert a new threshold makes due, the audit entry and SimChanged,
 * in one transaction under the SIM's lock.
 */
export async function updateSim(deps: FleetDeps, actor: string, simId: string, patch: SimPatch): Promise<SimRecord> {
  const sim = await deps.db.tx(async (em) => {
    const before = await findSimForUpdate(em, simId);
    if (!before) throw notFound("sim", simId);
    const after = patched(before, patch);
    await updateSimFields(em, before.id, {
      status: after.status,
      low_balance_threshold: after.low_balance_threshold,
      high_balance_threshold: after.high_balance_threshold,
      balance_band: after.balance_band,
    });
    await alertIfOutOfBand(em, before, after);
    await audit(em, {
      actor,
      action: "sim.update",
      target: before.id,
      details: {
        from: {
          status: before.status,
          low_balance_threshold: before.low_balance_threshold,
          high_balance_threshold: before.high_balance_threshold,
        },
        to: {
          status: after.status,
          low_balance_threshold: after.low_balance_threshold,
          high_balance_threshold: after.high_balance_threshold,
        },
      },
    });
    await simChanged(em, after, "updated");
    return after;
  });
  deps.published();
  return sim;
}

/** The SIM with the patch applied; a threshold change is judged against the measured balance at once. */
function patched(before: SimRecord, patch: SimPatch): SimRecord {
  const thresholds = patchThresholds({ low: before.low_balance_threshold, high: before.high_balance_threshold }, patch);
  if (thresholds instanceof DomainError) throw thresholds;
  const { low, high } = thresholds;
  return {
    ...before,
    status: (patch.status ?? before.status) as SimStatus,
    low_balance_threshold: low,
    high_balance_threshold: high,
    balance_band: before.balance_mirror === null ? before.balance_band : balanceBand(before.balance_mirror, low, high),
  };
}

/** Raises the balance alert when the new band leaves the old one for low or high (a measured balance only). */
async function alertIfOutOfBand(em: EntityManager, before: SimRecord, after: SimRecord): Promise<void> {
  const due = before.balance_mirror === null ? null : balanceAlertDue(before.balance_band, after.balance_band);
  if (!due) return;
  const threshold = (due === "low" ? after.low_balance_threshold : after.high_balance_threshold)!;
  await raiseAlert(
    em,
    balanceOutOfBand(
      { sim_id: after.id, msisdn: after.msisdn, device_id: after.device_id },
      due,
      before.balance_mirror!,
      threshold,
      before.balance_updated_at!,
      new Date(),
    ),
  );
}
