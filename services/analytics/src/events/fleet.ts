import { on, Topics } from "@transferops/kit";
import { AgentChangedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import { upsertAgent } from "../store/agents.ts";

export const fleetTopics = [Topics.fleet];

/** Agents' names and roles, for the `by_agent` block. */
export const fleetHandlers = [
  on(AgentChangedSchema, async (em, event, meta) => {
    const a = event.agent;
    if (!a) return;
    await upsertAgent(
      em,
      { agent_id: a.agentId, full_name: a.fullName, role: a.role, is_active: a.isActive },
      meta.occurredAt,
    );
  }),
];
