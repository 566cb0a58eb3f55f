import type { Database } from "@transferops/kit";
import type { Operator, Rule } from "../domain/parsers/types.ts";
import { ruleOf } from "../domain/wording-rule.ts";
import { activeRulesStamp, activeWordingRules } from "../store/wording-rules.ts";
import type { EntityManager } from "@transferops/kit";

/** The operator's active taught rules, as stored now (compiled once per version: a version never changes). */
export async function taughtRules(em: EntityManager, operator: Operator): Promise<Rule[]> {
  const active = await activeWordingRules(em, operator);
  return active.map(ruleOf);
}

/**
 * How long a submission parses with the rules it checked before checking again: a message
 * is stored at most this long (plus its own transaction) after the rules it was read with were
 * current, well inside the re-read's margin (the re-drive's grace, 10 s by default), so a
 * rule activated or retired meanwhile still gets to the message through the re-read.
 */
export const RULES_RECHECK_MS = 1_000;

export interface CurrentRules {
  rules: Rule[];
  checkedAt: number;
}

/**
 * The active taught rules of each operator, remembered per database under the stamp of the
 * active set (`activeRulesStamp`). Asked once per submission, in its first message's
 * transaction before the message is parsed and inserted (no transaction of its own): one
 * small query checks the stamp; the rules are read again only when it changed. Every replica
 * checks at every submission, so a submission that starts after an activation or a retirement
 * commits parses with it on every replica (no notification to miss); one already running
 * checks again, in its next message's transaction, after RULES_RECHECK_MS.
 */
class TaughtRulesCache {
  private stamp?: string;
  private readonly byOperator = new Map<Operator, Rule[]>();

  /** `em`: the transaction the rules are used in (its statements read what is committed when each runs). */
  async current(em: EntityManager, operator: Operator, now = Date.now()): Promise<CurrentRules> {
    const stamp = await activeRulesStamp(em);
    if (stamp !== this.stamp) {
      this.byOperator.clear();
      this.stamp = stamp;
    }
    let rules = this.byOperator.get(operator);
    if (!rules) {
      // Read after the stamp: never older than it (a newer set changes the stamp, read again next time).
      rules = await taughtRules(em, operator);
      if (this.stamp === stamp) this.byOperator.set(operator, rules);
    }
    return { rules, checkedAt: now };
  }
}

const caches = new WeakMap<Database, TaughtRulesCache>();

/**
 * The active taught rules of `operator`, checked against the stored set (see
 * TaughtRulesCache), with `em`'s statements: the caller's transaction, or by default
 * statements of their own.
 */
export function currentTaughtRules(
  db: Database,
  operator: Operator,
  em: EntityManager = db.em(),
): Promise<CurrentRules> {
  let cache = caches.get(db);
  if (!cache) caches.set(db, (cache = new TaughtRulesCache()));
  return cache.current(em, operator);
}
