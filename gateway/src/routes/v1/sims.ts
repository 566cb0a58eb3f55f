import { big, OPERATORS, SIM_STATUSES } from "@transferops/kit";
import { BALANCE_SOURCES } from "@transferops/fleet/vocabulary";
import { z } from "zod";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { SimSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import { GetSimHistoryResponseSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { toContractJson } from "../../http/json.ts";
import { created, instant, noContent, ok, queryBool, route, type Route } from "../../http/route.ts";
import { adminOnly, withReasons } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// SIM inventory (admin) and balance recording (API key). sim_id is a server-generated UUID.

const simJson = (s: Parameters<typeof toContractJson>[1] | undefined) => toContractJson(SimSchema, s!);

/** Register and assign bodies carry the slot as the string "0" or "1"; numbers are accepted too. */
const slot = z.union([z.enum(["0", "1"]), z.literal(0), z.literal(1)]).transform((v) => Number(v) as 0 | 1);
const deviceId = z.string().min(1).max(64);
const threshold = z.number().int().min(0).nullable();

const simSchema = contractSchema(SimSchema);
const balanceRecordedSchema = z.object({
  sim_id: simSchema.shape.sim_id,
  balance_mirror: simSchema.shape.balance_mirror,
  balance_updated_at: simSchema.shape.balance_updated_at,
  balance_source: simSchema.shape.balance_source,
  applied: z.boolean(),
});

export const simRoutes: Route[] = [
  route({
    operationId: "listSims",
    method: "get",
    path: "/v1/sims",
    tag: "SIMs",
    summary: "Every SIM; unassigned=true only unassigned, false only assigned (admin)",
    auth: ["session"],
    query: z.object({ unassigned: queryBool().optional() }),
    responses: adminOnly(
      { 200: { description: "Array of SIMs", schema: z.array(contractSchema(SimSchema)) }, 422: "Invalid query" },
      FLEET,
    ),
    async handle({ caller, query, services }) {
      const res = await services.fleet.listSims({ caller, unassigned: query.unassigned });
      return ok(res.sims.map((s) => simJson(s)));
    },
  }),
  route({
    operationId: "getSim",
    method: "get",
    path: "/v1/sims/:sim_id",
    tag: "SIMs",
    summary: "One SIM (admin)",
    auth: ["session"],
    uuidParams: ["sim_id"],
    responses: adminOnly(
      { 200: { description: "SIM", schema: contractSchema(SimSchema) }, 404: "Unknown SIM" },
      FLEET,
      ["sim_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.getSim({ caller, simId: params.sim_id });
      return ok(simJson(res.sim));
    },
  }),
  route({
    operationId: "createSim",
    method: "post",
    path: "/v1/sims",
    tag: "SIMs",
    summary: "Provision a SIM with its PIN (stored encrypted), optionally in a handset slot (admin)",
    auth: ["session"],
    body: z
      .object({
        operator: z.enum(OPERATORS),
        msisdn: z.string().regex(/^\d{9}$/, "must be 9 digits (local format)"),
        pin: z.string().regex(/^\d{4,8}$/, "must be 4 to 8 digits"),
        device_id: deviceId.optional(),
        subscription_slot: slot.optional(),
      })
      .refine((b) => (b.device_id === undefined) === (b.subscription_slot === undefined), {
        message: "device_id and subscription_slot must be given together",
        path: ["subscription_slot"],
      }),
    responses: adminOnly(
      {
        201: {
          description: "sim_id, operator, msisdn, device_id, subscription_slot, created_at (the SIM)",
          schema: contractSchema(SimSchema),
        },
        404: "Unknown device",
        409: "MSISDN exists, device already has 2 SIMs, slot occupied, or device not active",
        422: "Invalid body, or only one of device_id and subscription_slot",
      },
      FLEET,
      ["device_not_found", "msisdn_exists", "device_not_active", "device_full", "slot_occupied"],
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.createSim({
        caller,
        operator: body.operator,
        msisdn: body.msisdn,
        pin: body.pin,
        deviceId: body.device_id,
        subscriptionSlot: body.subscription_slot,
      });
      return created(simJson(res.sim));
    },
  }),
  route({
    operationId: "updateSim",
    method: "patch",
    path: "/v1/sims/:sim_id",
    tag: "SIMs",
    summary: "Change a SIM's status or balance thresholds; null clears a threshold (admin)",
    auth: ["session"],
    uuidParams: ["sim_id"],
    body: z.object({
      status: z.enum(SIM_STATUSES).optional(),
      low_balance_threshold: threshold.optional(),
      high_balance_threshold: threshold.optional(),
    }),
    responses: adminOnly(
      {
        200: { description: "SIM", schema: contractSchema(SimSchema) },
        404: "Unknown SIM",
        422: "Invalid body, or low threshold above high",
      },
      FLEET,
      ["sim_not_found", "msisdn_exists"],
    ),
    async handle({ caller, body, params, services }) {
      const res = await services.fleet.updateSim({
        caller,
        simId: params.sim_id,
        status: body.status,
        setLowBalanceThreshold: body.low_balance_threshold !== undefined,
        lowBalanceThreshold: big(body.low_balance_threshold),
        setHighBalanceThreshold: body.high_balance_threshold !== undefined,
        highBalanceThreshold: big(body.high_balance_threshold),
      });
      return ok(simJson(res.sim));
    },
  }),
  route({
    operationId: "deleteSim",
    method: "delete",
    path: "/v1/sims/:sim_id",
    tag: "SIMs",
    summary:
      "Delete a SIM permanently: operations keep their rows with sim_id nulled; its evidences go with it (admin)",
    auth: ["session"],
    uuidParams: ["sim_id"],
    responses: adminOnly({ 204: "Deleted", 404: "Unknown SIM" }, FLEET, ["sim_not_found"]),
    async handle({ caller, params, services }) {
      await services.fleet.deleteSim({ caller, simId: params.sim_id });
      return noContent();
    },
  }),
  route({
    operationId: "assignSim",
    method: "patch",
    path: "/v1/sims/:sim_id/assignment",
    tag: "SIMs",
    summary: "Put a SIM in a handset slot or move it; the measured balance is kept (admin)",
    auth: ["session"],
    uuidParams: ["sim_id"],
    body: z.object({ device_id: deviceId, subscription_slot: slot }),
    responses: adminOnly(
      {
        200: { description: "sim_id, device_id, subscription_slot (the SIM)", schema: contractSchema(SimSchema) },
        404: "Unknown SIM or device",
        409: "Device already has 2 SIMs, slot occupied, or device not active",
        422: "Invalid body",
      },
      FLEET,
      ["sim_not_found", "device_not_found", "device_not_active", "device_full", "slot_occupied"],
    ),
    async handle({ caller, body, params, services }) {
      const res = await services.fleet.assignSim({
        caller,
        simId: params.sim_id,
        deviceId: body.device_id,
        subscriptionSlot: body.subscription_slot,
      });
      return ok(simJson(res.sim));
    },
  }),
  route({
    operationId: "unassignSim",
    method: "delete",
    path: "/v1/sims/:sim_id/assignment",
    tag: "SIMs",
    summary: "Take a SIM out of its handset (admin)",
    auth: ["session"],
    uuidParams: ["sim_id"],
    responses: adminOnly(
      {
        200: { description: "The SIM with device_id and subscription_slot null", schema: contractSchema(SimSchema) },
        404: "Unknown SIM",
        409: "Already unassigned, or operations queued or running",
      },
      FLEET,
      ["sim_not_found", "sim_unassigned", "sim_busy"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.unassignSim({ caller, simId: params.sim_id });
      return ok(simJson(res.sim));
    },
  }),
  route({
    operationId: "recordSimBalance",
    method: "patch",
    path: "/v1/sims/:sim_id/balance",
    tag: "SIMs",
    summary: "Record a measured balance (API key); an older reading never replaces a newer one",
    auth: ["api_key"],
    uuidParams: ["sim_id"],
    body: z.object({
      balance: z.number().int().min(0),
      observed_at: instant().optional(),
      source: z.enum(BALANCE_SOURCES).optional(),
    }),
    responses: withReasons(
      {
        200: {
          description:
            "sim_id, balance_mirror, balance_updated_at, balance_source, applied (false when the reading was older than the mirror)",
          schema: balanceRecordedSchema,
        },
        401: "Bad credentials",
        403: "Not the API key",
        404: "Unknown SIM",
        422: "Negative balance or future observed_at",
      },
      FLEET,
      ["api_key_required", "sim_not_found"],
    ),
    async handle({ caller, body, params, services }) {
      const res = await services.fleet.recordSimBalance({
        caller,
        simId: params.sim_id,
        balance: BigInt(body.balance),
        observedAt: body.observed_at ? timestampFromDate(new Date(body.observed_at)) : undefined,
        source: body.source ?? "api",
      });
      const sim = simJson(res.sim);
      return ok({
        sim_id: sim.sim_id,
        balance_mirror: sim.balance_mirror,
        balance_updated_at: sim.balance_updated_at,
        balance_source: sim.balance_source,
        applied: res.applied,
      });
    },
  }),
  route({
    operationId: "getSimHistory",
    method: "get",
    path: "/v1/sims/:sim_id/history",
    tag: "SIMs",
    summary: "Totals and operations of a SIM, derived from operations (admin)",
    auth: ["session"],
    uuidParams: ["sim_id"],
    responses: adminOnly(
      {
        200: {
          description: "sim_id, totals, balance_mirror, operations",
          schema: contractSchema(GetSimHistoryResponseSchema),
        },
        404: "Unknown SIM",
      },
      FLEET,
      ["sim_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.getSimHistory({ caller, simId: params.sim_id });
      return ok(toContractJson(GetSimHistoryResponseSchema, res));
    },
  }),
];
