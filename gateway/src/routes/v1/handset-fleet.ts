import { z } from "zod";
import type { JsonObject } from "@bufbuild/protobuf";
import {
  GetDeviceIdentityResponseSchema,
  HandsetSimSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { toContractJson } from "../../http/json.ts";
import { int32, noContent, ok, route, type Route } from "../../http/route.ts";
import { withReasons } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// Handset routes served by fleet (device token): heartbeat, the device's SIMs, its identity.
// A device sees only itself: scope comes from the token.

const nullable = <T extends z.ZodType>(t: T) => t.nullable().optional();

/** Keeps the first `max` entries (the handset's order): the excess is dropped, never the heartbeat. */
const upTo = <T extends z.ZodType>(item: T, max: number) => z.array(item).transform((a) => a.slice(0, max));
/** A text cut at `max` characters rather than refused. */
const cut = (max: number) => z.string().transform((s) => s.slice(0, max));

/**
 * The health report: every group optional and kept as sent, within the limits the contract
 * names (`sims` up to 4, `recent_errors` up to 5). Past them the excess is trimmed, not the
 * heartbeat refused (a refused heartbeat made a working handset look silent);
 * a battery level outside 0 to 100 is still refused.
 */
const healthReport = z.looseObject({
  battery: z
    .looseObject({ level: z.number().int().min(0).max(100).nullable().optional() })
    .nullable()
    .optional(),
  sims: upTo(z.record(z.string(), z.unknown()), 4).nullable().optional(),
  recent_errors: upTo(z.looseObject({ at: cut(40).nullable().optional(), message: cut(1000).nullable().optional() }), 5)
    .nullable()
    .optional(),
});

export const handsetFleetRoutes: Route[] = [
  route({
    operationId: "sendHeartbeat",
    method: "post",
    path: "/v1/device/heartbeat",
    tag: "Handset",
    summary: "Heartbeat with the handset's health report; send every 60 seconds (silence over 5 minutes alerts)",
    description:
      "Send every 60 seconds; a device silent for more than 5 minutes raises an alert. The health report's groups are all optional and kept as sent, within the contract's limits: sims up to 4 and recent_errors up to 5 (the first ones kept, the excess dropped; an error's `at` cut at 40 characters and `message` at 1,000), battery level 0 to 100 (422 otherwise).",
    auth: ["device"],
    requestExample: {
      app_version: "1.2.0",
      battery: 80,
      network: "4G",
      sims: [{ sim_id: "3f0c2a4e-8b1d-4c6f-9e2a-5d7b8c9d0e1f", present: true, signal: 3 }],
      android_version: "14",
      android_sdk: 34,
      manufacturer: "Samsung",
      model: "A15",
      battery_exempt: true,
      report: {
        battery: { level: 80, charging: false },
        sims: [{ slot: 0, operator: "operator_b", sim_id: "3f0c2a4e-8b1d-4c6f-9e2a-5d7b8c9d0e1f", present: true }],
        recent_errors: [{ at: "2026-11-22T09:30:00Z", message: "USSD session timed out" }],
      },
    },
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
      report: nullable(healthReport),
    }),
    responses: withReasons(
      { 204: "Recorded", 401: "Bad credentials", 403: "Not a device token", 422: "Invalid body" },
      FLEET,
      ["device_required"],
    ),
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
    responses: withReasons(
      {
        200: {
          description: "Array of sim_id, slot, operator, msisdn, status, balance, balance_updated_at",
          schema: z.array(contractSchema(HandsetSimSchema)),
        },
        401: "Bad credentials",
        403: "Not a device token",
      },
      FLEET,
      ["device_required"],
    ),
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
    responses: withReasons(
      {
        200: { description: "device_id, label, status", schema: contractSchema(GetDeviceIdentityResponseSchema) },
        401: "Bad credentials",
        403: "Not a device token",
        404: "Device gone",
      },
      FLEET,
      ["device_required", "device_not_found"],
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.getDeviceIdentity({ caller });
      return ok(toContractJson(GetDeviceIdentityResponseSchema, res));
    },
  }),
];
