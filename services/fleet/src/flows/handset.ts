import { simAbsent } from "../domain/alerts.ts";
import { notFound } from "../domain/reasons.ts";
import { raiseAlert } from "../events/alerts.ts";
import {
  findDevice,
  findDeviceForUpdate,
  recordHeartbeat,
  type DeviceRecord,
  type HeartbeatWrite,
} from "../store/devices.ts";
import { listDeviceSims, updateSimFields, type SimRecord } from "../store/sims.ts";
import type { FleetDeps } from "./ports.ts";

/**
 * A handset's heartbeat (already checked) as its device's latest state, and the presence of
 * its own SIMs: one alert when a SIM goes missing, re-armed when the handset sees it again.
 * SIMs the handset does not mention are left alone.
 */
export async function recordDeviceHeartbeat(
  deps: FleetDeps,
  deviceId: string,
  heartbeat: HeartbeatWrite,
  now: Date,
): Promise<void> {
  const { sims } = heartbeat;
  const alerted = await deps.db.tx(async (em) => {
    const device = await findDeviceForUpdate(em, deviceId);
    if (!device) throw notFound("device", deviceId);
    await recordHeartbeat(em, deviceId, heartbeat, now);
    let raised = 0;
    for (const sim of await listDeviceSims(em, [deviceId])) {
      const seen = sims.find((s) => s.sim_id === sim.id);
      if (!seen) continue;
      if (!seen.present && !sim.absent_since) {
        await updateSimFields(em, sim.id, { absent_since: now });
        await raiseAlert(
          em,
          simAbsent({ sim_id: sim.id, msisdn: sim.msisdn, device_id: deviceId, absent_since: now }, now),
        );
        raised += 1;
      } else if (seen.present && sim.absent_since) {
        await updateSimFields(em, sim.id, { absent_since: null });
      }
    }
    return raised;
  });
  if (alerted) deps.published();
}

/** The SIMs in the device. */
export async function deviceSims(deps: FleetDeps, deviceId: string): Promise<SimRecord[]> {
  return listDeviceSims(deps.db.em(), [deviceId]);
}

/** The device, or 404. */
export async function deviceIdentity(deps: FleetDeps, deviceId: string): Promise<DeviceRecord> {
  const d = await findDevice(deps.db.em(), deviceId);
  if (!d) throw notFound("device", deviceId);
  return d;
}
