import { z } from "zod";
import { DIRECTIONS, MESSAGE_KINDS, type MessageKind } from "@transferops/evidence/kinds";
import { OPERATORS } from "@transferops/kit";
import {
  UnknownWordingGroupSchema,
  WordingProposalSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import { contractSchema } from "../../http/contract-schema.ts";
import { toContractJson } from "../../http/json.ts";
import { adminOnly } from "../../http/reasons.ts";
import { ok, route, type Route } from "../../http/route.ts";
import { EVIDENCE } from "../../http/service-reasons.ts";

// Teaching the fleet's own wordings (evidence; docs/decisions/evidence.md, "Wordings taught
// from the fleet"): the texts no rule reads grouped by their shape, and a rule proposed from
// one of them. An admin's session only; both read, nothing is stored (the draft is added with
// addWordingRule, activated with activateWordingRule).

const SIM_A = "0f1e2d3c-4b5a-4968-8776-655443322110";
const MESSAGE = "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a";
const TEXT = "CREDIT MOMO: 3250F recus de NORBERT DOSSOU (237670000009) | Nouveau solde 4222F | Trx 10932256987";

const groupExample = {
  operator: "operator_a",
  shape: "{name}: {amount} recus de {name} ({phone}) | nouveau solde {amount} | trx {phone}",
  why: "unread",
  count: 14,
  sim_ids: [SIM_A],
  first_seen: "2026-11-28T07:02:11.000Z",
  last_seen: "2026-11-28T09:41:50.000Z",
  sample_message_id: MESSAGE,
  sample_text: TEXT,
  operations_waiting: 2,
  money_waiting_xaf: 18250,
  amount_read_xaf: 0,
};

const proposalExample = {
  message_id: MESSAGE,
  operator: "operator_a",
  kind: "UV_IN",
  language: "fr",
  direction: "in",
  template: "CREDIT MOMO: {amount} recus de {name} ({phone}) | Nouveau solde {balance} | Trx {ref}",
  example: TEXT,
  slots: [
    { slot: "amount", start: 13, end: 18, value: "3250F" },
    { slot: "name", start: 28, end: 42, value: "NORBERT DOSSOU" },
    { slot: "phone", start: 44, end: 56, value: "237670000009" },
    { slot: "balance", start: 74, end: 79, value: "4222F" },
    { slot: "ref", start: 86, end: 97, value: "10932256987" },
  ],
  problems: [],
  reads: 1,
  scanned: 412,
  read_otherwise: 0,
  sample: [
    {
      message_id: MESSAGE,
      sim_id: SIM_A,
      received_at: "2026-11-28T09:41:50.000Z",
      outcome: "orphan",
      before_kind: null,
      before_rule: "unrecognised",
      kind: "UV_IN",
      amount: 3250,
      fee: null,
      balance_after: 4222,
      operator_ref: "10932256987",
      counterparty_msisdn: "237670000009",
      counterparty_name: "NORBERT DOSSOU",
      direction: "in",
      text: TEXT,
      rereadable: true,
      money_received_as_proof: false,
    },
  ],
};

/** The kinds a reading can name, as evidence's parsers define them. */
const KINDS = MESSAGE_KINDS as [MessageKind, ...MessageKind[]];

export const unknownWordingRoutes: Route[] = [
  route({
    operationId: "listUnknownWordings",
    method: "get",
    path: "/v1/admin/unknown-wordings",
    tag: "Admin",
    summary: "The texts no rule reads, or reads only partly, grouped by their shape",
    description:
      "Reads the newest 5,000 stored messages and groups, per operator, those no rule reads (`why` `unread`), a kind that moves money read without its amount (`kind_without_amount`) and a deposit read without its reference (`deposit_without_ref`), by their shape: the text with its amounts, numbers, names, references and dates masked. Each group gives its count, SIMs, first and last seen, and its newest text; the operations waiting for a proof on its SIMs (queued, running, awaiting_evidence, no_evidence) and their amounts. The groups with the most money waiting come first, then the most operations waiting, then the most texts; at most 100. A dismissed text is not listed.",
    auth: ["session"],
    query: z.object({ operator: z.enum(OPERATORS).optional() }),
    responses: adminOnly(
      {
        200: {
          description: "groups, most money waiting first",
          schema: z.object({
            groups: z.array(contractSchema(UnknownWordingGroupSchema)),
            scanned: z.number().int(),
            truncated: z.boolean(),
          }),
          example: { groups: [groupExample], scanned: 412, truncated: false },
        },
        422: "Unknown operator",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.evidence.listUnknownWordings({ caller, operator: query.operator ?? "" });
      return ok({
        groups: res.groups.map((g) => toContractJson(UnknownWordingGroupSchema, g)),
        scanned: Number(res.scanned),
        truncated: res.truncated,
      });
    },
  }),
  route({
    operationId: "proposeWordingRule",
    method: "post",
    path: "/v1/admin/wording-rules/proposals",
    tag: "Admin",
    summary: "Propose a wording rule from a stored text, and what it would read",
    description:
      "From the text of `message_id`, proposes a template in the wording rules' format: the amounts with their currency, the operators' reference shapes, the other party's number and name (by the direction), the balance and the fee after their labels become slots (`slots`: their spans in `example`, the text with its whitespace collapsed); dates become {date}, other numbers {number}. `kind` and `direction` are the admin's choice (absent: the text's stored reading). With `template`, the admin's corrected template is tried instead of a new proposal. `problems` lists what would make addWordingRule refuse it (the template reasons); when there are none, every stored text of the operator it would read differently from today is counted (`reads`, `read_otherwise`: read as a kind by another rule today, built-in included) and the newest 20 shown as it would read them. Nothing is stored.",
    auth: ["session"],
    body: z.object({
      message_id: z.string().uuid(),
      kind: z.enum(KINDS).nullable().optional(),
      direction: z.enum(DIRECTIONS).nullable().optional(),
      template: z.string().min(1).max(2000).optional(),
    }),
    requestExample: { message_id: MESSAGE, kind: "UV_IN", direction: "in" },
    responses: adminOnly(
      {
        200: {
          description: "The proposal: the template, its slots and what it would read",
          schema: contractSchema(WordingProposalSchema),
          example: proposalExample,
        },
        404: "No such message, or its SIM is unknown",
        422: "Invalid body",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "invalid_request", "evidence_not_found", "sim_not_found"],
    ),
    async handle({ caller, body, services }) {
      const res = await services.evidence.proposeWordingRule({
        caller,
        messageId: body.message_id,
        // null: no kind (an unrecognised text); absent: the stored reading's.
        kind: body.kind === null ? "" : body.kind,
        direction: body.direction === null ? "" : body.direction,
        template: body.template,
      });
      return ok(toContractJson(WordingProposalSchema, res.proposal!));
    },
  }),
];
