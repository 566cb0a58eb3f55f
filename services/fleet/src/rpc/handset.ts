import type { ServiceImpl } from "@connectrpc/connect";
import { ts, type Violation } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireDevice } from "../domain/agents.ts";
import { simAbsent } from "../domain/alerts.ts";
import { invalid, notFound } from "../domain/reasons.ts";
import { raiseAlert } from "../events/alerts.ts";
import { findDevice, findDeviceForUpdate, recordHeartbeat } from "../store/devices.ts";
import { listDeviceSims, updateSimFields } from "../store/sims.ts";
import type { FleetDeps } from "../flows/ports.ts";

type Impl = Pick<ServiceImpl<typeof FleetService>, "sendHeartbeat" | "listDeviceSims" | "getDeviceIdentity">;

const optionalLength = (problems: Violation[], field: string, value: string | undefined, max: number) => {
  if (value !== undefined && value.length > max) problems.push({ field, message: `must be at most ${max} characters` });
};

export function handsetHandlers(deps: FleetDeps): Impl {
  const { db } = deps;
  return {
    async sendHeartbeat(req) {
      const deviceId = requireDevice(req.caller);
      const problems: Violation[] = [];
      if (!req.appVersion) problems.push({ field: "app_version", message: "is required" });
      if (req.battery < 0 || req.battery > 100) problems.push({ field: "battery", message: "must be 0 to 100" });
      optionalLength(problems, "android_version", req.androidVersion, 40);
      optionalLength(problems, "manufacturer", req.manufacturer, 80);
      optionalLength(problems, "model", req.model, 80);
      if (problems.length) throw invalid(problems);
      const now = new Date();
      const sims = req.sims.map((s) => ({ sim_id: s.simId, present: s.present, signal: s.signal }));
      const alerted = await db.tx(async (em) => {
        const device = await findDeviceForUpdate(em, deviceId);
        if (!device) throw notFound("device", deviceId);
        await recordHeartbeat(
          em,
          deviceId,
          {
            app_version: req.appVersion,
            battery: req.battery,
            network: req.network,
            sims,
            android_version: req.androidVersion ?? null,
            android_sdk: req.androidSdk ?? null,
            manufacturer: req.manufacturer ?? null,
            model: req.model ?? null,
            battery_exempt: req.batteryExempt ?? null,
            report: req.report ?? null,
          },
          now,
        );
        // Presence of the device's own SIMs: one alert when a SIM goes missing, re-armed
        // when the handset sees it again. SIMs the handset does not mention are left alone.
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
      return {};
    },

    async listDeviceSims(req) {
      const deviceId = requireDevice(req.caller);
      const sims = await listDeviceSims(db.em(), [deviceId]);
      return {
        sims: sims.map((s) => ({
          simId: s.id,
          slot: s.subscription_slot ?? 0,
          operator: s.operator,
          msisdn: s.msisdn,
          status: s.status,
          balance: s.balance_mirror === null ? undefined : BigInt(s.balance_mirror),
          balanceUpdatedAt: ts(s.balance_updated_at),
        })),
      };
    },

    async getDeviceIdentity(req) {
      const deviceId = requireDevice(req.caller);
      const d = await findDevice(db.em(), deviceId);
      if (!d) throw notFound("device", deviceId);
      return { deviceId: d.id, label: d.label, status: d.status };
    },
  };
}
