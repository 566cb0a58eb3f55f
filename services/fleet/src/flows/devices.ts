import { randomBytes } from "node:crypto";
import { create } from "@bufbuild/protobuf";
import { CallerSchema } from "@transferops/kit/gen/transferops/common/v1/identity_pb";
import type { Device, DeviceHealth } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import type { Caller, EntityManager } from "@transferops/kit";
import { deriveIssues } from "../domain/device-health.ts";
import { notFound } from "../domain/reasons.ts";
import { hashToken } from "../domain/secrets.ts";
import { deviceChanged, deviceDeleted } from "../events/fleet.ts";
import { audit } from "../store/agents.ts";
import {
  deleteDevice as deleteDeviceRow,
  findDevice,
  findDeviceByTokenHash,
  findDeviceForUpdate,
  insertDevice,
  listDevices as listDeviceRows,
  renameDevice,
  setDeviceToken,
  unassignDeviceSims,
  type DeviceRecord,
} from "../store/devices.ts";
import { listDeviceSims, type SimRecord } from "../store/sims.ts";
import { credentialKey } from "../store/credentials.ts";
import { toDevice, toDeviceHealth } from "./mappers.ts";
import type { FleetDeps } from "./ports.ts";

/** Hex device ids: 16 random bytes. */
const newDeviceId = () => randomBytes(16).toString("hex");

/** A transaction that ends the device token's answer, announced to every replica's watchers. */
const deviceTx = <T>(deps: FleetDeps, deviceId: string, work: (em: EntityManager) => Promise<T>) =>
  deps.credentials.change([credentialKey.device(deviceId)], work);

const issuesOf = (deps: FleetDeps, d: DeviceRecord, sims: SimRecord[], now = new Date()) =>
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
    deps.config.deviceSilentAfterS * 1000,
  );

const view = async (deps: FleetDeps, d: DeviceRecord): Promise<Device> => {
  const sims = await listDeviceSims(deps.db.em(), [d.id]);
  return toDevice(d, sims, issuesOf(deps, d, sims));
};

const existing = async (deps: FleetDeps, id: string) => {
  const d = await findDevice(deps.db.em(), id);
  if (!d) throw notFound("device", id);
  return d;
};

/** A new device holding the token's hash, audited, DeviceChanged. */
export async function createDevice(
  deps: FleetDeps,
  actor: string,
  label: string,
  token: string,
): Promise<DeviceRecord> {
  const device = await deps.db.tx(async (em) => {
    const d = await insertDevice(em, { id: newDeviceId(), label, token_hash: hashToken(token) });
    await audit(em, { actor, action: "device.create", target: d.id, details: { label: d.label } });
    await deviceChanged(em, d, "created");
    return d;
  });
  deps.published();
  return device;
}

/** Every device with its SIMs and issues. */
export async function listDevices(deps: FleetDeps): Promise<Device[]> {
  const em = deps.db.em();
  const devices = await listDeviceRows(em);
  const sims = await listDeviceSims(
    em,
    devices.map((d) => d.id),
  );
  const now = new Date();
  return devices.map((d) => {
    const own = sims.filter((s) => s.device_id === d.id);
    return toDevice(d, own, issuesOf(deps, d, own, now));
  });
}

/** The device with its SIMs and issues, or 404. */
export async function getDevice(deps: FleetDeps, deviceId: string): Promise<Device> {
  return view(deps, await existing(deps, deviceId));
}

/** Renames the device (a no-op without a new label), audited, DeviceChanged. */
export async function updateDevice(
  deps: FleetDeps,
  actor: string,
  deviceId: string,
  label: string | undefined,
): Promise<Device> {
  const updated = await deviceTx(deps, deviceId, async (em) => {
    const d = await findDeviceForUpdate(em, deviceId);
    if (!d) throw notFound("device", deviceId);
    if (label === undefined || label === d.label) return d;
    await renameDevice(em, d.id, label);
    await audit(em, { actor, action: "device.rename", target: d.id, details: { from: d.label, to: label } });
    await deviceChanged(em, { ...d, label }, "updated");
    return { ...d, label };
  });
  deps.published();
  return view(deps, updated);
}

/** Deletes the device and takes its SIMs out of it, audited, DeviceDeleted; the SIMs' ids. */
export async function deleteDevice(deps: FleetDeps, actor: string, deviceId: string): Promise<string[]> {
  const unassigned = await deviceTx(deps, deviceId, async (em) => {
    const d = await findDeviceForUpdate(em, deviceId);
    if (!d) throw notFound("device", deviceId);
    const simIds = await unassignDeviceSims(em, d.id);
    await deleteDeviceRow(em, d.id);
    await audit(em, {
      actor,
      action: "device.delete",
      target: d.id,
      details: { label: d.label, unassigned_sim_ids: simIds },
    });
    await deviceDeleted(em, d.id, simIds);
    return simIds;
  });
  deps.published();
  return unassigned;
}

/** The device's health and issues, or 404. */
export async function deviceHealth(deps: FleetDeps, deviceId: string): Promise<DeviceHealth> {
  const d = await existing(deps, deviceId);
  const sims = await listDeviceSims(deps.db.em(), [d.id]);
  return toDeviceHealth(d, issuesOf(deps, d, sims));
}

/** Sets (a hash of the new token) or clears (null) the device's token, audited. */
export async function setToken(deps: FleetDeps, actor: string, deviceId: string, token: string | null): Promise<void> {
  await deviceTx(deps, deviceId, async (em) => {
    if (!(await setDeviceToken(em, deviceId, token === null ? null : hashToken(token))))
      throw notFound("device", deviceId);
    await audit(em, {
      actor,
      action: token === null ? "device.token_revoked" : "device.token_issued",
      target: deviceId,
    });
  });
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
