import { z } from "zod";
import {
  OperationSchema,
  SettledOnWordRowSchema,
  UnprovenOperationSchema,
  type Operation,
} from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import type { CreateOperationResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { DEFAULT_OP_TYPE, InFlight, OPERATORS, OP_TYPES } from "@transferops/kit";
import { toContractJson } from "../../http/json.ts";
import type { Services } from "../../services.ts";
import { ok, pageLimit, queryBool, queryInt, route, text, uuid, type Route } from "../../http/route.ts";
import { WINDOW_DESCRIPTION, withReasons } from "../../http/reasons.ts";
import { DISPATCH } from "../../http/service-reasons.ts";
import { CREATE_OPERATION_PRECEDENCE } from "@transferops/dispatch/reasons";
import { contractSchema } from "../../http/contract-schema.ts";

/** The contract's operation detail. */
export const operationJson = (o: Operation | undefined) => toContractJson(OperationSchema, o!);

const opType = z.enum(OP_TYPES);
const nullableText = (max: number) => z.string().max(max).nullable().optional();

const createBody = z.object({
  request_id: text(200),
  parent_operation_id: uuid().nullable().optional(),
  // Required with the API key (the service says so); ignored for a session, so not validated here.
  agent_id: z.string().max(100).nullable().optional(),
  operator: z.enum(OPERATORS),
  client: z.object({
    msisdn: text(20),
    nom: z
      .string()
      .max(200)
      .refine((s) => s.trim() !== "", "must not be empty"),
  }),
  type_op: opType.optional(),
  montant: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
  merchant_code: nullableText(50),
  contact_id: nullableText(200),
  partner_verified: z.boolean().optional(),
  sim_id: nullableText(100),
  // `matching` is refused by the service with its own code; other values too.
  origin: z.string().max(50).nullable().optional(),
});

/**
 * Identical creates in flight through this gateway (same caller, same body) share one call
 * to dispatch: the first answers as dispatch did, every other one as dispatch answers a
 * repeat, 409 with the same operation (docs/decisions/dispatch.md, Bursts). A first call
 * that fails shares nothing (it stored nothing): each repeat then asks dispatch itself.
 */
const inFlightCreates = new WeakMap<Services, InFlight<string, CreateOperationResponse>>();

async function createOnce(
  services: Services,
  key: string,
  call: () => Promise<CreateOperationResponse>,
): Promise<CreateOperationResponse> {
  let calls = inFlightCreates.get(services);
  if (!calls) inFlightCreates.set(services, (calls = new InFlight()));
  const first = calls.get(key);
  if (!first) return calls.run(key, call);
  const shared = await first.then(
    (r) => ({ ...r, created: false }),
    () => undefined,
  );
  return shared ?? call();
}

/** The board's days window of the queues. */
const windowQuery = z.object({
  limit: pageLimit().optional(),
  days: queryInt(1, 365).optional(),
  from: z.string().max(10).optional(),
  to: z.string().max(10).optional(),
  all: queryBool().optional(),
});
type WindowQuery = z.infer<typeof windowQuery>;
const dayWindow = (q: WindowQuery) => ({ days: q.days ?? 0, from: q.from ?? "", to: q.to ?? "", all: q.all ?? false });

/**
 * The "Operations" group: create, list, get, cancel, the arbitration and settled-on-word
 * queues, board settlement. Literal paths come before `/v1/operations/:operation_id`.
 */
export const operationRoutes: Route[] = [
  route({
    operationId: "createOperation",
    method: "post",
    path: "/v1/operations",
    tag: "Operations",
    summary: "Create an operation: gates in their documented order, SIM selected by the server, queued",
    description:
      "Gates in order (docs/decisions/dispatch.md): a request_id starting with `tx-` is refused with 403 request_id_reserved (those are the operations of transaction launches, created by intake alone: another caller creating one first would have a launch record its operation; 403 because the value is valid and who sends it decides); a known request_id answers 409 with the existing operation before anything else (treat as success) when the request is the same one, and 409 request_id_reused (context.differs names the fields, nothing of the first operation is shown) when it names another agent_id, operator, type_op, montant, client.msisdn or sim_id; the circuit breaker 423 (detail circuit_breaker); the body (422 invalid_request; client.nom required and non-empty); origin, merchant_code, operator against the prefix, the owning agent, parent_operation_id (one that does not exist or is another agent's, to an agent, is 404 parent_not_found, saying nothing of it; one an operator's proof showed went through after it failed or was rejected is 409 retry_contradicted, a retry would pay twice; another replay that is not allowed is 422 retry_not_allowed), the access grant (403), SIM selection and balance (422). 409 means that the request_id exists, except retry_contradicted, and 423 only the breaker: a named SIM whose handset is frozen is 422 device_frozen. A named sim_id is used as is, never swapped for another.",
    auth: ["api_key", "session"],
    body: createBody,
    requestExample: {
      request_id: "intake-7f3a9c",
      operator: "operator_b",
      client: { msisdn: "690000001", nom: "Jean Dupont" },
      type_op: "deposit",
      montant: 5000,
      contact_id: "c-77",
      partner_verified: true,
    },
    responses: withReasons(
      {
        202: {
          description: "Accepted and queued: operation_id, status = queued",
          schema: z.object({ operation_id: z.uuid(), status: z.literal("queued") }),
        },
        401: "Bad credentials",
        403: "Access profile does not permit it (detail names the rule), or a `tx-` request_id (reserved to transaction launches)",
        404: "parent_operation_id names no operation the caller may retry (none, or another agent's)",
        409: {
          description:
            "request_id exists: the existing operation object (treat as success, never mint a new request_id); with another body, the error body with reason request_id_reused; the error body with reason retry_contradicted when the parent's transfer went through after all",
          schema: contractSchema(OperationSchema),
        },
        422: "Operator mismatch, unknown prefix, SIM frozen, no active SIM, unmeasured, stale or insufficient balance",
        423: "Circuit breaker active (detail = circuit_breaker)",
        429: "Too many requests",
      },
      DISPATCH,
      [...CREATE_OPERATION_PRECEDENCE, "caller_not_allowed", "request_id_taken", "request_id_reused"],
    ),
    async handle({ caller, body, services, idlePolls }) {
      const request = {
        caller,
        requestId: body.request_id,
        parentOperationId: body.parent_operation_id ?? undefined,
        agentId: body.agent_id ?? "",
        operator: body.operator,
        clientMsisdn: body.client.msisdn,
        clientNom: body.client.nom,
        typeOp: body.type_op ?? DEFAULT_OP_TYPE,
        montant: BigInt(body.montant),
        merchantCode: body.merchant_code ?? undefined,
        contactId: body.contact_id ?? undefined,
        partnerVerified: body.partner_verified,
        simId: body.sim_id ?? undefined,
        origin: body.origin ?? undefined,
      };
      const res = await createOnce(services, JSON.stringify([caller, body]), () =>
        services.dispatch.createOperation(request),
      );
      if (!res.created) return { status: 409, json: operationJson(res.operation) };
      // Its handset's next poll through this replica asks dispatch, whatever the announcement's pace.
      if (res.operation?.deviceId) idlePolls.forget(res.operation.deviceId);
      return { status: 202, json: { operation_id: res.operation!.operationId, status: res.operation!.status } };
    },
  }),
  route({
    operationId: "listOperations",
    method: "get",
    path: "/v1/operations",
    tag: "Operations",
    summary: "List operations in the caller's scope (own; the fleet for admins), newest first",
    auth: ["session"],
    query: z.object({
      status: z.string().max(40).optional(),
      sim_id: z.string().max(100).optional(),
      agent_id: uuid().optional(),
      date: z.string().max(10).optional(),
      date_from: z.string().max(10).optional(),
      date_to: z.string().max(10).optional(),
      search: z.string().max(200).optional(),
      limit: pageLimit().optional(),
    }),
    responses: withReasons(
      {
        200: { description: "Array of operation detail", schema: z.array(contractSchema(OperationSchema)) },
        401: "Not signed in",
        403: "A non-admin naming another agent",
        422: "Unknown status, malformed date, date_from after date_to",
      },
      DISPATCH,
      ["caller_not_allowed", "agent_inactive", "not_in_scope", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.dispatch.listOperations({
        caller,
        status: query.status ?? "",
        simId: query.sim_id ?? "",
        agentId: query.agent_id ?? "",
        date: query.date ?? "",
        dateFrom: query.date_from ?? "",
        dateTo: query.date_to ?? "",
        search: query.search ?? "",
        limit: query.limit ?? 0,
      });
      return ok(res.operations.map(operationJson));
    },
  }),
  route({
    operationId: "listUnproven",
    method: "get",
    path: "/v1/operations/unproven",
    tag: "Operations",
    summary: "Arbitration queue: transfers that dialled and got no proof (own, and on SIMs the grant assigns)",
    auth: ["session"],
    description: WINDOW_DESCRIPTION,
    query: windowQuery,
    responses: withReasons(
      {
        200: { description: "Array of unproven rows", schema: z.array(contractSchema(UnprovenOperationSchema)) },
        401: "Not signed in",
        403: "Inactive agent",
        422: "from after to",
      },
      DISPATCH,
      ["caller_not_allowed", "agent_inactive", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.dispatch.listUnproven({ caller, window: dayWindow(query), limit: query.limit ?? 0 });
      return ok(res.operations.map((o) => toContractJson(UnprovenOperationSchema, o)));
    },
  }),
  route({
    operationId: "listSettledOnWord",
    method: "get",
    path: "/v1/operations/settled-on-word",
    tag: "Operations",
    summary: "Transfers a person confirmed while the operator sent nothing; windowed on arbitrated_at",
    auth: ["session"],
    description: WINDOW_DESCRIPTION,
    query: windowQuery,
    responses: withReasons(
      {
        200: { description: "Array of settled-on-word rows", schema: z.array(contractSchema(SettledOnWordRowSchema)) },
        401: "Not signed in",
        403: "Inactive agent",
        422: "from after to",
      },
      DISPATCH,
      ["caller_not_allowed", "agent_inactive", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.dispatch.listSettledOnWord({
        caller,
        window: dayWindow(query),
        limit: query.limit ?? 0,
      });
      return ok(res.operations.map((o) => toContractJson(SettledOnWordRowSchema, o)));
    },
  }),
  route({
    operationId: "getOperation",
    method: "get",
    path: "/v1/operations/:operation_id",
    tag: "Operations",
    summary: "One operation (own; any for admins)",
    auth: ["session"],
    uuidParams: ["operation_id"],
    responses: withReasons(
      {
        200: { description: "Operation detail", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Another agent's operation",
        404: "Unknown",
        422: "Malformed id",
      },
      DISPATCH,
      ["caller_not_allowed", "not_in_scope", "operation_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.dispatch.getOperation({ caller, operationId: params.operation_id });
      return ok(operationJson(res.operation));
    },
  }),
  route({
    operationId: "cancelOperation",
    method: "post",
    path: "/v1/operations/:operation_id/cancel",
    tag: "Operations",
    summary: "Cancel a queued or running operation: rejected, slot released, operation.failed (cancelled_by_agent)",
    auth: ["session"],
    uuidParams: ["operation_id"],
    responses: withReasons(
      {
        200: { description: "Operation detail (rejected)", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Another agent's operation",
        404: "Unknown",
        409: "Already terminal (operation_not_cancellable, context operation_id and operation_status)",
        422: "Malformed id",
      },
      DISPATCH,
      ["caller_not_allowed", "not_in_scope", "operation_not_found", "operation_not_cancellable"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.dispatch.cancelOperation({ caller, operationId: params.operation_id });
      return ok(operationJson(res.operation));
    },
  }),
  route({
    operationId: "settleOperation",
    method: "post",
    path: "/v1/operations/:operation_id/settle",
    tag: "Operations",
    summary: "Board settlement of a no_evidence transfer: arrived (confirmed) or did_not_arrive (failed), with a note",
    auth: ["session"],
    uuidParams: ["operation_id"],
    body: z.object({
      outcome: z.enum(["arrived", "did_not_arrive"]),
      note: z
        .string()
        .max(500)
        .refine((s) => s.trim() !== "", "must not be empty"),
    }),
    responses: withReasons(
      {
        200: { description: "Operation detail", schema: contractSchema(OperationSchema) },
        401: "Not signed in",
        403: "Not a transfer on a SIM the agent is assigned, nor one it dialled",
        404: "Unknown",
        409: "Not in no_evidence",
        422: "Empty note",
      },
      DISPATCH,
      [
        "caller_not_allowed",
        "not_in_scope",
        "operation_not_found",
        "operation_not_settleable",
        "retry_chain_may_have_paid",
        "invalid_request",
      ],
    ),
    async handle({ caller, params, body, services }) {
      const res = await services.dispatch.settleOperation({
        caller,
        operationId: params.operation_id,
        outcome: body.outcome,
        note: body.note,
      });
      return ok(operationJson(res.operation));
    },
  }),
];
