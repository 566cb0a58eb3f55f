import { z } from "zod";
import {
  FleetReconciliationSchema,
  GetBalanceChainResponseSchema,
  SimReconciliationSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { contractSchema } from "../../http/contract-schema.ts";
import { toContractJson } from "../../http/json.ts";
import { ok, queryInt, route, type Route } from "../../http/route.ts";
import { reasonsOf } from "../../http/reasons.ts";
import { EVIDENCE } from "../../http/service-reasons.ts";

// The daily reconciliation of the SIMs' money, read from evidence (additive /v1 routes).

const day = z
  .string()
  .regex(/^\d{4}-\d{2}-\d{2}$/, "YYYY-MM-DD")
  .optional();

const chainBreak = z.object({
  previous_message_id: z.string(),
  message_id: z.string(),
  expected_balance: z.number().int(),
  found_balance: z.number().int(),
  gap: z.number().int(),
});

const simDay = z.object({
  sim_id: z.string(),
  day: z.string(),
  opening_balance: z.number().int().nullable(),
  closing_balance: z.number().int().nullable(),
  proven_xaf: z.number().int(),
  proven_fees_xaf: z.number().int(),
  in_xaf: z.number().int(),
  out_xaf: z.number().int(),
  fees_xaf: z.number().int(),
  explained_xaf: z.number().int(),
  unexplained_xaf: z.number().int().nullable(),
  breaks: z.array(chainBreak),
  unreadable_movements: z.number().int(),
  messages: z.number().int(),
  confirmed: z.number().int(),
  unmatched: z.number().int(),
  movements: z.number().int(),
  divergent: z.number().int(),
  unknown_sender: z.number().int(),
});

const fleetDay = z.object({
  day: z.string(),
  sims: z.number().int(),
  opening_balance: z.number().int(),
  closing_balance: z.number().int(),
  proven_xaf: z.number().int(),
  proven_fees_xaf: z.number().int(),
  in_xaf: z.number().int(),
  out_xaf: z.number().int(),
  fees_xaf: z.number().int(),
  explained_xaf: z.number().int(),
  unexplained_xaf: z.number().int(),
  chain_breaks: z.number().int(),
  sims_not_reconciled: z.array(z.string()),
});

const response = z.object({ fleet: fleetDay, sims: z.array(simDay) });

const SIM_EXAMPLE = {
  sim_id: "0f6a4c2e-5b1d-4e8a-9d3c-2a7b8c9d0e1f",
  day: "2026-11-22",
  opening_balance: 500000,
  closing_balance: 381900,
  proven_xaf: 115000,
  proven_fees_xaf: 0,
  in_xaf: 20000,
  out_xaf: 135000,
  fees_xaf: 100,
  explained_xaf: -115100,
  unexplained_xaf: -3000,
  breaks: [
    {
      previous_message_id: "7d2c0c8e-1f5b-4a8e-9b6d-0e1f2a3b4c5d",
      message_id: "9a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d",
      expected_balance: 398000,
      found_balance: 395000,
      gap: -3000,
    },
  ],
  unreadable_movements: 0,
  messages: 14,
  confirmed: 9,
  unmatched: 1,
  movements: 3,
  divergent: 0,
  unknown_sender: 0,
};

const EXAMPLE = {
  fleet: {
    day: "2026-11-22",
    sims: 1,
    opening_balance: 500000,
    closing_balance: 381900,
    proven_xaf: 115000,
    proven_fees_xaf: 0,
    in_xaf: 20000,
    out_xaf: 135000,
    fees_xaf: 100,
    explained_xaf: -115100,
    unexplained_xaf: -3000,
    chain_breaks: 1,
    sims_not_reconciled: [SIM_EXAMPLE.sim_id],
  },
  sims: [SIM_EXAMPLE],
};

const DESCRIPTION = `One local day (UTC+1, \`day\` YYYY-MM-DD, default today) of the SIMs' money, from the operator's
messages. Per SIM: \`opening_balance\` (balance after the last message before the day; without one, the first
message's balance less what it moved), \`closing_balance\` (balance after the day's last message that printed one),
\`proven_xaf\`/\`proven_fees_xaf\` (messages that proved operations, balance replies excluded), \`in_xaf\`,
\`out_xaf\`, \`fees_xaf\` and \`explained_xaf\` = in − out − fees + commissions credited inside other receipts (every
movement the day's messages state, proofs included), \`unexplained_xaf\` = closing − opening − explained (null without a balance), and \`breaks\`: each link of
the balance chain (operator-timestamp order; each balance after must be the previous one moved by this message's
amount, fee and commission in its direction) that does not hold, with the two messages and the gap. Messages from a sender that is
not the operator's, and restatements, are not in the chain. The fleet sums the SIMs that had messages that day and
names those that do not reconcile. Supervisors and admins only (docs/decisions/evidence.md).`;

const ERRORS = {
  401: { description: "Not signed in", reasons: [] },
  403: {
    description: "Not a supervisor's or admin's session",
    reasons: reasonsOf(EVIDENCE, "session_required", "agent_inactive", "supervisor_required"),
  },
  422: { description: "Malformed day or SIM id", reasons: reasonsOf(EVIDENCE, "invalid_request") },
};

const CHAIN_EXAMPLE = {
  sim_id: SIM_EXAMPLE.sim_id,
  day: "2026-11-22",
  total: 2,
  breaks: 1,
  offset: 0,
  links: [
    {
      message_id: "7d2c0c8e-1f5b-4a8e-9b6d-0e1f2a3b4c5d",
      received_at: "2026-11-22T08:14:03.000Z",
      kind: "DEP",
      direction: "out",
      amount: 15000,
      fee: 0,
      commission: null,
      moved: -15000,
      balance_before: 413000,
      expected_balance: 398000,
      balance_after: 398000,
      outcome: "confirmed",
      operator_ref: "CI221126.0814.B12345",
      is_break: false,
      gap: null,
    },
    {
      message_id: "9a1b2c3d-4e5f-4a6b-8c7d-8e9f0a1b2c3d",
      received_at: "2026-11-22T09:02:41.000Z",
      kind: "BAL",
      direction: null,
      amount: null,
      fee: null,
      commission: null,
      moved: 0,
      balance_before: 398000,
      expected_balance: 398000,
      balance_after: 395000,
      outcome: "confirmed",
      operator_ref: null,
      is_break: true,
      gap: -3000,
    },
  ],
};

async function read(
  services: Parameters<Route["handle"]>[0]["services"],
  caller: Parameters<Route["handle"]>[0]["caller"],
  dayValue: string | undefined,
  simId: string,
) {
  const res = await services.evidence.getDailyReconciliation({ caller, day: dayValue ?? "", simId });
  return {
    fleet: toContractJson(FleetReconciliationSchema, res.fleet!),
    sims: res.sims.map((s) => toContractJson(SimReconciliationSchema, s)),
  };
}

export const reconciliationRoutes: Route[] = [
  route({
    operationId: "getDailyReconciliation",
    method: "get",
    path: "/v1/reconciliations/daily",
    tag: "Operations",
    summary: "The fleet's day: each SIM's opening and closing balance, movements, chain breaks, unexplained difference",
    description: DESCRIPTION,
    auth: ["session"],
    query: z.object({ day }),
    responses: {
      200: { description: "The fleet's totals and one entry per SIM", schema: response, example: EXAMPLE },
      ...ERRORS,
    },
    async handle({ caller, query, services }) {
      return ok(await read(services, caller, query.day, ""));
    },
  }),
  route({
    operationId: "getSimDailyReconciliation",
    method: "get",
    path: "/v1/reconciliations/daily/:sim_id",
    tag: "Operations",
    summary: "One SIM's day: opening and closing balance, movements, chain breaks, unexplained difference",
    description: `${DESCRIPTION} A SIM without messages that day has one entry carrying its balance unchanged.`,
    auth: ["session"],
    uuidParams: ["sim_id"],
    query: z.object({ day }),
    responses: {
      200: {
        description: "The SIM's day (`sims` has exactly one entry; `fleet` is that SIM alone)",
        schema: response,
        example: { ...EXAMPLE, sims: [SIM_EXAMPLE] },
      },
      ...ERRORS,
      404: { description: "No SIM has this id", reasons: reasonsOf(EVIDENCE, "sim_not_found") },
    },
    async handle({ caller, query, params, services }) {
      return ok(await read(services, caller, query.day, params.sim_id));
    },
  }),
  route({
    operationId: "getSimBalanceChain",
    method: "get",
    path: "/v1/reconciliations/daily/:sim_id/chain",
    tag: "Operations",
    summary: "One SIM's balance chain of a day, link by link, each break flagged",
    description: `The messages of the SIM's balance chain on one local day (UTC+1, \`day\` YYYY-MM-DD, default today),
in operator-timestamp order: the same messages and rule as the reconciliation's \`breaks\` (restatements, unknown
senders and a reference read twice are not in the chain). Each link: the message, what it moved (in − out − fee +
commission), \`balance_before\` (the balance printed by the last earlier chain message, the day before included),
\`expected_balance\` (balance_before moved by this message; null when the link cannot be checked: no balance before,
none printed, or a movement the text does not state), the printed \`balance_after\`, and \`is_break\` with its
\`gap\` (printed − expected). Paged: \`offset\` (default 0) and \`limit\` (1–500, default 200); \`total\` counts
the day's links and \`breaks\` the broken ones. Supervisors and admins only.`,
    auth: ["session"],
    uuidParams: ["sim_id"],
    query: z.object({ day, offset: queryInt(0, 100_000).optional(), limit: queryInt(1, 500).optional() }),
    responses: {
      200: {
        description: "A page of the day's chain",
        schema: contractSchema(GetBalanceChainResponseSchema),
        example: CHAIN_EXAMPLE,
      },
      ...ERRORS,
      422: { description: "Malformed day, SIM id, offset or limit", reasons: reasonsOf(EVIDENCE, "invalid_request") },
      404: { description: "No SIM has this id", reasons: reasonsOf(EVIDENCE, "sim_not_found") },
    },
    async handle({ caller, query, params, services }) {
      const res = await services.evidence.getBalanceChain({
        caller,
        simId: params.sim_id,
        day: query.day ?? "",
        offset: query.offset ?? 0,
        limit: query.limit ?? 0,
      });
      return ok(toContractJson(GetBalanceChainResponseSchema, res));
    },
  }),
];
