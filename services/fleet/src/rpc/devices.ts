import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import type { ServiceImpl } from "@connectrpc/connect";
import { CallerSchema } from "@transferops/kit/gen/transferops/common/v1/identity_pb";
import { ts, type Caller, type EntityManager } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin } from "../domain/agents.ts";
import { deriveIssues } from "../domain/device-health.ts";
import { notFound } from "../domain/reasons.ts";
import { hashToken, newToken } from "../domain/secrets.ts";
import { audit } from "../store/agents.ts";
import {
  deleteDevice,
  findDevice,
  findDeviceByTokenHash,
  findDeviceForUpdate,
  insertDevice,
  listDevices,
  renameDevice,
  setDeviceToken,
  unassignDeviceSims,
  type DeviceRecord,
} from "../store/devices.ts";
import { listDeviceSims, type SimRecord } from "../store/sims.ts";
import { credentialKey } from "../store/credentials.ts";
import { deviceChanged, deviceDeleted } from "../events/fleet.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toDevice, toDeviceHealth } from "../flows/mappers.ts";

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  | "createDevice"
  | "listDevices"
  | "getDevice"
  | "updateDevice"
  | "deleteDevice"
  | "getDeviceHealth"
  | "issueDeviceToken"
  | "revokeDeviceToken"
>;

/** Hex device ids: 16 random bytes. */
const newDeviceId = () => randomBytes(16).toString("hex");

export function devicesHandlers(deps: FleetDeps): Impl {
  const { db, config } = deps;
  /** A transaction that ends the device token's answer, announced to every replica's watchers. */
  const deviceTx = <T>(deviceId: string, work: (em: EntityManager) => Promise<T>) =>
    deps.credentials.change([credentialKey.device(deviceId)], work);
  const offlineAfterMs = config.deviceSilentAfterS * 1000;
  const issuesOf = (d: DeviceRecord, sims: SimRecord[], now = new Date()) =>
    deriveIssues(
      {
        last_seen_at: d.last_seen_at,
        health_reported_at: d.health_reported_at,
        report: d.report,
        battery: d.battery,
        battery_exempt: d.battery_exempt,
        heartbeat_sims: d.heartbeat_sims,
        assigned_sim_ids: sims.map((s) => s.id),
      },
      now,
      offlineAfterMs,
    );
  const view = async (d: DeviceRecord) => {
    const sims = await listDeviceSims(db.em(), [d.id]);
    return toDevice(d, sims, issuesOf(d, sims));
  };
  const existing = async (id: string) => {
    const d = await findDevice(db.em(), id);
    if (!d) throw notFound("device", id);
    return d;
  };

  return {
    async createDevice(req) {
      requireAdmin(req.caller);
      const token = newToken("device");
      const device = await db.tx(async (em) => {
        const d = await insertDevice(em, { id: newDeviceId(), label: req.label, token_hash: hashToken(token) });
        await audit(em, {
          actor: req.caller!.agentId,
          action: "device.create",
          target: d.id,
          details: { label: d.label },
        });
        await deviceChanged(em, d, "created");
        return d;
      });
      deps.published();
      return { deviceId: device.id, deviceToken: token, label: device.label, createdAt: ts(device.created_at) };
    },

    async listDevices(req) {
      requireAdmin(req.caller);
      const em = db.em();
      const devices = await listDevices(em);
      const sims = await listDeviceSims(
        em,
        devices.map((d) => d.id),
      );
      const now = new Date();
      return {
        devices: devices.map((d) => {
          const own = sims.filter((s) => s.device_id === d.id);
          return toDevice(d, own, issuesOf(d, own, now));
        }),
      };
    },

    async getDevice(req) {
      requireAdmin(req.caller);
      return { device: await view(await existing(req.deviceId)) };
    },

    async updateDevice(req) {
      requireAdmin(req.caller);
      const updated = await deviceTx(req.deviceId, async (em) => {
        const d = await findDeviceForUpdate(em, req.deviceId);
        if (!d) throw notFound("device", req.deviceId);
        if (req.label === undefined || req.label === d.label) return d;
        await renameDevice(em, d.id, req.label);
        await audit(em, {
          actor: req.caller!.agentId,
          action: "device.rename",
          target: d.id,
          details: { from: d.label, to: req.label },
        });
        await deviceChanged(em, { ...d, label: req.label }, "updated");
        return { ...d, label: req.label };
      });
      deps.published();
      return { device: await view(updated) };
    },

    async deleteDevice(req) {
      requireAdmin(req.caller);
      const unassigned = await deviceTx(req.deviceId, async (em) => {
        const d = await findDeviceForUpdate(em, req.deviceId);
        if (!d) throw notFound("device", req.deviceId);
        const simIds = await unassignDeviceSims(em, d.id);
        await deleteDevice(em, d.id);
        await audit(em, {
          actor: req.caller!.agentId,
          action: "device.delete",
          target: d.id,
          details: { label: d.label, unassigned_sim_ids: simIds },
        });
        await deviceDeleted(em, d.id, simIds);
        return simIds;
      });
      deps.published();
      return { unassignedSimIds: unassigned };
    },

    async getDeviceHealth(req) {
      requireAdmin(req.caller);
      const d = await existing(req.deviceId);
      const sims = await listDeviceSims(db.em(), [d.id]);
      return { health: toDeviceHealth(d, issuesOf(d, sims)) };
    },

    async issueDeviceToken(req) {
      requireAdmin(req.caller);
      const token = newToken("device");
      await deviceTx(req.deviceId, async (em) => {
        if (!(await setDeviceToken(em, req.deviceId, hashToken(token)))) throw notFound("device", req.deviceId);
        await audit(em, { actor: req.caller!.agentId, action: "device.token_issued", target: req.deviceId });
      });
      return { deviceId: req.deviceId, deviceToken: token };
    },

    async revokeDeviceToken(req) {
      requireAdmin(req.caller);
      await deviceTx(req.deviceId, async (em) => {
        if (!(await setDeviceToken(em, req.deviceId, null))) throw notFound("device", req.deviceId);
        await audit(em, { actor: req.caller!.agentId, action: "device.token_revoked", target: req.deviceId });
      });
      return {};
    },
  };
}

/** Resolves a device token for Authenticate: a deleted device or revoked token is unknown. */
export function deviceAuthenticator(deps: Pick<FleetDeps, "db">) {
  return async (tokenHash: string): Promise<Caller | undefined> => {
    const d = await findDeviceByTokenHash(deps.db.em(), tokenHash);
    if (!d) return undefined;
    return create(CallerSchema, {
      kind: "device",
      deviceId: d.id,
      deviceLabel: d.label,
      deviceTokenVersion: d.token_version,
    });
  };
}
