import { z } from "zod";
import { big } from "@transferops/kit";
import { created, ok, pageLimit, route, text, type Route } from "../../http/route.ts";
import { withReasons } from "../../http/reasons.ts";
import { DISPATCH } from "../../http/service-reasons.ts";
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
    description:
      "Board only (the API key names an arbitrary agent). The operator comes from the number; access, selection and balance rules are a deposit's. The route lists no 423: the circuit breaker stops machine dialling, while here a person dials (docs/decisions/dispatch.md); a named SIM whose handset is frozen is 422 device_frozen.",
    auth: ["session"],
    requestExample: { contact_id: "c-77", beneficiary_msisdn: "690000001", montant: 8200, sim_id: null },
    body: z.object({
      contact_id: z.string().max(200).nullable().optional(),
      beneficiary_msisdn: text(20),
      montant: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
      sim_id: z.string().max(100).nullable().optional(),
    }),
    responses: withReasons(
      {
        201: { description: "Operation detail, status awaiting_manual_dial", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Profile does not permit it, SIM not assigned to the agent, or the API key",
        422: "Unknown prefix, operator mismatch, no eligible SIM, unmeasured or insufficient balance",
      },
      DISPATCH,
      [
        "caller_not_allowed",
        "invalid_request",
        "invalid_msisdn",
        "operator_undetermined",
        "agent_inactive",
        "no_grant",
        "over_max_amount",
        "not_in_grant_sim",
        "sim_not_found",
        "sim_operator_mismatch",
        "sim_frozen",
        "sim_retired",
        "sim_not_assigned",
        "device_frozen",
        "no_active_sim",
        "no_assigned_sim",
        "no_measured_balance",
        "sim_unmeasured",
        "stale_balance",
        "insufficient_balance",
      ],
    ),
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
    query: z.object({ limit: pageLimit().optional() }),
    responses: withReasons(
      {
        200: { description: "Array of operation detail", schema: z.array(contractSchema(OperationSchema)) },
        401: "Not signed in",
        403: "Agent inactive or gone",
      },
      DISPATCH,
      ["caller_not_allowed", "agent_inactive"],
    ),
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
    description:
      "A change of montant or beneficiary_msisdn runs the gates of the creation on the new values, on the operation's own SIM (never swapped): the access profile (403 over max_amount, SIM no longer granted) and the balance rules (422; the operation's own old amount is not counted against it). A contact_id alone runs none. An operation no longer awaiting_manual_dial is 409 before any of them.",
    auth: ["session"],
    uuidParams: ["operation_id"],
    body: z.object({
      contact_id: z.string().max(200).nullable().optional(),
      beneficiary_msisdn: z.string().min(1).max(20).nullable().optional(),
      montant: z.number().int().positive().max(Number.MAX_SAFE_INTEGER).nullable().optional(),
    }),
    responses: withReasons(
      {
        200: { description: "Operation detail", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Another agent's operation, or the new amount is past the access profile (max_amount, the SIM no longer granted)",
        404: "Unknown matching operation",
        409: "Already matched or terminal",
        422: "Invalid value, unknown prefix, a number of another operator, or the SIM's balance rules (unmeasured, stale, free balance short of the new amount)",
      },
      DISPATCH,
      [
        "caller_not_allowed",
        "not_in_scope",
        "operation_not_found",
        "operation_not_editable",
        "invalid_request",
        "invalid_msisdn",
        "operator_undetermined",
        "operator_mismatch",
        "agent_inactive",
        "no_grant",
        "over_max_amount",
        "not_in_grant_sim",
        "sim_not_found",
        "sim_frozen",
        "sim_retired",
        "sim_not_assigned",
        "device_frozen",
        "sim_unmeasured",
        "stale_balance",
        "insufficient_balance",
      ],
    ),
    async handle({ caller, params, body, services }) {
      const res = await services.dispatch.updateMatchingOperation({
        caller,
        operationId: params.operation_id,
        contactId: body.contact_id ?? undefined,
        clearContactId: body.contact_id === null,
        beneficiaryMsisdn: body.beneficiary_msisdn ?? undefined,
        montant: big(body.montant),
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
    responses: withReasons(
      {
        200: { description: "Operation detail (rejected)", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Another agent's operation",
        404: "Unknown matching operation",
        409: "Left awaiting_manual_dial",
        422: "Malformed id",
      },
      DISPATCH,
      ["caller_not_allowed", "not_in_scope", "operation_not_found", "operation_not_cancellable"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.dispatch.cancelMatchingOperation({ caller, operationId: params.operation_id });
      return ok(operationJson(res.operation));
    },
  }),
];
