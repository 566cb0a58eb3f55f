// The texts no rule reads grouped by their shape, and a rule proposed from one of them (admin
// session): what the board's teaching page shows. Reads only; the draft is added with
// addWordingRule like any other.

import { isOperator, isUuid } from "@transferops/kit";
import type {
  ListUnknownWordingsRequest,
  ProposeWordingRuleRequest,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { MessageRecord } from "../domain/message.ts";
import { proposeTemplate, slotSpans, type ProposedSlot } from "../domain/parsers/propose.ts";
import { MESSAGE_KINDS, type Direction, type MessageKind, type Operator } from "../domain/parsers/types.ts";
import { compileWordingRule, templateProblems, type TrialRead } from "../domain/parsers/wording-rules.ts";
import { detectLanguage, normalizeText } from "../domain/parsers/normalize.ts";
import { invalid, refusal } from "../domain/reasons.ts";
import { requireAdmin } from "../domain/scope.ts";
import { groupUnknown, whyUnknown, type UnknownGroup, type WaitingOperations } from "../domain/unknown-wordings.ts";
import { findMessage, storedNewest } from "../store/messages.ts";
import type { FlowDeps } from "./ports.ts";
import { lookupSim } from "./submit.ts";
import { simOperators, trialReads, TRIAL_SAMPLE, TRIAL_SCAN_LIMIT } from "./wording-rules.ts";

/** Statuses of an operation a text can still prove (operation-state.md in dispatch). */
const WAITING = ["queued", "running", "awaiting_evidence", "no_evidence"];

export interface UnknownWordings {
  groups: UnknownGroup[];
  scanned: number;
  truncated: boolean;
}

export async function listUnknown(deps: FlowDeps, req: ListUnknownWordingsRequest): Promise<UnknownWordings> {
  requireAdmin(req.caller);
  if (req.operator && !isOperator(req.operator))
    throw invalid("operator", "must be operator_a or operator_b", req.operator);
  const found = await storedNewest(deps.db.em(), TRIAL_SCAN_LIMIT + 1);
  const scanned = found.slice(0, TRIAL_SCAN_LIMIT);
  const listed = scanned.filter((m) => whyUnknown(m) !== null);
  const operators = await simOperators(
    deps,
    listed.map((m) => m.sim_id),
  );
  const mine = listed.filter((m) => !req.operator || operators.get(m.sim_id) === req.operator);
  const waiting = await waitingOperations(deps, [...new Set(mine.map((m) => m.sim_id))]);
  const groups = groupUnknown(
    mine,
    (simId) => operators.get(simId),
    (simId) => waiting.get(simId) ?? { count: 0, amountXaf: 0 },
  );
  return { groups, scanned: scanned.length, truncated: found.length > TRIAL_SCAN_LIMIT };
}

/** The operations still waiting for a proof on each SIM, from dispatch. */
async function waitingOperations(deps: FlowDeps, simIds: readonly string[]): Promise<Map<string, WaitingOperations>> {
  const out = new Map<string, WaitingOperations>();
  for (const simId of simIds) {
    const activity = await deps.dispatch.getSimActivity({ simId });
    const ops = activity.operations.filter((o) => WAITING.includes(o.status));
    out.set(simId, { count: ops.length, amountXaf: ops.reduce((sum, o) => sum + Number(o.montant), 0) });
  }
  return out;
}

export interface WordingProposalResult {
  message: MessageRecord;
  operator: Operator;
  kind: MessageKind | null;
  direction: Direction | null;
  language: "fr" | "en";
  template: string;
  example: string;
  slots: ProposedSlot[];
  problems: string[];
  reads: TrialRead[];
  scanned: number;
  textOf: (messageId: string) => MessageRecord | undefined;
}

/**
 * A template proposed from a stored text (or the one the admin corrected), with the kind and
 * direction chosen (the stored reading's by default), and every stored text of the operator it
 * would read differently from today. Nothing is stored.
 */
export async function proposeRule(deps: FlowDeps, req: ProposeWordingRuleRequest): Promise<WordingProposalResult> {
  requireAdmin(req.caller);
  if (req.kind !== undefined && req.kind !== "" && !MESSAGE_KINDS.includes(req.kind as MessageKind))
    throw invalid("kind", `must be one of ${MESSAGE_KINDS.join(", ")}`, req.kind);
  if (req.direction !== undefined && req.direction !== "" && !["in", "out"].includes(req.direction))
    throw invalid("direction", "must be in, out or empty", req.direction);
  if (req.template !== undefined && req.template.trim() === "")
    throw refusal("invalid_request", "template: must not be empty", { field: "template" });
  const message = isUuid(req.messageId) ? await findMessage(deps.db.em(), req.messageId) : undefined;
  if (!message) throw refusal("evidence_not_found", `No message ${req.messageId}`, { message_id: req.messageId });
  const sim = await lookupSim(deps, message.sim_id);
  if (!sim)
    throw refusal("sim_not_found", `The message's SIM ${message.sim_id} is unknown`, { sim_id: message.sim_id });
  const operator = sim.operator as Operator;
  const kind = req.kind === undefined ? message.kind : ((req.kind || null) as MessageKind | null);
  const direction = req.direction === undefined ? message.direction : ((req.direction || null) as Direction | null);
  const proposed =
    req.template === undefined ? proposeTemplate({ operator, text: message.raw_text, kind, direction }) : undefined;
  const language = proposed?.language ?? detectLanguage(normalizeText(message.raw_text).folded) ?? "fr";
  const template = proposed?.template ?? req.template!;
  const spec = { operator, kind, language, direction, template };
  const problems = templateProblems(spec);
  const slots = proposed?.slots ?? slotSpans(spec, message.raw_text);
  let reads: TrialRead[] = [];
  let scanned = 0;
  let byId = new Map<string, MessageRecord>();
  if (problems.length === 0) {
    const trial = await trialReads(deps, compileWordingRule(spec, `taught.${operator}.proposal`), operator);
    reads = trial.reads;
    scanned = trial.scanned;
    byId = trial.byId;
  }
  return {
    message,
    operator,
    kind,
    direction,
    language,
    template,
    example: normalizeText(message.raw_text).text,
    slots,
    problems,
    reads,
    scanned,
    textOf: (id) => byId.get(id),
  };
}

export { TRIAL_SAMPLE };
