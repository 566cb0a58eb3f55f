import { z } from "zod";
import { ok, route, type Route } from "../../http/route.ts";
import { withReasons } from "../../http/reasons.ts";
import { DISPATCH } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { operationJson } from "./operations.ts";

/** Admin arbitration of a no_evidence operation. */
export const arbitrationRoutes: Route[] = [
  route({
    operationId: "arbitrateOperation",
    method: "post",
    path: "/v1/admin/operations/:operation_id/arbitrate",
    tag: "Admin",
    summary: "Decide a no_evidence operation: confirmed or failed, with a note (admin)",
    auth: ["session"],
    uuidParams: ["operation_id"],
    body: z.object({
      decision: z.enum(["confirmed", "failed"]),
      note: z
        .string()
        .max(500)
        .refine((s) => s.trim() !== "", "must not be empty"),
    }),
    responses: withReasons(
      {
        200: { description: "Updated operation", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Admin required",
        404: "Unknown operation",
        422: "Invalid body, or the operation is not in no_evidence",
      },
      DISPATCH,
      [
        "caller_not_allowed",
        "operation_not_found",
        "operation_not_arbitrable",
        "arbitration_retry_chain_may_have_paid",
        "invalid_request",
      ],
    ),
    async handle({ caller, params, body, services }) {
      const res = await services.dispatch.arbitrateOperation({
        caller,
        operationId: params.operation_id,
        decision: body.decision,
        note: body.note,
      });
      return ok(operationJson(res.operation));
    },
  }),
];
