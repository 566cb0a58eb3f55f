import { z } from "zod";
import { DIRECTIONS, LANGUAGES, OPERATORS, STATES, TEMPLATE_PROBLEMS } from "@transferops/evidence/wording-rule";
import { WordingRuleSchema, WordingTrialSchema } from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import { contractSchema } from "../../http/contract-schema.ts";
import { toContractJson } from "../../http/json.ts";
import { adminOnly } from "../../http/reasons.ts";
import { created, ok, route, type Route } from "../../http/route.ts";
import { EVIDENCE } from "../../http/service-reasons.ts";

// Wording rules taught at run time (evidence; docs/decisions/evidence.md, "Wording rules
// taught at run time"): an admin's session only; agents and supervisors get 403 admin_required.
// Every change is written to fleet's audit log (wording_rule.added, .activated, .retired). A
// rule that can confirm (DEP, BAL) needs a second admin to activate it.

const VERSION = "3b9a52f0-6f7e-4c1a-9a7d-2f5b8c1d0e11";
const RULE = "a1c4e7b2-3d5f-4a6b-8c9d-0e1f2a3b4c5d";
const ADMIN_ID = "5e2d1c0b-9a8f-4e7d-b6c5-a4b3c2d1e0f9";

const ruleExample = {
  version_id: VERSION,
  rule_id: RULE,
  version: 1,
  operator: "operator_a",
  kind: "DEP",
  language: "fr",
  direction: "out",
  template: "Depot effectue de {amount} pour {phone} le {any}. Ref: {ref}. Nouveau solde: {balance}.",
  state: "active",
  parse_rule: `taught.operator_a.${RULE}.v1`,
  created_at: "2026-11-26T08:00:00.000Z",
  created_by: ADMIN_ID,
  activated_at: "2026-11-26T08:05:00.000Z",
  activated_by: ADMIN_ID,
  retired_at: null,
  retired_by: null,
  reread_state: "done",
  reread_messages: 3,
  reread_confirmed: 1,
};

const draftExample = {
  ...ruleExample,
  state: "draft",
  activated_at: null,
  activated_by: null,
  reread_state: "none",
  reread_messages: 0,
  reread_confirmed: 0,
};

const trialExample = {
  rule: draftExample,
  scanned: 412,
  truncated: false,
  reads: 3,
  orphans: 3,
  stored: 0,
  not_correlated: 0,
  read_otherwise: 0,
  money_received: 0,
  by_kind: { DEP: 3 },
  sample: [
    {
      message_id: "9d8c7b6a-5f4e-4d3c-8b2a-1f0e9d8c7b6a",
      sim_id: "0f1e2d3c-4b5a-4968-8776-655443322110",
      received_at: "2026-11-26T07:42:10.000Z",
      outcome: "orphan",
      before_kind: null,
      before_rule: "unrecognised",
      kind: "DEP",
      amount: 15000,
      fee: null,
      balance_after: 285000,
      operator_ref: "8812345678",
      counterparty_msisdn: "677123456",
      counterparty_name: null,
      direction: "out",
      rereadable: true,
      money_received_as_proof: false,
      text: "Depot effectue de 15000 FCFA pour 677123456 le 26/11/2026 07:42. Ref: 8812345678. Nouveau solde: 285000 FCFA.",
    },
  ],
};

const versionParam = { uuidParams: ["version_id"] };

export const wordingRuleRoutes: Route[] = [
  route({
    operationId: "listWordingRules",
    method: "get",
    path: "/v1/admin/wording-rules",
    tag: "Admin",
    summary: "Wording rules taught at run time, every version, newest first",
    description:
      "Each row is one immutable version of a rule (rule_id shared by its versions); state draft, active or retired. Filter by `operator` and `state`. At most 500 rows.",
    auth: ["session"],
    query: z.object({
      operator: z.enum(OPERATORS).optional(),
      state: z.enum(STATES).optional(),
    }),
    responses: adminOnly(
      {
        200: {
          description: "rules: every version, newest first",
          schema: z.object({ rules: z.array(contractSchema(WordingRuleSchema)) }),
          example: { rules: [ruleExample] },
        },
        422: "Unknown operator or state",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "invalid_request"],
    ),
    async handle({ caller, query, services }) {
      const res = await services.evidence.listWordingRules({
        caller,
        operator: query.operator ?? "",
        state: query.state ?? "",
      });
      return ok({ rules: res.rules.map((r) => toContractJson(WordingRuleSchema, r)) });
    },
  }),
  route({
    operationId: "addWordingRule",
    method: "post",
    path: "/v1/admin/wording-rules",
    tag: "Admin",
    summary: "Add a draft wording rule (a new rule, or a new version of rule_id)",
    description:
      "The template is the operator's text with its values replaced by slots: {amount} {fee} {balance} {ref} {phone} {name} {any} (each at most once but {any}). Literal text is matched with case, accents and whitespace forgiven. Refused (422, every problem in `context.problems`, the first in `context.reason`) when unsafe: no word of three letters outside the slots, a DEP without {amount}, {ref} and {phone}, a BAL without {balance}, a money-moving kind without {amount}. A DEP or BAL rule that would read a stored text read today as money received (a transfer or float received) is refused: 422 `wording_rule_reads_money_received`, the texts in `context.texts`. A draft reads nothing until activated; try it first.",
    auth: ["session"],
    body: z.object({
      rule_id: z.string().uuid().optional(),
      operator: z.enum(OPERATORS),
      kind: z.string().max(20).nullable().optional(),
      language: z.enum(LANGUAGES),
      direction: z.enum(DIRECTIONS).nullable().optional(),
      template: z.string().min(1).max(2000),
    }),
    requestExample: {
      operator: "operator_a",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: ruleExample.template,
    },
    responses: adminOnly(
      {
        201: {
          description: "The draft version",
          schema: contractSchema(WordingRuleSchema),
          example: draftExample,
        },
        404: "rule_id names no rule",
        422: "Invalid body, an unsafe template (context.problems lists every problem), or a DEP or BAL rule that would read a stored text read today as money received (context.texts)",
      },
      EVIDENCE,
      [
        "session_required",
        "agent_inactive",
        "invalid_request",
        "wording_rule_not_found",
        "wording_rule_operator_mismatch",
        "wording_rule_reads_money_received",
        // Why a template is refused: each is a 422 `context.reason`; `context.problems` lists them all.
        ...TEMPLATE_PROBLEMS,
      ],
    ),
    async handle({ caller, body, services }) {
      const res = await services.evidence.addWordingRule({
        caller,
        ruleId: body.rule_id ?? "",
        operator: body.operator,
        kind: body.kind ?? undefined,
        language: body.language,
        direction: body.direction ?? undefined,
        template: body.template,
      });
      return created(toContractJson(WordingRuleSchema, res.rule!));
    },
  }),
  route({
    operationId: "tryWordingRule",
    method: "post",
    path: "/v1/admin/wording-rules/:version_id/try",
    tag: "Admin",
    summary: "Try a version against the stored messages: every text it would read differently from today, and as what",
    description:
      "Reads the newest 5,000 stored messages of the rule's operator, whatever reads them today (a built-in rule, a taught one, none) and whatever became of them, changes nothing, and answers every one it would read differently (another kind, direction or value): the counts (`reads` in all; by stored outcome for those an activation reads again, `rereadable` in the sample; `read_otherwise`, read as a kind by another rule today; `money_received`, read today as money received and read by it as DEP or BAL, which refuses the rule; by kind read) and a sample of 20 (those money-received texts first, then the newest; text cut at 320 characters). A message that confirmed, restated or was attached is never read again: only new texts in that wording are read the rule's way.",
    auth: ["session"],
    ...versionParam,
    responses: adminOnly(
      {
        200: {
          description: "The trial: counts and a sample",
          schema: contractSchema(WordingTrialSchema),
          example: trialExample,
        },
        404: "No such version",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "wording_rule_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.evidence.tryWordingRule({ caller, versionId: params.version_id });
      return ok(toContractJson(WordingTrialSchema, res.trial!));
    },
  }),
  route({
    operationId: "activateWordingRule",
    method: "post",
    path: "/v1/admin/wording-rules/:version_id/activate",
    tag: "Admin",
    summary: "Activate a draft: new texts are read with it, unmatched messages are read again",
    description:
      "A DEP or BAL version (a rule that can confirm) is activated by an admin other than the one who drafted it: its author gets 403 `wording_rule_needs_second_admin`; the audit row `wording_rule.activated` names both (`approval`). Such a version that would now read a stored text read today as money received as DEP or BAL is 422 `wording_rule_reads_money_received`. The rule's active version, if any, is retired in the same transaction. Every evidence replica reads with it from the commit on. Then, in batches, the operator's orphans and unknown texts are read again: one a taught rule now reads gets its new fields, and one that can now prove something is correlated as a new message would be (a late proof confirms its operation inside its windows, never twice; outside them it stays an orphan). Nothing that confirmed or was attached changes. `reread_state`, `reread_messages` and `reread_confirmed` follow it. Activating an active version answers it as it is; a retired one is 409.",
    auth: ["session"],
    ...versionParam,
    responses: adminOnly(
      {
        200: { description: "The active version", schema: contractSchema(WordingRuleSchema), example: ruleExample },
        403: "Admin required, or a DEP or BAL version activated by the admin who drafted it",
        404: "No such version",
        409: "The version is retired",
        422: "A DEP or BAL version that would read a stored text read today as money received (context.texts)",
      },
      EVIDENCE,
      [
        "session_required",
        "agent_inactive",
        "wording_rule_not_found",
        "wording_rule_retired",
        "wording_rule_needs_second_admin",
        "wording_rule_reads_money_received",
      ],
    ),
    async handle({ caller, params, services }) {
      const res = await services.evidence.activateWordingRule({ caller, versionId: params.version_id });
      return ok(toContractJson(WordingRuleSchema, res.rule!));
    },
  }),
  route({
    operationId: "retireWordingRule",
    method: "post",
    path: "/v1/admin/wording-rules/:version_id/retire",
    tag: "Admin",
    summary: "Retire a version: it reads no new text, and what it read is read again",
    description:
      "From the commit on, no evidence replica reads a new text with it. Then, in batches, the messages whose reading came from it are read again by the operator's remaining rules (built-in and the other active ones), whatever they now read, and followed as a new message's reading: a DEP or BAL is correlated (inside its operation's windows, never twice), the day's counts and last balance move by the change. What it confirmed, restated or was attached keeps its reading and link; what a person dismissed is not read. `reread_state`, `reread_messages` and `reread_confirmed` follow it (added to its activation's). Retiring a draft reads nothing.",
    auth: ["session"],
    ...versionParam,
    responses: adminOnly(
      {
        200: {
          description: "The retired version (a second retire answers it as it is)",
          schema: contractSchema(WordingRuleSchema),
          example: { ...ruleExample, state: "retired", retired_at: "2026-11-27T09:00:00.000Z", retired_by: ADMIN_ID },
        },
        404: "No such version",
      },
      EVIDENCE,
      ["session_required", "agent_inactive", "wording_rule_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.evidence.retireWordingRule({ caller, versionId: params.version_id });
      return ok(toContractJson(WordingRuleSchema, res.rule!));
    },
  }),
];
