import type { ServiceImpl } from "@connectrpc/connect";
import { big, ts, type Violation } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireDevice } from "../domain/agents.ts";
import { invalid } from "../domain/reasons.ts";
import { deviceIdentity, deviceSims, recordDeviceHeartbeat } from "../flows/handset.ts";
import type { FleetDeps } from "../flows/ports.ts";

type Impl = Pick<ServiceImpl<typeof FleetService>, "sendHeartbeat" | "listDeviceSims" | "getDeviceIdentity">;

const optionalLength = (problems: Violation[], field: string, value: string | undefined, max: number) => {
  if (value !== undefined && value.length > max) problems.push({ field, message: `must be at most ${max} characters` });
};

export function handsetHandlers(deps: FleetDeps): Impl {
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
      await recordDeviceHeartbeat(
        deps,
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
      return {};
    },

    async listDeviceSims(req) {
      const deviceId = requireDevice(req.caller);
      const sims = await deviceSims(deps, deviceId);
      return {
        sims: sims.map((s) => ({
          simId: s.id,
          slot: s.subscription_slot ?? 0,
          operator: s.operator,
          msisdn: s.msisdn,
          status: s.status,
          balance: big(s.balance_mirror),
          balanceUpdatedAt: ts(s.balance_updated_at),
        })),
      };
    },

    async getDeviceIdentity(req) {
      const deviceId = requireDevice(req.caller);
      const d = await deviceIdentity(deps, deviceId);
      return { deviceId: d.id, label: d.label, status: d.status };
    },
  };
}
