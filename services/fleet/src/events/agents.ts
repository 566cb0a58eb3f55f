import { create } from "@bufbuild/protobuf";
import { enqueueEvent, Topics, type EntityManager } from "@transferops/kit";
import { AgentChangedSchema } from "@transferops/kit/gen/transferops/fleet/v1/events_pb";
import type { AgentRecord } from "../domain/agents.ts";
import { toAgent } from "../flows/mappers.ts";

export type AgentChange = "created" | "updated" | "deactivated" | "password_reset";

/** Publishes the agent as it is after the change, in the caller's transaction. */
export async function agentChanged(em: EntityManager, agent: AgentRecord, change: AgentChange): Promise<void> {
  await enqueueEvent(em, "fleet", {
    topic: Topics.fleet,
    key: agent.id,
    schema: AgentChangedSchema,
    message: create(AgentChangedSchema, { agent: toAgent(agent), change }),
  });
}
