import { z } from "zod";
import { ts, OPERATORS } from "@transferops/kit";
import { TRANSACTION_STATES } from "@transferops/intake/transaction-state";
import { TransactionSchema, type Transaction } from "@transferops/kit/gen/transferops/intake/v1/intake_pb";
import { toContractJson } from "../../http/json.ts";
import { created, instant, ok, pageLimit, route, text, type Route } from "../../http/route.ts";
import { DISPATCH, INTAKE } from "../../http/service-reasons.ts";
import { reasonsOf } from "../../http/reasons.ts";

// The "Transaction routes" group. The contract leaves the paths open; decisions (paths,
// the unconfirmed-payment refusal, `closed` after close by receipt, unknown fields on
// create refused) are in docs/decisions/intake.md.

/** The contract's transaction. */
export const transactionJson = (t: Transaction | undefined) => toContractJson(TransactionSchema, t!);

/** Fields the list form omits. */
export const LIST_OMITS = [
  "parent_request_id",
  "master_transaction_id",
  "rate",
  "send_amount_eur",
  "cancelled_reason",
  "updated_at",
  "receiver_changes",
] as const;

const summaryJson = (t: Transaction) => {
  const full = transactionJson(t);
  for (const k of LIST_OMITS) delete full[k];
  return full;
};

const nullable = <T extends z.ZodType>(s: T) => s.nullable();
const at = z.string();

const receiverFields = z.object({ receiver_name: z.string(), receiver_phone: z.string(), contact_id: z.string() });

const transactionSchema = z.object({
  id: z.string().uuid(),
  request_id: z.string(),
  parent_request_id: nullable(z.string()),
  master_transaction_id: nullable(z.string()),
  contact_id: z.string(),
  customer_name: nullable(z.string()),
  customer_phone: nullable(z.string()),
  receiver_name: z.string(),
  receiver_phone: z.string().describe("9-digit local form"),
  operator: z.enum(OPERATORS),
  received_amount_xaf: z.number().int(),
  rate: nullable(z.number()),
  send_amount_eur: nullable(z.number()),
  partner_verify: z.boolean(),
  transaction_date: at,
  state: z.enum(TRANSACTION_STATES),
  launched_by: nullable(z.string()),
  launched_by_name: nullable(z.string()),
  launched_at: nullable(at),
  operation_id: nullable(z.string()),
  outcome: nullable(z.string()).describe("Operation's terminal status once done; closed_by_receipt once closed"),
  settled_at: nullable(at),
  settled_by: nullable(z.string()).describe("Agent id, or `system`"),
  settled_by_name: nullable(z.string()),
  payment_confirmed_at: nullable(at),
  payment_confirmed_by: nullable(z.string()),
  cancelled_reason: nullable(z.string()),
  created_at: at,
  updated_at: at,
  receiver_verified: z
    .boolean()
    .describe(
      "Whether the receiver is still the one the partner verified (partner_verify, and no rewrite of the name or number away from the partner's); the launched operation's partner_verified",
    ),
  receiver_changes: z
    .array(
      z.object({
        agent_id: z.string(),
        agent_name: z.string(),
        changed_at: at,
        before: receiverFields,
        after: receiverFields,
        receiver_verified: z.boolean(),
      }),
    )
    .describe("Every rewrite of the receiver, oldest first: who, when, before and after"),
});

const summarySchema = transactionSchema.omit({
  parent_request_id: true,
  master_transaction_id: true,
  rate: true,
  send_amount_eur: true,
  cancelled_reason: true,
  updated_at: true,
  receiver_changes: true,
});

const EXAMPLE = {
  id: "6f1c2a9e-3b7d-4e52-9a41-0c8d2f5b7e13",
  request_id: "intake-2026-11-22-0042",
  parent_request_id: null,
  master_transaction_id: "MT-88412",
  contact_id: "contact-5521",
  customer_name: "Claire Martin",
  customer_phone: "+33612345678",
  receiver_name: "Jean Mbarga",
  receiver_phone: "690123456",
  operator: "operator_b",
  received_amount_xaf: 65000,
  rate: 655.957,
  send_amount_eur: 99.1,
  partner_verify: true,
  transaction_date: "2026-11-22T09:14:00.000Z",
  state: "pending",
  launched_by: null,
  launched_by_name: null,
  launched_at: null,
  operation_id: null,
  outcome: null,
  settled_at: null,
  settled_by: null,
  settled_by_name: null,
  payment_confirmed_at: null,
  payment_confirmed_by: null,
  cancelled_reason: null,
  created_at: "2026-11-22T09:14:02.311Z",
  updated_at: "2026-11-22T09:14:02.311Z",
  receiver_verified: true,
  receiver_changes: [],
};
const CONFIRMED_EXAMPLE = {
  ...EXAMPLE,
  payment_confirmed_at: "2026-11-22T09:20:10.000Z",
  payment_confirmed_by: "0b8e2f61-5a0c-4a8e-8f7e-2d1c9b3a4e55",
  updated_at: "2026-11-22T09:20:10.000Z",
};
const summaryExample = Object.fromEntries(
  Object.entries(EXAMPLE).filter(([k]) => !(LIST_OMITS as readonly string[]).includes(k)),
);

const ok200 = (description: string, example: unknown = EXAMPLE) => ({
  description,
  schema: transactionSchema,
  example,
});
const NOT_FOUND = {
  description: "Missing, or not visible to the caller (another agent's launched work is 404, not 403)",
  reasons: reasonsOf(INTAKE, "transaction_not_found"),
};
const NOT_PENDING = {
  description: "The transaction is not pending",
  reasons: reasonsOf(INTAKE, "transaction_not_pending"),
};
const SESSION_ERRORS = {
  401: "Not signed in",
  403: {
    description: "Inactive or deleted agent, or not a session",
    reasons: reasonsOf(INTAKE, "caller_not_allowed", "agent_inactive"),
  },
  422: { description: "Malformed transaction_id", reasons: [] },
} as const;

const money = z.number().positive().max(1e12);

const createBody = z
  .object({
    request_id: text(200),
    parent_request_id: z.string().max(200).nullable().optional(),
    master_transaction_id: z.string().max(200).nullable().optional(),
    contact_id: text(200),
    customer_name: z.string().max(200).nullable().optional(),
    customer_phone: z.string().max(20).nullable().optional(),
    receiver_name: text(200),
    receiver_phone: text(20),
    operator: z.enum(OPERATORS),
    received_amount_xaf: z.number().int().positive().max(Number.MAX_SAFE_INTEGER),
    rate: money.nullable().optional(),
    send_amount_eur: money.nullable().optional(),
    partner_verify: z.boolean().optional(),
    transaction_date: instant().optional(),
  })
  // State and launch fields belong to the board: a body naming them is refused, not trimmed.
  .strict();

const path = (suffix = "") => `/v1/transactions/:transaction_id${suffix}`;

/** A board action on one transaction: POST, no body, 200 transaction. */
function boardAction(o: {
  operationId: string;
  method?: "post" | "delete";
  suffix: string;
  summary: string;
  description: string;
  call: (
    services: Parameters<Route["handle"]>[0]["services"],
    req: { caller: any; transactionId: string },
  ) => Promise<{ transaction?: Transaction }>;
  example?: unknown;
}) {
  return route({
    operationId: o.operationId,
    method: o.method ?? "post",
    path: path(o.suffix),
    tag: "Transactions",
    summary: o.summary,
    description: o.description,
    auth: ["session"],
    uuidParams: ["transaction_id"],
    responses: {
      200: ok200("The transaction after the action", o.example),
      ...SESSION_ERRORS,
      404: NOT_FOUND,
      409: NOT_PENDING,
    },
    async handle({ caller, params, services }) {
      const res = await o.call(services, { caller, transactionId: params.transaction_id! });
      return ok(transactionJson(res.transaction));
    },
  });
}

export const transactionRoutes: Route[] = [
  route({
    operationId: "createTransaction",
    method: "post",
    path: "/v1/transactions",
    tag: "Transactions",
    summary: "Record a paid transfer in the launch queue (pending)",
    description:
      "Intake writes the transfer details only. A body naming any other field (state, launch, payment " +
      "confirmation, operation, settlement fields) is refused with 422 invalid_request. `request_id` is unique " +
      "across all intake: a replay is refused with 409 (context.transaction_id names the existing one) and " +
      "changes nothing. `receiver_phone` must be a national mobile-money number of `operator` (the platform's " +
      "one operator/prefix rule, shared with create operation); it is stored in the 9-digit local form. " +
      "`transaction_date` defaults to the time of creation.",
    auth: ["api_key"],
    body: createBody,
    requestExample: {
      request_id: "intake-2026-11-22-0042",
      master_transaction_id: "MT-88412",
      contact_id: "contact-5521",
      customer_name: "Claire Martin",
      customer_phone: "+33612345678",
      receiver_name: "Jean Mbarga",
      receiver_phone: "+237 690 123 456",
      operator: "operator_b",
      received_amount_xaf: 65000,
      rate: 655.957,
      send_amount_eur: 99.1,
      partner_verify: true,
      transaction_date: "2026-11-22T09:14:00Z",
    },
    responses: {
      201: { description: "Created, pending", schema: transactionSchema, example: EXAMPLE },
      401: "Missing or wrong API key",
      403: { description: "Not the API key", reasons: reasonsOf(INTAKE, "caller_not_allowed") },
      409: { description: "request_id exists: refused, not requeued", reasons: reasonsOf(INTAKE, "request_id_exists") },
      422: {
        description: "Invalid field, unknown field, or receiver phone not a mobile-money number of the operator",
        reasons: reasonsOf(INTAKE, "invalid_msisdn", "operator_undetermined", "operator_mismatch"),
      },
    },
    async handle({ caller, body, services }) {
      const res = await services.intake.createTransaction({
        caller,
        requestId: body.request_id,
        parentRequestId: body.parent_request_id ?? undefined,
        masterTransactionId: body.master_transaction_id ?? undefined,
        contactId: body.contact_id,
        customerName: body.customer_name ?? undefined,
        customerPhone: body.customer_phone ?? undefined,
        receiverName: body.receiver_name,
        receiverPhone: body.receiver_phone,
        operator: body.operator,
        receivedAmountXaf: BigInt(body.received_amount_xaf),
        rate: body.rate ?? undefined,
        sendAmountEur: body.send_amount_eur ?? undefined,
        partnerVerify: body.partner_verify ?? false,
        transactionDate: ts(body.transaction_date),
      });
      return created(transactionJson(res.transaction));
    },
  }),
  route({
    operationId: "listTransactions",
    method: "get",
    path: "/v1/transactions",
    tag: "Transactions",
    summary: "List transactions, newest first",
    description:
      "An agent (or supervisor) sees every pending transaction plus those it launched; an admin sees " +
      `everything, with launched_by_name. The list form omits ${LIST_OMITS.join(", ")}. ` +
      "`state` filters (`closed` is the state after close by receipt); an unknown value is 422.",
    auth: ["session"],
    query: z.object({ state: z.enum(TRANSACTION_STATES).optional(), limit: pageLimit().optional() }),
    responses: {
      200: { description: "Array of transaction summaries", schema: z.array(summarySchema), example: [summaryExample] },
      401: "Not signed in",
      403: SESSION_ERRORS[403],
      422: { description: "Unknown state, limit outside 1..250", reasons: [] },
    },
    async handle({ caller, query, services }) {
      const res = await services.intake.listTransactions({
        caller,
        state: query.state ?? "",
        limit: query.limit ?? 0,
      });
      return ok(res.transactions.map(summaryJson));
    },
  }),
  route({
    operationId: "getTransaction",
    method: "get",
    path: path(),
    tag: "Transactions",
    summary: "One transaction, every field",
    description: "Visible as in the list; anything else is 404.",
    auth: ["session"],
    uuidParams: ["transaction_id"],
    responses: { 200: ok200("The full transaction"), ...SESSION_ERRORS, 404: NOT_FOUND },
    async handle({ caller, params, services }) {
      const res = await services.intake.getTransaction({ caller, transactionId: params.transaction_id! });
      return ok(transactionJson(res.transaction));
    },
  }),
  route({
    operationId: "correctTransactionReceiver",
    method: "patch",
    path: path("/receiver"),
    tag: "Transactions",
    summary: "Correct the receiver of a pending transaction",
    description:
      "Only receiver_name, receiver_phone and contact_id; any other field (the amount included) is 422. " +
      "At least one of the three is required. A new receiver_phone must be a mobile-money number of the " +
      "transaction's operator. Only while pending: once launched (the operation was built from the receiver) it is " +
      "409 transaction_not_pending. Every rewrite is recorded (receiver_changes: who, when, before, after; audit " +
      "log `transaction.receiver_corrected`), and a rewrite of the name or number away from the partner's makes " +
      "receiver_verified false: the launched operation then carries partner_verified false, so the handset checks " +
      "the name the operator shows before the PIN (docs/decisions/intake.md).",
    auth: ["session"],
    uuidParams: ["transaction_id"],
    body: z
      .object({
        receiver_name: text(200).optional(),
        receiver_phone: text(20).optional(),
        contact_id: text(200).optional(),
      })
      .strict(),
    requestExample: { receiver_phone: "690765432", receiver_name: "Jean-Paul Mbarga" },
    responses: {
      200: ok200("The corrected transaction"),
      ...SESSION_ERRORS,
      404: NOT_FOUND,
      409: NOT_PENDING,
      422: {
        description: "No field given, an unknown field, or a phone not of the operator",
        reasons: reasonsOf(INTAKE, "no_receiver_field", "invalid_msisdn", "operator_undetermined", "operator_mismatch"),
      },
    },
    async handle({ caller, params, body, services }) {
      const res = await services.intake.correctTransactionReceiver({
        caller,
        transactionId: params.transaction_id!,
        receiverName: body.receiver_name,
        receiverPhone: body.receiver_phone,
        contactId: body.contact_id,
      });
      return ok(transactionJson(res.transaction));
    },
  }),
  route({
    operationId: "launchTransaction",
    method: "post",
    path: path("/launch"),
    tag: "Transactions",
    summary: "Launch: claim the transaction and create its operation (SIM chosen by the server)",
    description:
      "Needs a confirmed payment: an unconfirmed one is refused with 422 (reason payment_not_confirmed). " +
      "The claim (a conditional update on state) commits before the operation is created; the operation's " +
      "request_id is `tx-<transaction_id>`; a unique index holds one operation per transaction. The operation " +
      "is a deposit owned by the launching agent: receiver_phone → client.msisdn, receiver_name → client.nom, " +
      "received_amount_xaf → montant, contact_id carried, partner_verify → partner_verified. Dispatch's " +
      "refusals pass through with their reason; a 422, 423 or 403 releases the claim (pending again), a 409 " +
      "does not. A launch claimed but never completed (a crash) is completed by a retried launch or the sweep " +
      "after CLAIM_STALE_S, with the same operation request_id.",
    auth: ["session"],
    uuidParams: ["transaction_id"],
    responses: {
      200: {
        description: "Launched",
        schema: z.object({
          transaction_id: z.string().uuid(),
          operation_id: z.string().uuid(),
          state: z.literal("launched"),
        }),
        example: {
          transaction_id: EXAMPLE.id,
          operation_id: "a3d5c7e9-1b2f-4a6c-8e0d-2f4b6d8a0c1e",
          state: "launched",
        },
      },
      401: "Not signed in",
      403: {
        description: "Inactive agent, or dispatch refused the agent's access (claim released)",
        reasons: [
          ...reasonsOf(INTAKE, "caller_not_allowed", "agent_inactive"),
          ...reasonsOf(DISPATCH, "no_grant", "not_in_grant_type", "over_max_amount", "not_in_grant_sim"),
        ],
      },
      404: NOT_FOUND,
      409: {
        description: "Already launched (or claimed by a concurrent launch), cancelled, closed or done",
        reasons: reasonsOf(INTAKE, "already_launched", "transaction_not_pending"),
      },
      422: {
        description:
          "Payment not confirmed; or dispatch found no SIM, no measured balance, or a balance short of the amount (claim released)",
        reasons: [
          ...reasonsOf(INTAKE, "payment_not_confirmed"),
          ...reasonsOf(
            DISPATCH,
            "no_active_sim",
            "no_assigned_sim",
            "no_measured_balance",
            "stale_balance",
            "insufficient_balance",
          ),
          ...reasonsOf(INTAKE, "operator_mismatch"),
        ],
      },
      423: {
        description: "The device holding the selected SIM is frozen, or the circuit breaker is active (claim released)",
        reasons: [...reasonsOf(INTAKE, "device_frozen"), ...reasonsOf(DISPATCH, "circuit_breaker")],
      },
    },
    async handle({ caller, params, services }) {
      const res = await services.intake.launchTransaction({ caller, transactionId: params.transaction_id! });
      const t = res.transaction!;
      return ok({ transaction_id: t.id, operation_id: t.operationId ?? null, state: t.state });
    },
  }),
  route({
    operationId: "cancelTransaction",
    method: "post",
    path: path("/cancel"),
    tag: "Transactions",
    summary: "Cancel a pending transaction (terminal)",
    description: "A launched transaction is cancelled on its operation instead (POST /v1/operations/{id}/cancel).",
    auth: ["session"],
    uuidParams: ["transaction_id"],
    body: z.object({ reason: text(500).refine((s) => s.trim() !== "", "must not be blank") }).strict(),
    requestExample: { reason: "Customer asked for a refund" },
    responses: {
      200: ok200("Cancelled", { ...EXAMPLE, state: "cancelled", cancelled_reason: "Customer asked for a refund" }),
      ...SESSION_ERRORS,
      404: NOT_FOUND,
      409: NOT_PENDING,
      422: { description: "reason missing, blank or over 500 characters", reasons: [] },
    },
    async handle({ caller, params, body, services }) {
      const res = await services.intake.cancelTransaction({
        caller,
        transactionId: params.transaction_id!,
        reason: body.reason,
      });
      return ok(transactionJson(res.transaction));
    },
  }),
  boardAction({
    operationId: "confirmTransactionPayment",
    suffix: "/payment-confirmation",
    summary: "Confirm the customer's payment (required before launch)",
    description:
      "Only while pending; the state does not change. Confirming twice returns the existing confirmation unchanged.",
    example: CONFIRMED_EXAMPLE,
    call: (s, r) => s.intake.confirmTransactionPayment(r),
  }),
  boardAction({
    operationId: "undoTransactionPayment",
    method: "delete",
    suffix: "/payment-confirmation",
    summary: "Undo the payment confirmation",
    description: "Only while pending; the state does not change. Undoing an unconfirmed payment changes nothing.",
    call: (s, r) => s.intake.undoTransactionPayment(r),
  }),
  boardAction({
    operationId: "closeTransactionByReceipt",
    suffix: "/close-by-receipt",
    summary: "Close a pending transaction covered outside the service (state closed, terminal, no operation)",
    description:
      "The contract leaves the resulting state open: it is `closed`, with outcome `closed_by_receipt`, " +
      "settled_at, settled_by and settled_by_name of the closing agent. It never returns to pending.",
    example: {
      ...EXAMPLE,
      state: "closed",
      outcome: "closed_by_receipt",
      settled_at: "2026-11-22T10:02:00.000Z",
      settled_by: "0b8e2f61-5a0c-4a8e-8f7e-2d1c9b3a4e55",
      settled_by_name: "Awa Ndiaye",
    },
    call: (s, r) => s.intake.closeTransactionByReceipt(r),
  }),
];
