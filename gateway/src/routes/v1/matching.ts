import { z } from "zod";
import { created, ok, queryInt, route, text, type Route } from "../../http/route.ts";
import { contractSchema } from "../../http/contract-schema.ts";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { operationJson } from "./operations.ts";

/**
 * Matching operations: a deposit the agent dials by hand, recorded first so the
 * operator's SMS can prove it. Board only. Registered before `/v1/operations/:operation_id`.
 */
export const matchingRoutes: Route[] = [
  route({
    operationId: "createMatchingOperation",
    method: "post",
    path: "/v1/operations/matching",
    tag: "Operations",
    summary: "Record a deposit the agent dials by hand: awaiting_manual_dial, never claimable by a handset",
    auth: ["session"],
    body: z.object({
      contact_id: z.string().max(200).nullable().optional(),
      beneficiary_msisdn: text(20),
      montant: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      sim_id: z.string().max(100).nullable().optional(),
    }),
    responses: {
      201: { description: "Operation detail, status awaiting_manual_dial", schema: contractSchema(OperationSchema) },
      401: "Not signed in",
      403: "Profile does not permit it, SIM not assigned to the agent, or the API key",
      422: "Unknown prefix, operator mismatch, no eligible SIM, unmeasured or insufficient balance",
    },
    async handle({ caller, body, services }) {
      const res = await services.dispatch.createMatchingOperation({
        caller,
        contactId: body.contact_id ?? undefined,
        beneficiaryMsisdn: body.beneficiary_msisdn,
        montant: BigInt(body.montant),
        simId: body.sim_id ?? undefined,
      });
      return created(operationJson(res.operation));
    },
  }),
  route({
    operationId: "listMatchingOperations",
    method: "get",
    path: "/v1/operations/matching",
    tag: "Operations",
    summary: "Matching operations (own; all for admins), newest first",
    auth: ["session"],
    query: z.object({ limit: queryInt(1, 250).optional() }),
    responses: {
      200: { description: "Array of operation detail", schema: z.array(contractSchema(OperationSchema)) },
      401: "Not signed in",
      403: "Agent inactive or gone",
    },
    async handle({ caller, query, services }) {
      const res = await services.dispatch.listMatchingOperations({ caller, limit: query.limit ?? 0 });
      return ok(res.operations.map(operationJson));
    },
  }),
  route({
    operationId: "updateMatchingOperation",
    method: "patch",
    path: "/v1/operations/matching/:operation_id",
    tag: "Operations",
    summary: "Rewrite what correlation looks for (contact, number, amount) while still unmatched",
    auth: ["session"],
    uuidParams: ["operation_id"],
    body: z.object({
      contact_id: z.string().max(200).nullable().optional(),
      beneficiary_msisdn: z.string().min(1).max(20).nullable().optional(),
      montant: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullable().optional(),
    }),
    responses: {
      200: { description: "Operation detail", schema: contractSchema(OperationSchema) },
      401: "Not signed in",
      403: "Another agent's operation",
      404: "Unknown matching operation",
      409: "Already matched or terminal",
      422: "Invalid value, unknown prefix, or a number of another operator",
    },
    async handle({ caller, params, body, services }) {
      const res = await services.dispatch.updateMatchingOperation({
        caller,
        operationId: params.operation_id,
        contactId: body.contact_id ?? undefined,
        clearContactId: body.contact_id === null,
        beneficiaryMsisdn: body.beneficiary_msisdn ?? undefined,
        montant: body.montant == null ? undefined : BigInt(body.montant),
      });
      return ok(operationJson(res.operation));
    },
  }),
  route({
    operationId: "cancelMatchingOperation",
    method: "post",
    path: "/v1/operations/matching/:operation_id/cancel",
    tag: "Operations",
    summary: "Cancel a matching operation still awaiting manual dial (rejected)",
    auth: ["session"],
    uuidParams: ["operation_id"],
    responses: {
      200: { description: "Operation detail (rejected)", schema: contractSchema(OperationSchema) },
      401: "Not signed in",
      403: "Another agent's operation",
      404: "Unknown matching operation",
      409: "Left awaiting_manual_dial",
      422: "Malformed id",
    },
    async handle({ caller, params, services }) {
      const res = await services.dispatch.cancelMatchingOperation({ caller, operationId: params.operation_id });
      return ok(operationJson(res.operation));
    },
  }),
];
