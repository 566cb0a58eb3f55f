// A wording rule taught at run time, as stored: one immutable version of an operator's
// wording (parsers/wording-rules.ts compiles it), and the states it moves through:
//
//   draft --activate--> active --retire (or a newer version activated)--> retired
//   draft --retire--> retired
//
// Only an active version reads new texts. Activating a version retires the rule's active
// one in the same transaction (one active version per rule).

import {
  compileWordingRule,
  isConfirmingKind,
  templateProblems,
  TEMPLATE_PROBLEMS,
  type TemplateProblem,
} from "./parsers/wording-rules.ts";
import { DIRECTIONS, LANGUAGES } from "./parsers/types.ts";
import type { Direction, Language, MessageKind, Operator, Rule } from "./parsers/types.ts";
import { refusal } from "./reasons.ts";
import { OPERATORS, type DomainError } from "@transferops/kit/pure";

// The wording feature's vocabularies, in one place for the gateway's schemas
// (`@transferops/evidence/wording-rule`).
export { DIRECTIONS, LANGUAGES, OPERATORS, TEMPLATE_PROBLEMS };

export const STATES = ["draft", "active", "retired"] as const;
export type WordingRuleState = (typeof STATES)[number];
export type RereadState = "none" | "running" | "done";

export interface WordingRuleRecord {
  id: string;
  rule_id: string;
  version: number;
  operator: Operator;
  kind: MessageKind | null;
  language: Language;
  direction: Direction | null;
  template: string;
  state: WordingRuleState;
  created_at: Date;
  created_by: string;
  activated_at: Date | null;
  activated_by: string | null;
  retired_at: Date | null;
  retired_by: string | null;
  reread_state: RereadState;
  reread_after_at: Date | null;
  reread_after_id: string | null;
  reread_messages: number;
  reread_confirmed: number;
}

/** The parser rule id stamped on the messages a version reads. */
export function parseRuleId(v: Pick<WordingRuleRecord, "operator" | "rule_id" | "version">): string {
  return `taught.${v.operator}.${v.rule_id}.v${v.version}`;
}

/** Compiled once per version: a version never changes. */
const compiled = new Map<string, Rule>();

export function ruleOf(v: WordingRuleRecord): Rule {
  let rule = compiled.get(v.id);
  if (!rule) {
    rule = compileWordingRule(v, parseRuleId(v));
    compiled.set(v.id, rule);
  }
  return rule;
}

export interface WordingRuleInput {
  operator: string;
  kind: string | null;
  language: string;
  direction: string | null;
  template: string;
}

/**
 * Checks a new version: its operator, language and direction, then the template's own
 * problems (all of them, in `context.problems`; the first is `context.reason`).
 */
export function checkNewVersion(
  input: WordingRuleInput,
): Pick<WordingRuleRecord, "operator" | "kind" | "language" | "direction" | "template"> {
  if (!OPERATORS.includes(input.operator as Operator))
    throw refusal("invalid_request", `operator: must be one of ${OPERATORS.join(", ")}`, { field: "operator" });
  if (!LANGUAGES.includes(input.language as Language))
    throw refusal("invalid_request", `language: must be one of ${LANGUAGES.join(", ")}`, { field: "language" });
  if (input.direction !== null && !DIRECTIONS.includes(input.direction as Direction))
    throw refusal("invalid_request", `direction: must be in, out or null`, { field: "direction" });
  if (input.template.trim() === "")
    throw refusal("invalid_request", "template: must not be empty", { field: "template" });
  const spec = {
    operator: input.operator as Operator,
    kind: input.kind as MessageKind | null,
    language: input.language as Language,
    direction: input.direction as Direction | null,
    template: input.template,
  };
  const problems: TemplateProblem[] = templateProblems(spec);
  if (problems.length > 0) {
    throw refusal(problems[0], `The wording rule is refused: ${problems.join(", ")}`, { problems });
  }
  return spec;
}

/** Activation: a draft only (an active version is answered as it is; a retired one never comes back). */
export function checkActivation(v: WordingRuleRecord): "activate" | "already" {
  if (v.state === "active") return "already";
  if (v.state === "retired")
    throw refusal("wording_rule_retired", "A retired version cannot be activated again: add a new version", {
      version_id: v.id,
    });
  return "activate";
}

/**
 * Two admins for a rule that can confirm: a version of a confirming kind (DEP, BAL) is
 * activated by an admin other than the one who drafted it (403
 * `wording_rule_needs_second_admin`), so that one admin alone cannot teach the system to read
 * a text as proof. The activation's audit row names both.
 */
export function checkApprover(v: WordingRuleRecord, agentId: string): DomainError | null {
  if (!isConfirmingKind(v.kind) || v.created_by !== agentId) return null;
  return refusal(
    "wording_rule_needs_second_admin",
    `A ${v.kind} rule can confirm operations: another admin than the one who drafted it activates it`,
    { version_id: v.id, kind: v.kind, drafted_by: v.created_by },
  );
}

/** Retirement: a draft or an active version; a retired one is answered as it is. */
export function checkRetirement(v: WordingRuleRecord): "retire" | "already" {
  return v.state === "retired" ? "already" : "retire";
}
