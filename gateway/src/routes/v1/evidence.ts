import { z } from "zod";
import { DISMISS_REASONS } from "@transferops/evidence/dismissal";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import { EvidenceSchema, type Evidence } from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import { toContractJson } from "../../http/json.ts";
import { noContent, ok, pageLimit, queryBool, queryInt, route, uuid, type Route } from "../../http/route.ts";
import { WINDOW_DESCRIPTION, withReasons } from "../../http/reasons.ts";
import { DISPATCH, EVIDENCE } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

const evidenceJson = (e: Evidence) => toContractJson(EvidenceSchema, e);

/** `days`, `from`, `to`, `all` as the board lists take them; the service checks the dates. */
const windowQuery = {
  limit: pageLimit().optional(),
  // The same range, and so the same 422, as every other windowed list.
  days: queryInt(1, 365).optional(),
  from: z.string().max(10).optional(),
  to: z.string().max(10).optional(),
  all: queryBool().optional(),
};

const windowOf = (q: { days?: number; from?: string; to?: string; all?: boolean }) => ({
  days: q.days ?? 0,
  from: q.from ?? "",
  to: q.to ?? "",
  all: q.all ?? false,
});

// `/v1/evidences/movements` is declared before any `/v1/evidences/:evidence_id` route.
export const evidenceRoutes: Route[] = [
  route({
    operationId: "listMovements",
    method: "get",
    path: "/v1/evidences/movements",
    tag: "Operations",
    summary:
      "Float and UV transfers, withdrawals, airtime sales, commission sweeps and reversals, newest first (dismissed included)",
    auth: ["session"],
    description: WINDOW_DESCRIPTION,
    query: z.object(windowQuery),
    responses: withReasons(
      {
        200: { description: "Array of evidence records", schema: z.array(contractSchema(EvidenceSchema)) },
        401: "Not signed in",
        403: "Agent inactive",
        422: "Bad limit, days or dates",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.evidence.listMovements({ caller, limit: query.limit ?? 0, window: windowOf(query) });
      return ok(res.evidences.map(evidenceJson));
    },
  }),
  route({
    operationId: "listUnmatchedEvidence",
    method: "get",
    path: "/v1/evidences",
    tag: "Operations",
    summary: "Orphan evidence waiting for a person (unmatched=true required); agents see the SIMs of their grant",
    auth: ["session"],
    description: WINDOW_DESCRIPTION,
    query: z.object({ unmatched: z.string().optional(), ...windowQuery }),
    responses: withReasons(
      {
        200: {
          description: "Array of evidence records, newest first",
          schema: z.array(contractSchema(EvidenceSchema)),
        },
        400: "unmatched is not true",
        401: "Not signed in",
        403: "Agent inactive",
        422: "Bad limit, days or dates",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "unmatched_required", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.evidence.listUnmatchedEvidence({
        caller,
        unmatched: query.unmatched === "true" || query.unmatched === "1",
        limit: query.limit ?? 0,
        window: windowOf(query),
      });
      return ok(res.evidences.map(evidenceJson));
    },
  }),
  route({
    operationId: "dismissEvidence",
    method: "post",
    path: "/v1/evidences/:evidence_id/dismiss",
    tag: "Operations",
    summary: "Take a message out of the unmatched queue with a reason (idempotent)",
    auth: ["session"],
    uuidParams: ["evidence_id"],
    body: z.object({ reason: z.enum(DISMISS_REASONS) }),
    responses: withReasons(
      {
        204: "Dismissed",
        401: "Not signed in",
        403: "SIM not assigned to the agent",
        404: "Unknown evidence",
        409: "Already attached to an operation",
        422: "Unknown reason",
      },
      EVIDENCE,
      [
        "session_required",
        "agent_inactive",
        "evidence_not_found",
        "sim_not_in_grant",
        "evidence_already_linked",
        "invalid_request",
      ],
    ),
    async handle({ caller, params, body, services }) {
      await services.evidence.dismissEvidence({ caller, evidenceId: params.evidence_id, reason: body.reason });
      return noContent();
    },
  }),
  route({
    operationId: "attachEvidence",
    method: "post",
    path: "/v1/operations/:operation_id/evidence",
    tag: "Operations",
    summary:
      "Attach the operator's message that proves an operation: confirms it (the agent named on it, supervisors, admins)",
    description:
      "Attach is proof: the message must be one that could have proved the operation by itself (the operator's sender for the SIM, a deposit for a transfer or a balance reply for a balance check, the exact amount, no number contradicting the destination, an operation that was dialled); anything else is 422 naming what disagrees in `context.reason`. A person who knows better settles or arbitrates the operation, which records a decision and a note as word, not as proof. An operation outside the caller's scope answers the same 404 as an id no operation has. The balance the message printed becomes the SIM's measured balance, as an automatic match.",
    auth: ["session"],
    uuidParams: ["operation_id"],
    body: z.object({ evidence_id: uuid() }),
    responses: withReasons(
      withReasons(
        {
          200: { description: "Confirmed operation detail", schema: contractSchema(OperationSchema) },
          401: "Not signed in",
          403: "Agent inactive",
          404: "Unknown operation or evidence (or one outside the caller's scope: the same answer)",
          409: "Evidence already names an operation, or the operation is terminal",
          422: "Evidence arrived on a different SIM, or could not have proved the operation by itself",
        },
        DISPATCH,
        [
          "operation_not_found",
          "operation_not_attachable",
          "evidence_sim_mismatch",
          "evidence_unknown_sender",
          "evidence_kind_cannot_prove",
          "evidence_amount_mismatch",
          "evidence_number_mismatch",
          "operation_never_dialled",
          "evidence_already_used",
        ],
      ),
      EVIDENCE,
      [
        "session_required",
        "agent_inactive",
        "evidence_not_found",
        "evidence_already_linked",
        "operation_already_proven",
      ],
    ),
    async handle({ caller, params, body, services }) {
      const res = await services.evidence.attachEvidence({
        caller,
        operationId: params.operation_id,
        evidenceId: body.evidence_id,
      });
      return ok(toContractJson(OperationSchema, res.operation!));
    },
  }),
];
