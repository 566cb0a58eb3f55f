import type { ServiceImpl } from "@connectrpc/connect";
import { ts } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin } from "../domain/agents.ts";
import { newToken } from "../domain/secrets.ts";
import {
  createDevice,
  deleteDevice,
  deviceHealth,
  getDevice,
  listDevices,
  setToken,
  updateDevice,
} from "../flows/devices.ts";
import type { FleetDeps } from "../flows/ports.ts";

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

export function devicesHandlers(deps: FleetDeps): Impl {
  return {
    async createDevice(req) {
      requireAdmin(req.caller);
      const token = newToken("device");
      const device = await createDevice(deps, req.caller!.agentId, req.label, token);
      return { deviceId: device.id, deviceToken: token, label: device.label, createdAt: ts(device.created_at) };
    },

    async listDevices(req) {
      requireAdmin(req.caller);
      return { devices: await listDevices(deps) };
    },

    async getDevice(req) {
      requireAdmin(req.caller);
      return { device: await getDevice(deps, req.deviceId) };
    },

    async updateDevice(req) {
      requireAdmin(req.caller);
      return { device: await updateDevice(deps, req.caller!.agentId, req.deviceId, req.label) };
    },

    async deleteDevice(req) {
      requireAdmin(req.caller);
      return { unassignedSimIds: await deleteDevice(deps, req.caller!.agentId, req.deviceId) };
    },

    async getDeviceHealth(req) {
      requireAdmin(req.caller);
      return { health: await deviceHealth(deps, req.deviceId) };
    },

    async issueDeviceToken(req) {
      requireAdmin(req.caller);
      const token = newToken("device");
      await setToken(deps, req.caller!.agentId, req.deviceId, token);
      return { deviceId: req.deviceId, deviceToken: token };
    },

    async revokeDeviceToken(req) {
      requireAdmin(req.caller);
      await setToken(deps, req.caller!.agentId, req.deviceId, null);
      return {};
    },
  };
}
