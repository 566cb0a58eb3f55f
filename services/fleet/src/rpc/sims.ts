import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { fromTs, type EntityManager } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin, requireApiKey } from "../domain/agents.ts";
import { pinAad, seal } from "../domain/pin-crypto.ts";
import { invalid, msisdnExists, notFound, simBusy, simUnassigned } from "../domain/reasons.ts";
import { checkNewSim, checkPlacement, checkReading, checkSimPatch, parseSlot, type SimPatch } from "../domain/sims.ts";
import { simChanged, simDeleted } from "../events/fleet.ts";
import { audit } from "../store/agents.ts";
import { findDeviceForUpdate } from "../store/devices.ts";
import {
  deleteSim,
  findSim,
  findSimForUpdate,
  insertSim,
  listSims,
  lockDeviceOccupants,
  msisdnTaken,
  updateSimFields,
  type SimRecord,
} from "../store/sims.ts";
import { removeSimFromGrants } from "../store/access.ts";
import { applyReading } from "../flows/balance.ts";
import { type FleetDeps, simActivity } from "../flows/ports.ts";
import { toSim } from "../flows/mappers.ts";
import { updateSim } from "../flows/sims.ts";

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

/** Places a SIM in a device's slot after the device lock: 404, then the 409s in their order. */
async function placeable(em: EntityManager, deviceId: string, slot: number, movingSimId?: string): Promise<void> {
  const device = await findDeviceForUpdate(em, deviceId);
  if (!device) throw notFound("device", deviceId);
  const occupants = await lockDeviceOccupants(em, deviceId);
  const refusal = checkPlacement({ device_id: device.id, status: device.status }, occupants, slot, movingSimId);
  if (refusal) throw refusal;
}

export function simsHandlers(deps: FleetDeps): Impl {
  const { db, config } = deps;
  const existing = async (id: string) => {
    const s = await findSim(db.em(), id);
    if (!s) throw notFound("sim", id);
    return s;
  };

  return {
    async listSims(req) {
      requireAdmin(req.caller);
      return { sims: (await listSims(db.em(), { unassigned: req.unassigned })).map(toSim) };
    },

    async getSim(req) {
      requireAdmin(req.caller);
      return { sim: toSim(await existing(req.simId)) };
    },

    async createSim(req) {
      requireAdmin(req.caller);
      const problems = checkNewSim(req);
      if (problems.length) throw invalid(problems);
      const id = randomUUID();
      const pin = seal(config.pinKeyring, req.pin, pinAad(id));
      const sim = await db.tx(async (em) => {
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
          actor: req.caller!.agentId,
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
      await db.tx(async (em) => {
        const sim = await findSimForUpdate(em, req.simId);
        if (!sim) throw notFound("sim", req.simId);
        await deleteSim(em, sim.id);
        const grants = await removeSimFromGrants(em, sim.id);
        await audit(em, {
          actor: req.caller!.agentId,
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
      return {};
    },

    async assignSim(req) {
      requireAdmin(req.caller);
      if (parseSlot(req.subscriptionSlot) === undefined)
        throw invalid([{ field: "subscription_slot", message: "must be 0 or 1" }]);
      const sim = await db.tx(async (em) => {
        const before = await findSimForUpdate(em, req.simId);
        if (!before) throw notFound("sim", req.simId);
        await placeable(em, req.deviceId, req.subscriptionSlot, before.id);
        if (before.device_id === req.deviceId && before.subscription_slot === req.subscriptionSlot) return before;
        await updateSimFields(em, before.id, {
          device_id: req.deviceId,
          subscription_slot: req.subscriptionSlot,
          absent_since: null,
        });
        const after: SimRecord = {
          ...before,
          device_id: req.deviceId,
          subscription_slot: req.subscriptionSlot,
          absent_since: null,
        };
        await audit(em, {
          actor: req.caller!.agentId,
          action: "sim.assign",
          target: before.id,
          details: {
            from: { device_id: before.device_id, subscription_slot: before.subscription_slot },
            to: { device_id: req.deviceId, subscription_slot: req.subscriptionSlot },
          },
        });
        await simChanged(em, after, "assigned");
        return after;
      });
      deps.published();
      return { sim: toSim(sim) };
    },

    async unassignSim(req) {
      requireAdmin(req.caller);
      const current = await existing(req.simId);
      if (current.device_id === null) throw simUnassigned(current.id);
      const sim = await db.tx(async (em) => {
        const before = await findSimForUpdate(em, req.simId);
        if (!before) throw notFound("sim", req.simId);
        if (before.device_id === null) throw simUnassigned(before.id);
        // Asked under the SIM's lock, so no assignment change slips between the answer and
        // the update; a create racing past it is held by dispatch when it learns of the
        // unassignment (its queued work leaves the handset).
        const activity = await simActivity(deps, before.id);
        if (activity.queuedOrRunning > 0) throw simBusy(before.id, activity.queuedOrRunning);
        await updateSimFields(em, before.id, { device_id: null, subscription_slot: null, absent_since: null });
        const after: SimRecord = { ...before, device_id: null, subscription_slot: null, absent_since: null };
        await audit(em, {
          actor: req.caller!.agentId,
          action: "sim.unassign",
          target: before.id,
          details: { from: { device_id: before.device_id, subscription_slot: before.subscription_slot } },
        });
        await simChanged(em, after, "unassigned");
        return after;
      });
      deps.published();
      return { sim: toSim(sim) };
    },

    async recordSimBalance(req) {
      requireApiKey(req.caller);
      const now = new Date();
      const observedAt = fromTs(req.observedAt) ?? now;
      const source = req.source || "api";
      const problems = checkReading(req.balance, observedAt, source, now);
      if (problems.length) throw invalid(problems);
      const result = await db.tx((em) =>
        applyReading(em, { simId: req.simId, balance: Number(req.balance), observedAt, source, via: "api" }),
      );
      deps.published();
      return { sim: toSim(result.sim), applied: result.applied };
    },

    async getSimHistory(req) {
      requireAdmin(req.caller);
      const sim = await existing(req.simId);
      const activity = await simActivity(deps, sim.id);
      return {
        simId: sim.id,
        totalOperations: activity.totalOperations,
        totalConfirmed: activity.totalConfirmed,
        totalFailed: activity.totalFailed,
        totalNoEvidence: activity.totalNoEvidence,
        balanceMirror: sim.balance_mirror === null ? undefined : BigInt(sim.balance_mirror),
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
