import { z } from "zod";
import { DeviceHealthSchema, DeviceSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import {
  CreateDeviceResponseSchema,
  IssueDeviceTokenResponseSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { toContractJson } from "../../http/json.ts";
import { created, noContent, ok, route, text, type Route } from "../../http/route.ts";
import { adminOnly } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// Handsets (admin). device_id is a server-generated hex string, not a UUID: an id of any
// other form names no device (404).

const deviceJson = (d: Parameters<typeof toContractJson>[1] | undefined) => toContractJson(DeviceSchema, d!);

export const deviceRoutes: Route[] = [
  route({
    operationId: "createDevice",
    method: "post",
    path: "/v1/devices",
    tag: "Devices",
    summary: "Register a handset; its token is returned once and stored only as a hash (admin)",
    auth: ["session"],
    body: z.object({ label: text(200) }),
    responses: adminOnly(
      {
        201: {
          description: "device_id, device_token (once), label, created_at",
          schema: contractSchema(CreateDeviceResponseSchema),
        },
        422: "Invalid body",
      },
      FLEET,
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.createDevice({ caller, label: body.label });
      return created(toContractJson(CreateDeviceResponseSchema, res));
    },
  }),
  route({
    operationId: "listDevices",
    method: "get",
    path: "/v1/devices",
    tag: "Devices",
    summary: "Every handset with its SIMs, last heartbeat, health summary and issues (admin)",
    auth: ["session"],
    responses: adminOnly(
      { 200: { description: "Array of devices", schema: z.array(contractSchema(DeviceSchema)) } },
      FLEET,
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.listDevices({ caller });
      return ok(res.devices.map((d) => deviceJson(d)));
    },
  }),
  route({
    operationId: "getDevice",
    method: "get",
    path: "/v1/devices/:device_id",
    tag: "Devices",
    summary: "One handset with its SIMs (subscription_slot 0 is SIM 1) (admin)",
    auth: ["session"],
    responses: adminOnly(
      { 200: { description: "Device", schema: contractSchema(DeviceSchema) }, 404: "Unknown device" },
      FLEET,
      ["device_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.getDevice({ caller, deviceId: params.device_id });
      return ok(deviceJson(res.device));
    },
  }),
  route({
    operationId: "updateDevice",
    method: "patch",
    path: "/v1/devices/:device_id",
    tag: "Devices",
    summary: "Rename a handset (admin)",
    auth: ["session"],
    endsCredentials: true,
    body: z.object({ label: text(200).optional() }),
    responses: adminOnly(
      {
        200: { description: "Device", schema: contractSchema(DeviceSchema) },
        404: "Unknown device",
        422: "Invalid body",
      },
      FLEET,
      ["device_not_found"],
    ),
    async handle({ caller, body, params, services }) {
      const res = await services.fleet.updateDevice({ caller, deviceId: params.device_id, label: body.label });
      return ok(deviceJson(res.device));
    },
  }),
  route({
    operationId: "deleteDevice",
    method: "delete",
    path: "/v1/devices/:device_id",
    tag: "Devices",
    summary: "Delete a handset: its SIMs return to the unassigned pool, its operations lose device_id (admin)",
    auth: ["session"],
    endsCredentials: true,
    responses: adminOnly({ 204: "Deleted", 404: "Unknown device" }, FLEET, ["device_not_found"]),
    async handle({ caller, params, services }) {
      await services.fleet.deleteDevice({ caller, deviceId: params.device_id });
      return noContent();
    },
  }),
  route({
    operationId: "getDeviceHealth",
    method: "get",
    path: "/v1/devices/:device_id/health",
    tag: "Devices",
    summary: "A handset's latest heartbeat and health report, with issues derived on this read (admin)",
    auth: ["session"],
    responses: adminOnly(
      { 200: { description: "Device health", schema: contractSchema(DeviceHealthSchema) }, 404: "Unknown device" },
      FLEET,
      ["device_not_found"],
    ),
    async handle({ caller, params, services }) {
      const { health } = await services.fleet.getDeviceHealth({ caller, deviceId: params.device_id });
      return ok({ ...toContractJson(DeviceHealthSchema, health!), report: health!.report ?? null });
    },
  }),
  route({
    operationId: "issueDeviceToken",
    method: "post",
    path: "/v1/devices/:device_id/token",
    tag: "Devices",
    summary: "Replace a handset's token with a new one, returned once; the old one stops working (admin)",
    auth: ["session"],
    endsCredentials: true,
    responses: adminOnly(
      {
        201: { description: "device_id, device_token (once)", schema: contractSchema(IssueDeviceTokenResponseSchema) },
        404: "Unknown device",
      },
      FLEET,
      ["device_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.issueDeviceToken({ caller, deviceId: params.device_id });
      return created(toContractJson(IssueDeviceTokenResponseSchema, res));
    },
  }),
  route({
    operationId: "revokeDeviceToken",
    method: "delete",
    path: "/v1/devices/:device_id/token",
    tag: "Devices",
    summary: "Revoke a handset's token: it authenticates no more until a new one is issued (admin)",
    auth: ["session"],
    endsCredentials: true,
    responses: adminOnly({ 204: "Revoked", 404: "Unknown device" }, FLEET, ["device_not_found"]),
    async handle({ caller, params, services }) {
      await services.fleet.revokeDeviceToken({ caller, deviceId: params.device_id });
      return noContent();
    },
  }),
];
