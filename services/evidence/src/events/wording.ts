import { create } from "@bufbuild/protobuf";
import { enqueueEvent, opt, raiseAlert, Topics, ts, type EntityManager } from "@transferops/kit";
import { WordingRuleSchema, type WordingRule } from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import { WordingRuleChangedSchema } from "@transferops/kit/gen/transferops/evidence/v1/events_pb";
import type { MessageRecord } from "../domain/message.ts";
import type { Operator } from "../domain/parsers/types.ts";
import type { WordingDrift } from "../domain/wording-drift.ts";
import { parseRuleId, type WordingRuleRecord } from "../domain/wording-rule.ts";

const SCHEMA = "evidence";
/** The sample's length: enough to write a wording rule from, short enough for a notification. */
const SAMPLE_CHARS = 320;

/**
 * The operator's texts on this SIM stopped being recognised: probably a new wording. One alert
 * per SIM and hour; the sample is the text that tipped it.
 */
export async function wordingChangedAlert(
  em: EntityManager,
  m: MessageRecord,
  operator: Operator,
  drift: WordingDrift,
): Promise<void> {
  const pct = (x: number) => Math.round(x * 1000) / 10;
  await raiseAlert(em, SCHEMA, {
    kind: "evidence_wording_changed",
    severity: "warning",
    message:
      `${pct(drift.share)}% of SIM ${m.sim_id}'s ${operator} texts over the last hour were recognised by no ` +
      `wording rule (usually ${pct(drift.usual_share)}%): the operator may have changed its wording`,
    sim_id: m.sim_id,
    context: {
      operator,
      share_pct: pct(drift.share),
      usual_share_pct: pct(drift.usual_share),
      sample_message_id: m.id,
      sample: m.raw_text.slice(0, SAMPLE_CHARS),
    },
    raised_at: new Date(),
    dedupe_key: `evidence_wording_changed:${m.sim_id}:${m.received_at.toISOString().slice(0, 13)}`,
  });
}

/**
 * An admin's change to a wording rule, in the transaction that makes it; fleet writes it to
 * the audit log. On the `messages` topic keyed by the rule id (a rule's changes stay in order).
 */
export async function wordingRuleChanged(
  em: EntityManager,
  change: { action: "added" | "activated" | "retired"; rule: WordingRuleRecord; actor: string; retired?: string },
): Promise<void> {
  await enqueueEvent(em, SCHEMA, {
    topic: Topics.messages,
    key: change.rule.rule_id,
    schema: WordingRuleChangedSchema,
    message: create(WordingRuleChangedSchema, {
      action: change.action,
      rule: toWordingRule(change.rule),
      actorAgentId: change.actor,
      changedAt: ts(new Date()),
      retiredVersionId: change.retired ?? "",
    }),
  });
}

/** A version as the RPCs and the event carry it. */
export function toWordingRule(v: WordingRuleRecord): WordingRule {
  return create(WordingRuleSchema, {
    versionId: v.id,
    ruleId: v.rule_id,
    version: v.version,
    operator: v.operator,
    kind: opt(v.kind),
    language: v.language,
    direction: opt(v.direction),
    template: v.template,
    state: v.state,
    parseRule: parseRuleId(v),
    createdAt: ts(v.created_at),
    createdBy: v.created_by,
    activatedAt: ts(v.activated_at),
    activatedBy: opt(v.activated_by),
    retiredAt: ts(v.retired_at),
    retiredBy: opt(v.retired_by),
    rereadState: v.reread_state,
    rereadMessages: BigInt(v.reread_messages),
    rereadConfirmed: BigInt(v.reread_confirmed),
  });
}
