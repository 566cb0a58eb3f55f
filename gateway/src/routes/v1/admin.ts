import { z } from "zod";
import { DEFAULT_OP_TYPE } from "@transferops/kit";
import { FleetLimitSchema, SimSchema, SimSnapshotRowSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import {
  GetFleetHealthResponseSchema,
  LiftCircuitBreakerResponseSchema,
  ResetProductionDataResponseSchema,
  SetCircuitBreakerResponseSchema,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { probeServices } from "../../health.ts";
import { toContractJson } from "../../http/json.ts";
import { ok, route, type Route } from "../../http/route.ts";
import { adminOnly } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// Admin routes of fleet: SIM freeze, snapshot, circuit breaker, fleet limits, reset and
// fleet health. A session of an admin; the API key and device tokens are refused (403).

const positive = z.number().int().positive();

/** GET /v1/admin/health: the basic health plus fleet's counts. */
const fleetHealthSchema = z.object({
  status: z.enum(["ok", "degraded"]),
  services: z.record(z.string(), z.string()),
  time: z.iso.datetime(),
  breaker_active: z.boolean(),
  devices: z.object({
    total: z.number().int(),
    online: z.number().int(),
    offline: z.number().int(),
    frozen: z.number().int(),
  }),
  sims: z.object({
    total: z.number().int(),
    unmeasured: z.number().int(),
    stale: z.number().int(),
    frozen: z.number().int(),
    unassigned: z.number().int(),
  }),
  operations: z.object({ past_evidence_window_not_swept: z.number().int(), unproven_waiting: z.number().int() }),
  notifications_open: z.number().int(),
  notes: z.array(z.string()),
});

/** Freeze or unfreeze a SIM: the same route but for its action and the status it leaves. */
function simStatusRoute(action: "freeze" | "unfreeze", summary: string, status: string): Route {
  return route({
    operationId: `${action}Sim`,
    method: "post",
    path: `/v1/admin/sims/:sim_id/${action}`,
    tag: "Admin",
    summary,
    auth: ["session"],
    uuidParams: ["sim_id"],
    responses: adminOnly(
      {
        200: { description: `The SIM with status ${status}`, schema: contractSchema(SimSchema) },
        404: "Unknown SIM",
        409: "The SIM is retired",
      },
      FLEET,
      ["sim_not_found", "sim_retired"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet[`${action}Sim`]({ caller, simId: params.sim_id });
      return ok(toContractJson(SimSchema, res.sim!));
    },
  });
}

export const adminRoutes: Route[] = [
  simStatusRoute("freeze", "Freeze a SIM: new operations are prevented, in-flight ones continue", "frozen"),
  simStatusRoute("unfreeze", "Unfreeze a SIM", "active"),
  route({
    operationId: "getSimSnapshot",
    method: "get",
    path: "/v1/admin/sims/snapshot",
    tag: "Admin",
    summary: "Every SIM with its handset, balance and thresholds",
    auth: ["session"],
    responses: adminOnly(
      {
        200: {
          description:
            "Array of id, device_id, subscription_slot, operator, msisdn, balance_mirror, balance_updated_at, status, low_balance_threshold, created_at",
          schema: z.array(contractSchema(SimSnapshotRowSchema)),
        },
      },
      FLEET,
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.getSimSnapshot({ caller });
      return ok(res.sims.map((s) => toContractJson(SimSnapshotRowSchema, s)));
    },
  }),
  route({
    operationId: "setCircuitBreaker",
    method: "put",
    path: "/v1/admin/circuit-breaker",
    tag: "Admin",
    summary:
      "Trip (active=true: operation creation answers 423 and every active handset is frozen) or reset the breaker",
    auth: ["session"],
    description:
      "Tripping (active=true) makes create operation answer 423 (detail circuit_breaker) and freezes every active handset. Resetting (active=false) does not restore the handsets: they stay frozen until the lift route, and the answer lists them in frozen_until_lift_device_ids (frozen_device_ids: the devices this call froze).",
    body: z.object({ active: z.boolean() }),
    requestExample: { active: false },
    responses: adminOnly(
      {
        200: {
          description: "status active or inactive, frozen_device_ids, changed_at",
          schema: contractSchema(SetCircuitBreakerResponseSchema),
        },
        422: "Invalid body",
      },
      FLEET,
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.setCircuitBreaker({ caller, active: body.active });
      return ok(toContractJson(SetCircuitBreakerResponseSchema, res));
    },
  }),
  route({
    operationId: "liftCircuitBreaker",
    method: "post",
    path: "/v1/admin/circuit-breaker/lift",
    tag: "Admin",
    summary: "Reset the breaker and set every frozen handset to active (audited)",
    auth: ["session"],
    responses: adminOnly(
      {
        200: {
          description: "status inactive, restored_device_ids",
          schema: contractSchema(LiftCircuitBreakerResponseSchema),
        },
      },
      FLEET,
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.liftCircuitBreaker({ caller });
      return ok(toContractJson(LiftCircuitBreakerResponseSchema, res));
    },
  }),
  route({
    operationId: "recordFleetLimit",
    method: "patch",
    path: "/v1/admin/limits",
    tag: "Admin",
    summary: "Record a fleet limit (versioned; recorded, not enforced)",
    auth: ["session"],
    body: z.object({
      operator: z.string().max(40).nullable().optional(),
      op_type: z.string().max(40).optional(),
      max_amount: positive,
      max_daily_agent: positive,
      max_daily_sim: positive,
    }),
    responses: adminOnly(
      {
        200: { description: "The recorded limit", schema: contractSchema(FleetLimitSchema) },
        422: "Invalid body, unknown operator code, or an op_type other than deposit, withdrawal, float_deposit",
      },
      FLEET,
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.recordFleetLimit({
        caller,
        operator: body.operator ?? undefined,
        opType: body.op_type ?? DEFAULT_OP_TYPE,
        maxAmount: BigInt(body.max_amount),
        maxDailyAgent: BigInt(body.max_daily_agent),
        maxDailySim: BigInt(body.max_daily_sim),
      });
      return ok(toContractJson(FleetLimitSchema, res.limit!));
    },
  }),
  route({
    operationId: "getFleetLimits",
    method: "get",
    path: "/v1/admin/limits",
    tag: "Admin",
    summary: "The current fleet limits; enforced is always false",
    auth: ["session"],
    responses: adminOnly(
      {
        200: {
          description: "enforced (false) and limits",
          schema: z.object({ enforced: z.boolean(), limits: z.array(contractSchema(FleetLimitSchema)) }),
        },
      },
      FLEET,
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.getFleetLimits({ caller });
      return ok({ enforced: res.enforced, limits: res.limits.map((l) => toContractJson(FleetLimitSchema, l)) });
    },
  }),
  route({
    operationId: "resetProductionData",
    method: "post",
    path: "/v1/admin/reset",
    tag: "Admin",
    summary: "Delete production data across services (confirm must be exactly RESET SERVICE PRODUCTION DATA)",
    auth: ["session"],
    endsCredentials: true,
    body: z.object({ confirm: z.string().max(200) }),
    responses: adminOnly(
      {
        200: {
          description: "cleaned, deleted, preserved, queue_purged, notes",
          schema: contractSchema(ResetProductionDataResponseSchema),
        },
        422: "Wrong or missing confirmation phrase; nothing was touched",
      },
      FLEET,
      ["reset_not_confirmed"],
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.resetProductionData({ caller, confirm: body.confirm });
      return ok(toContractJson(ResetProductionDataResponseSchema, res));
    },
  }),
  route({
    operationId: "getFleetHealth",
    method: "get",
    path: "/v1/admin/health",
    tag: "Admin",
    summary:
      "Basic health plus devices online, unmeasured or stale SIMs, and transfers past the evidence window not yet swept",
    auth: ["session"],
    responses: adminOnly({ 200: { description: "Fleet health", schema: fleetHealthSchema } }, FLEET),
    async handle({ caller, services }) {
      const fleet = await services.fleet.getFleetHealth({ caller });
      const states = await probeServices(services.urls);
      const healthy = Object.values(states).every((s) => s === "SERVING");
      const f = toContractJson(GetFleetHealthResponseSchema, fleet);
      return ok({
        status: healthy ? "ok" : "degraded",
        services: states,
        time: new Date().toISOString(),
        breaker_active: f.breaker_active,
        devices: {
          total: f.devices_total,
          online: f.devices_online,
          offline: fleet.devicesTotal - fleet.devicesOnline,
          frozen: f.devices_frozen,
        },
        sims: {
          total: f.sims_total,
          unmeasured: f.sims_unmeasured,
          stale: f.sims_stale,
          frozen: f.sims_frozen,
          unassigned: f.sims_unassigned,
        },
        operations: { past_evidence_window_not_swept: f.past_window_not_swept, unproven_waiting: f.unproven_waiting },
        notifications_open: f.notifications_open,
        notes: f.notes,
      });
    },
  }),
];
