import { z } from "zod";
import type { JsonObject } from "@bufbuild/protobuf";
import {
  GetDeviceIdentityResponseSchema,
  HandsetSimSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { toContractJson } from "../../http/json.ts";
import { int32, noContent, ok, route, type Route } from "../../http/route.ts";

// Handset routes served by fleet (device token): heartbeat, the device's SIMs, its identity.
// A device sees only itself: scope comes from the token.

const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();

export const handsetFleetRoutes: Route[] = [
  route({
    operationId: "sendHeartbeat",
    method: "post",
    path: "/v1/device/heartbeat",
    tag: "Handset",
    summary: "Heartbeat with the handset's health report; send every 60 seconds (silence over 5 minutes alerts)",
    auth: ["device"],
    body: z.object({
      app_version: z.string().min(1).max(100),
      battery: z.number().int().min(0).max(100),
      network: z.string().max(100),
      sims: z.array(z.object({ sim_id: z.string().max(64), present: z.boolean(), signal: int32() })).max(8),
      android_version: nullable(z.string().max(40)),
      android_sdk: nullable(z.number().int().min(0).max(1000)),
      manufacturer: nullable(z.string().max(80)),
      model: nullable(z.string().max(80)),
      battery_exempt: nullable(z.boolean()),
      report: nullable(z.record(z.string(), z.unknown())),
    }),
    responses: { 204: "Recorded", 401: "Bad credentials", 403: "Not a device token", 422: "Invalid body" },
    async handle({ caller, body, services }) {
      await services.fleet.sendHeartbeat({
        caller,
        appVersion: body.app_version,
        battery: body.battery,
        network: body.network,
        sims: body.sims.map((s) => ({ simId: s.sim_id, present: s.present, signal: s.signal })),
        androidVersion: body.android_version ?? undefined,
        androidSdk: body.android_sdk ?? undefined,
        manufacturer: body.manufacturer ?? undefined,
        model: body.model ?? undefined,
        batteryExempt: body.battery_exempt ?? undefined,
        report: (body.report ?? undefined) as JsonObject | undefined,
      });
      return noContent();
    },
  }),
  route({
    operationId: "listDeviceSims",
    method: "get",
    path: "/v1/device/sims",
    tag: "Handset",
    summary: "The calling handset's SIMs with their measured balance",
    auth: ["device"],
    responses: {
      200: "Array of sim_id, slot, operator, msisdn, status, balance, balance_updated_at",
      401: "Bad credentials",
      403: "Not a device token",
    },
    async handle({ caller, services }) {
      const res = await services.fleet.listDeviceSims({ caller });
      return ok(res.sims.map((s) => toContractJson(HandsetSimSchema, s)));
    },
  }),
  route({
    operationId: "getDeviceIdentity",
    method: "get",
    path: "/v1/device/me",
    tag: "Handset",
    summary: "The calling handset's identity",
    auth: ["device"],
    responses: {
      200: "device_id, label, status",
      401: "Bad credentials",
      403: "Not a device token",
      404: "Device gone",
    },
    async handle({ caller, services }) {
      const res = await services.fleet.getDeviceIdentity({ caller });
      return ok(toContractJson(GetDeviceIdentityResponseSchema, res));
    },
  }),
];
