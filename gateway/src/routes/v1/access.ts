import { z } from "zod";
import { AccessGrantSchema, OwnSimSchema } from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import { toContractJson } from "../../http/json.ts";
import { ok, route, type Route } from "../../http/route.ts";
import { adminOnly, withReasons } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// Access grants (the contract's access profiles): set and read by admins, read by the
// agent itself. `dual_approval_above` is retired: an unknown key, stripped from the body.

const grantJson = (g: Parameters<typeof toContractJson>[1] | undefined) => toContractJson(AccessGrantSchema, g!);

export const accessRoutes: Route[] = [
  route({
    operationId: "grantAccess",
    method: "patch",
    path: "/v1/admin/agents/:agent_id/access",
    tag: "Admin",
    summary: "Set an agent's access grant: SIMs, operation types, ceiling of one operation (admin)",
    auth: ["session"],
    uuidParams: ["agent_id"],
    body: z.object({
      allowed_sim_ids: z.array(z.string().max(64)).min(1).max(500),
      allowed_op_types: z.array(z.string().max(40)).min(1).max(10).optional(),
      max_amount: z.number().int().positive().optional(),
    }),
    responses: adminOnly(
      {
        200: { description: "The access grant", schema: contractSchema(AccessGrantSchema) },
        404: "Unknown agent",
        422: "Invalid body, or unknown SIM ids or operation types (named in detail and context)",
      },
      FLEET,
      ["agent_not_found"],
    ),
    async handle({ caller, body, params, services }) {
      const res = await services.fleet.grantAccess({
        caller,
        agentId: params.agent_id,
        allowedSimIds: body.allowed_sim_ids,
        allowedOpTypes: body.allowed_op_types ?? [],
        maxAmount: body.max_amount === undefined ? undefined : BigInt(body.max_amount),
      });
      return ok(grantJson(res.grant));
    },
  }),
  route({
    operationId: "getAgentAccess",
    method: "get",
    path: "/v1/admin/agents/:agent_id/access",
    tag: "Admin",
    summary: "Read an agent's access grant; empty lists and null max_amount without one (admin)",
    auth: ["session"],
    uuidParams: ["agent_id"],
    responses: adminOnly(
      { 200: { description: "The access grant", schema: contractSchema(AccessGrantSchema) }, 404: "Unknown agent" },
      FLEET,
      ["agent_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.getAgentAccess({ caller, agentId: params.agent_id });
      return ok(grantJson(res.grant));
    },
  }),
  route({
    operationId: "getOwnLimits",
    method: "get",
    path: "/v1/agents/me/limits",
    tag: "Agents",
    summary: "The signed-in agent's access grant (an admin bypasses it: read role)",
    auth: ["session"],
    responses: withReasons(
      {
        200: { description: "The access grant", schema: contractSchema(AccessGrantSchema) },
        401: "Not signed in",
        403: "Agent inactive",
        404: "Agent gone",
      },
      FLEET,
      ["session_required", "agent_inactive", "agent_not_found"],
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.getOwnLimits({ caller });
      return ok(grantJson(res.grant));
    },
  }),
  route({
    operationId: "getOwnSims",
    method: "get",
    path: "/v1/agents/me/sims",
    tag: "Agents",
    summary: "The SIMs of the signed-in agent's grant with their balance; empty without a grant",
    auth: ["session"],
    responses: withReasons(
      {
        200: {
          description: "Array of SIM balance summaries (no PIN, no device token)",
          schema: z.array(contractSchema(OwnSimSchema)),
        },
        401: "Not signed in",
        403: "Agent inactive",
      },
      FLEET,
      ["session_required", "agent_inactive"],
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.listOwnSims({ caller });
      return ok(res.sims.map((s) => toContractJson(OwnSimSchema, s)));
    },
  }),
];
