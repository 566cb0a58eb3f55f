import { randomUUID } from "node:crypto";
import { check, isOperator, isUuid } from "@transferops/kit";
import type {
  ActivateWordingRuleRequest,
  AddWordingRuleRequest,
  ListWordingRulesRequest,
  RetireWordingRuleRequest,
  TryWordingRuleRequest,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { MessageRecord } from "../domain/message.ts";
import type { Operator, ParsedMessage, Rule } from "../domain/parsers/types.ts";
import { compileWordingRule, isConfirmingKind, tryWordingRule } from "../domain/parsers/wording-rules.ts";
import { invalid, refusal } from "../domain/reasons.ts";
import { requireAdmin } from "../domain/scope.ts";
import {
  checkActivation,
  checkApprover,
  checkNewVersion,
  checkRetirement,
  ruleOf,
  STATES,
  type WordingRuleRecord,
} from "../domain/wording-rule.ts";
import { wordingRuleChanged } from "../events/wording.ts";
import { storedNewest } from "../store/messages.ts";
import {
  activateVersion,
  findRule,
  findVersion,
  insertWordingRule,
  listWordingRules,
  retireVersion,
} from "../store/wording-rules.ts";
import type { FlowDeps } from "./ports.ts";
import { lookupSim } from "./submit.ts";

export async function listRules(deps: FlowDeps, req: ListWordingRulesRequest): Promise<WordingRuleRecord[]> {
  requireAdmin(req.caller);
  if (req.operator && !isOperator(req.operator))
    throw invalid("operator", "must be operator_a or operator_b", req.operator);
  if (req.state && !STATES.includes(req.state as never))
    throw invalid("state", `must be one of ${STATES.join(", ")}`, req.state);
  return listWordingRules(deps.db.em(), { operator: req.operator || undefined, state: req.state || undefined });
}

/** A new draft: version 1 of a new rule, or the next version of `rule_id`. */
export async function addRule(deps: FlowDeps, req: AddWordingRuleRequest): Promise<WordingRuleRecord> {
  const caller = requireAdmin(req.caller);
  const spec = checkNewVersion({
    operator: req.operator,
    kind: req.kind ?? null,
    language: req.language,
    direction: req.direction ?? null,
    template: req.template,
  });
  let ruleId: string = randomUUID();
  if (req.ruleId) {
    const rule = isUuid(req.ruleId) ? await findRule(deps.db.em(), req.ruleId) : undefined;
    if (!rule) throw refusal("wording_rule_not_found", `No wording rule ${req.ruleId}`, { rule_id: req.ruleId });
    if (rule.operator !== spec.operator)
      throw refusal("wording_rule_operator_mismatch", `Rule ${rule.rule_id} reads ${rule.operator}'s texts`, {
        rule_id: rule.rule_id,
        operator: rule.operator,
      });
    ruleId = rule.rule_id;
  }
  await refuseMoneyReceivedAsProof(deps, compileWordingRule(spec, `taught.${spec.operator}.draft`), spec.operator);
  const stored = await deps.db.tx(async (em) => {
    const v = await insertWordingRule(em, { ...spec, id: randomUUID(), rule_id: ruleId, created_by: caller.agentId });
    await wordingRuleChanged(em, { action: "added", rule: v, actor: caller.agentId });
    return v;
  });
  deps.published();
  return stored;
}

async function versionOf(deps: FlowDeps, id: string): Promise<WordingRuleRecord> {
  const v = isUuid(id) ? await findVersion(deps.db.em(), id) : undefined;
  if (!v) throw refusal("wording_rule_not_found", `No wording rule version ${id}`, { version_id: id });
  return v;
}

/** How many stored messages a trial reads at most (the newest). */
export const TRIAL_SCAN_LIMIT = 5000;
export const TRIAL_SAMPLE = 20;
export const TEXT_CHARS = 320;

export interface TrialReadRow {
  message: MessageRecord;
  after: ParsedMessage;
  rereadable: boolean;
  moneyReceivedAsProof: boolean;
}

export interface Trial {
  rule: WordingRuleRecord;
  scanned: number;
  truncated: boolean;
  reads: number;
  byOutcome: Record<"orphan" | "stored" | "not_correlated", number>;
  /** Of the reads, those another rule reads as a kind today (built-in or taught). */
  readOtherwise: number;
  /** Of the reads, those read today as money received that it would read as DEP or BAL. */
  moneyReceived: number;
  byKind: Record<string, number>;
  sample: TrialReadRow[];
  textChars: number;
}

/**
 * Every stored message of the operator (the newest TRIAL_SCAN_LIMIT, whatever became of
 * them) the rule would read differently from today, built-in readings included; a message's
 * operator is its SIM's (fleet). Reads only.
 */
export async function trialReads(deps: FlowDeps, rule: Rule, operator: Operator) {
  const found = await storedNewest(deps.db.em(), TRIAL_SCAN_LIMIT + 1);
  const truncated = found.length > TRIAL_SCAN_LIMIT;
  const candidates = found.slice(0, TRIAL_SCAN_LIMIT);
  const operators = await simOperators(
    deps,
    candidates.map((m) => m.sim_id),
  );
  const mine = candidates.filter((m) => operators.get(m.sim_id) === operator);
  const reads = tryWordingRule(
    rule,
    operator,
    mine.map((m) => ({
      id: m.id,
      operator,
      raw_text: m.raw_text,
      kind: m.kind,
      rule: m.parse_rule,
      direction: m.direction,
      amount: m.amount,
      fee: m.fee,
      balance_after: m.balance_after,
      operator_ref: m.operator_ref,
      counterparty_msisdn: m.counterparty_msisdn,
      outcome: m.outcome,
    })),
  );
  return { scanned: mine.length, truncated, reads, byId: new Map(mine.map((m) => [m.id, m])) };
}

/**
 * Refuses (422 `wording_rule_reads_money_received`, the texts in `context.texts`) a rule that
 * would read a stored text read today as money received as a kind that confirms (DEP, BAL):
 * a customer's incoming transfer would then prove an outgoing deposit and set the SIM's balance.
 */
async function refuseMoneyReceivedAsProof(deps: FlowDeps, rule: Rule, operator: Operator): Promise<void> {
  if (!isConfirmingKind(rule.kind)) return;
  const { reads, byId } = await trialReads(deps, rule, operator);
  const turned = reads.filter((r) => r.money_received_as_proof);
  if (turned.length === 0) return;
  throw refusal(
    "wording_rule_reads_money_received",
    `The rule would read ${turned.length} text(s) read today as money received as ${rule.kind}: a received transfer would prove a deposit`,
    {
      kind: rule.kind,
      count: turned.length,
      texts: turned.slice(0, TRIAL_SAMPLE).map((r) => ({
        message_id: r.message_id,
        before_kind: r.before.kind,
        before_rule: r.before.rule,
        kind: r.after.kind,
        text: byId.get(r.message_id)!.raw_text.slice(0, TEXT_CHARS),
      })),
    },
  );
}

/**
 * What a version would read differently among the stored messages of its operator: counts
 * (in all, by stored outcome for the ones an activation reads again, read by another rule
 * today, money received it would read as proof, by kind read) and the newest reads.
 */
export async function tryRule(deps: FlowDeps, req: TryWordingRuleRequest): Promise<Trial> {
  requireAdmin(req.caller);
  const v = await versionOf(deps, req.versionId);
  const { scanned, truncated, reads, byId } = await trialReads(deps, ruleOf(v), v.operator);
  const byOutcome = { orphan: 0, stored: 0, not_correlated: 0 };
  const byKind: Record<string, number> = {};
  for (const r of reads) {
    if (r.outcome in byOutcome) byOutcome[r.outcome as keyof typeof byOutcome] += 1;
    byKind[r.after.kind ?? ""] = (byKind[r.after.kind ?? ""] ?? 0) + 1;
  }
  // The texts it must never read as proof first, then the newest.
  const ordered = [
    ...reads.filter((r) => r.money_received_as_proof),
    ...reads.filter((r) => !r.money_received_as_proof),
  ];
  return {
    rule: v,
    scanned,
    truncated,
    reads: reads.length,
    byOutcome,
    readOtherwise: reads.filter((r) => r.before.kind !== null).length,
    moneyReceived: reads.filter((r) => r.money_received_as_proof).length,
    byKind,
    sample: ordered.slice(0, TRIAL_SAMPLE).map((r) => ({
      message: byId.get(r.message_id)!,
      after: r.after,
      rereadable: r.rereadable,
      moneyReceivedAsProof: r.money_received_as_proof,
    })),
    textChars: TEXT_CHARS,
  };
}

/** Each SIM's operator as fleet knows it (a SIM fleet no longer knows has none). */
export async function simOperators(deps: FlowDeps, simIds: readonly string[]): Promise<Map<string, string>> {
  const out = new Map<string, string>();
  for (const simId of new Set(simIds)) {
    const sim = await lookupSim(deps, simId);
    if (sim) out.set(simId, sim.operator);
  }
  return out;
}

/**
 * Activates a draft: the rule's active version is retired in the same transaction, the
 * change is published for the audit log, and the re-reading of unmatched messages is
 * queued on the row (the re-read job runs it in batches, resuming after a crash).
 */
export async function activateRule(
  deps: FlowDeps,
  req: ActivateWordingRuleRequest,
  kick: () => void,
): Promise<WordingRuleRecord> {
  const caller = requireAdmin(req.caller);
  const draft = await versionOf(deps, req.versionId);
  if (checkActivation(draft) === "activate") {
    check(checkApprover(draft, caller.agentId));
    // Texts stored since the draft was added are checked again.
    await refuseMoneyReceivedAsProof(deps, ruleOf(draft), draft.operator);
  }
  const done = await deps.db.tx(async (em) => {
    const v = (await findVersion(em, req.versionId, true))!;
    if (checkActivation(v) === "already") return v;
    const { activated, retired } = await activateVersion(em, v, caller.agentId);
    await wordingRuleChanged(em, { action: "activated", rule: activated, actor: caller.agentId, retired: retired?.id });
    return activated;
  });
  deps.published();
  kick();
  return done;
}

/**
 * Retires a version; one that was active has what it read queued for re-reading by the
 * remaining rules (the re-read job, as after an activation).
 */
export async function retireRule(
  deps: FlowDeps,
  req: RetireWordingRuleRequest,
  kick: () => void,
): Promise<WordingRuleRecord> {
  const caller = requireAdmin(req.caller);
  await versionOf(deps, req.versionId);
  const done = await deps.db.tx(async (em) => {
    const v = (await findVersion(em, req.versionId, true))!;
    if (checkRetirement(v) === "already") return v;
    const retired = await retireVersion(em, v.id, caller.agentId);
    await wordingRuleChanged(em, { action: "retired", rule: retired, actor: caller.agentId });
    return retired;
  });
  deps.published();
  kick();
  return done;
}
