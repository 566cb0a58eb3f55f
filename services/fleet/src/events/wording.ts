import { fromTs, on, Topics, toContractJson } from "@transferops/kit";
import { WordingRuleSchema } from "@transferops/kit/gen/transferops/evidence/v1/evidence_pb";
import { WordingRuleChangedSchema } from "@transferops/kit/gen/transferops/evidence/v1/events_pb";
import { audit } from "../store/agents.ts";

// Fleet owns the audit log. An admin's change to a wording rule happens in evidence, which
// publishes `WordingRuleChanged` in the same transaction (outbox, `messages` topic): one
// audit row per change (`wording_rule.added`, `.activated` (with `approval`, drafted_by and
// approved_by, for a DEP or BAL rule), `.retired`), written once per
// event (inbox). Every other event of the topic is skipped by type before any work.

export const wordingTopics = [Topics.messages];

export const wordingHandlers = [
  on(WordingRuleChangedSchema, async (em, event, meta) => {
    const rule = event.rule ? toContractJson(WordingRuleSchema, event.rule) : null;
    await audit(em, {
      actor: event.actorAgentId || undefined,
      action: `wording_rule.${event.action}`,
      target: event.rule?.versionId,
      details: {
        changed_at: (fromTs(event.changedAt) ?? meta.occurredAt).toISOString(),
        rule,
        ...(event.retiredVersionId ? { retired_version_id: event.retiredVersionId } : {}),
        // A rule that can confirm (DEP, BAL) is activated by a second admin: the row names both.
        ...(event.action === "activated" && (event.rule?.kind === "DEP" || event.rule?.kind === "BAL")
          ? { approval: { drafted_by: event.rule.createdBy, approved_by: event.actorAgentId } }
          : {}),
      },
    });
  }),
];
