import { one, rows, type EntityManager } from "@transferops/kit";
import type { HeartbeatSimReport } from "../domain/device-health.ts";
import type { DeviceStatus } from "../domain/vocabulary.ts";
import { date, dateOrNull } from "./values.ts";

export interface DeviceRecord {
  id: string;
  label: string;
  status: DeviceStatus;
  created_at: Date;
  last_seen_at: Date | null;
  app_version: string | null;
  android_version: string | null;
  android_sdk: number | null;
  manufacturer: string | null;
  model: string | null;
  battery: number | null;
  network: string | null;
  battery_exempt: boolean | null;
  heartbeat_sims: HeartbeatSimReport[] | null;
  report: Record<string, unknown> | null;
  health_reported_at: Date | null;
}

const toDevice = (r: DeviceRecord): DeviceRecord => ({
  ...r,
  created_at: date(r.created_at),
  last_seen_at: dateOrNull(r.last_seen_at),
  health_reported_at: dateOrNull(r.health_reported_at),
});
const device = (r: DeviceRecord | undefined) => (r ? toDevice(r) : undefined);

const COLUMNS = `id, label, status, created_at, last_seen_at, app_version, android_version, android_sdk, manufacturer, model,
  battery, network, battery_exempt, heartbeat_sims, report, health_reported_at`;

export async function insertDevice(
  em: EntityManager,
  d: { id: string; label: string; token_hash: string },
): Promise<DeviceRecord> {
  return toDevice(
    (await one<DeviceRecord>(
      em,
      `insert into fleet.devices (id, label, token_hash, token_issued_at) values (?, ?, ?, now()) returning ${COLUMNS}`,
      [d.id, d.label, d.token_hash],
    ))!,
  );
}

export async function findDevice(em: EntityManager, id: string): Promise<DeviceRecord | undefined> {
  return device(await one<DeviceRecord>(em, `select ${COLUMNS} from fleet.devices where id = ?`, [id]));
}

export async function findDeviceForUpdate(em: EntityManager, id: string): Promise<DeviceRecord | undefined> {
  return device(await one<DeviceRecord>(em, `select ${COLUMNS} from fleet.devices where id = ? for update`, [id]));
}

export async function listDevices(em: EntityManager): Promise<DeviceRecord[]> {
  return (await rows<DeviceRecord>(em, `select ${COLUMNS} from fleet.devices order by created_at, id`)).map(toDevice);
}

/**
 * A device token's version: its issue time in microseconds (each issue is its own
 * transaction, so two tokens of one device never share it). A revoked token has no hash.
 */
export const TOKEN_VERSION = `(extract(epoch from token_issued_at) * 1000000)::bigint::text`;

/** The device a live token belongs to, and the token's version; a revoked token has no hash on any row. */
export async function findDeviceByTokenHash(
  em: EntityManager,
  tokenHash: string,
): Promise<{ id: string; label: string; status: string; token_version: string } | undefined> {
  return one(
    em,
    `select id, label, status, ${TOKEN_VERSION} as token_version from fleet.devices where token_hash = ?`,
    [tokenHash],
  );
}

export async function setDeviceToken(em: EntityManager, id: string, tokenHash: string | null): Promise<boolean> {
  const r = await rows(
    em,
    `update fleet.devices set token_hash = ?, token_issued_at = case when ?::text is null then token_issued_at else now() end, updated_at = now()
      where id = ? returning id`,
    [tokenHash, tokenHash, id],
  );
  return r.length > 0;
}

export async function renameDevice(em: EntityManager, id: string, label: string): Promise<void> {
  await em.execute(`update fleet.devices set label = ?, updated_at = now() where id = ?`, [label, id]);
}

export async function deleteDevice(em: EntityManager, id: string): Promise<void> {
  await em.execute(`delete from fleet.devices where id = ?`, [id]);
}

/** Unassigns every SIM of a device, keeping everything else; returns their ids. */
export async function unassignDeviceSims(em: EntityManager, deviceId: string): Promise<string[]> {
  const r = await rows<{ id: string }>(
    em,
    `update fleet.sims set device_id = null, subscription_slot = null, absent_since = null, updated_at = now()
      where device_id = ? returning id`,
    [deviceId],
  );
  return r.map((x) => x.id).sort();
}

export interface HeartbeatWrite {
  app_version: string;
  battery: number;
  network: string;
  sims: HeartbeatSimReport[];
  android_version: string | null;
  android_sdk: number | null;
  manufacturer: string | null;
  model: string | null;
  battery_exempt: boolean | null;
  report: Record<string, unknown> | null;
}

/**
 * Records a heartbeat as the device's latest state. Without a report the previous one is
 * cleared: the latest heartbeat decides `no_report`.
 */
export async function recordHeartbeat(em: EntityManager, id: string, h: HeartbeatWrite, at: Date): Promise<void> {
  await em.execute(
    `update fleet.devices set last_seen_at = ?, app_version = ?, battery = ?, network = ?, heartbeat_sims = ?::jsonb,
       android_version = ?, android_sdk = ?, manufacturer = ?, model = ?, battery_exempt = ?,
       report = ?::jsonb, health_reported_at = ?
     where id = ?`,
    [
      at,
      h.app_version,
      h.battery,
      h.network,
      JSON.stringify(h.sims),
      h.android_version,
      h.android_sdk,
      h.manufacturer,
      h.model,
      h.battery_exempt,
      h.report === null ? null : JSON.stringify(h.report),
      h.report === null ? null : at,
      id,
    ],
  );
}

/** Sets every device of one status to another; returns them, by id. */
/** Ids of the devices in a status, in id order. */
export async function deviceIdsWithStatus(em: EntityManager, status: DeviceStatus): Promise<string[]> {
  const r = await rows<{ id: string }>(em, `select id from fleet.devices where status = ? order by id`, [status]);
  return r.map((d) => d.id);
}

export async function setAllDeviceStatus(
  em: EntityManager,
  from: DeviceStatus,
  to: DeviceStatus,
): Promise<{ id: string; label: string; status: DeviceStatus }[]> {
  const r = await rows<{ id: string; label: string; status: DeviceStatus }>(
    em,
    `update fleet.devices set status = ?, updated_at = now() where status = ? returning id, label, status`,
    [to, from],
  );
  return r.sort((a, b) => a.id.localeCompare(b.id));
}

/**
 * Claims the devices silent for longer than `silentAfterS` whose silence has not been
 * alerted yet, marking it alerted in the same statement (safe with several replicas).
 * Silent since its last heartbeat; a device that never sent one is silent since its
 * registration once it holds a SIM (work can be queued on it), and not watched before.
 */
export async function claimSilentDevices(
  em: EntityManager,
  silentAfterS: number,
): Promise<{ id: string; label: string; last_seen_at: Date | null; silent_since: Date }[]> {
  const r = await rows<{ id: string; label: string; last_seen_at: string | null; silent_since: string }>(
    em,
    `update fleet.devices d set silence_alerted_for = coalesce(d.last_seen_at, d.created_at)
      where coalesce(d.last_seen_at, d.created_at) < now() - make_interval(secs => ?)
        and d.silence_alerted_for is distinct from coalesce(d.last_seen_at, d.created_at)
        and (d.last_seen_at is not null or exists (select 1 from fleet.sims s where s.device_id = d.id))
      returning d.id, d.label, d.last_seen_at, coalesce(d.last_seen_at, d.created_at) as silent_since`,
    [silentAfterS],
  );
  return r.map((d) => ({
    ...d,
    last_seen_at: d.last_seen_at === null ? null : date(d.last_seen_at),
    silent_since: date(d.silent_since),
  }));
}
