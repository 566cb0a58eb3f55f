import type { Operator, Rule } from "../domain/parsers/types.ts";
import { ruleOf } from "../domain/wording-rule.ts";
import { activeWordingRules } from "../store/wording-rules.ts";
import type { EntityManager } from "@transferops/kit";

/**
 * The operator's active taught rules, read at every parse: one indexed query on a table of a
 * few rows, so every replica reads a rule the moment its activation commits (no cache to
 * invalidate). Compiling is cached per version (a version never changes).
 */
export async function taughtRules(em: EntityManager, operator: Operator): Promise<Rule[]> {
  const active = await activeWordingRules(em, operator);
  return active.map(ruleOf);
}
