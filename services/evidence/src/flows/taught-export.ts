import { OPERATORS, type Database } from "@transferops/kit";
import { TAUGHT_EXPORT_FORMAT, taughtExample, type TaughtExport } from "../domain/parsers/taught-export.ts";
import { parseRuleId } from "../domain/wording-rule.ts";
import { activeWordingRules, textsReadBy } from "../store/wording-rules.ts";

/** How many texts of each rule an export carries: enough to label a wording, few enough to read. */
export const EXAMPLES_PER_RULE = 5;

/**
 * Every active taught rule of the fleet with the newest texts it read, masked and labelled
 * (domain/parsers/taught-export.ts): what `npm run wording:export` writes.
 */
export async function exportTaught(
  db: Database,
  options: { from: string; country: string; now?: Date },
): Promise<TaughtExport> {
  const em = db.em();
  const rules: TaughtExport["rules"] = [];
  for (const operator of OPERATORS) {
    for (const v of await activeWordingRules(em, operator)) {
      const examples = (await textsReadBy(em, parseRuleId(v), EXAMPLES_PER_RULE)).map(taughtExample);
      rules.push({
        rule_id: v.rule_id,
        version: v.version,
        operator: v.operator,
        kind: v.kind,
        language: v.language,
        direction: v.direction,
        template: v.template,
        examples,
      });
    }
  }
  return {
    format: TAUGHT_EXPORT_FORMAT,
    from: options.from,
    country: options.country,
    exported_at: (options.now ?? new Date()).toISOString(),
    rules,
  };
}
