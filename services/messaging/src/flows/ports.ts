import type { Client } from "@connectrpc/connect";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { Database, Logger } from "@transferops/kit";
import type { MessagingConfig } from "../config.ts";

/** What every messaging handler and flow may use. */
export interface MessagingDeps {
  db: Database;
  config: MessagingConfig;
  /** Fleet's agents, to check collaborators. */
  agents: AgentDirectory;
  /** Asks the outbox relay for a pass after a commit that wrote events. */
  published(): void;
  /** Wakes the import worker after an import is queued. */
  importQueued(): void;
  log: Logger;
}

/** What messaging asks fleet: whether agents exist and are active. A port so tests can stand in. */
export interface AgentDirectory {
  /** The ids among `agentIds` that name no active agent. */
  unknownAgents(agentIds: string[]): Promise<string[]>;
}

export function fleetAgents(client: Client<typeof FleetService>): AgentDirectory {
  return {
    async unknownAgents(agentIds) {
      const scopes = await Promise.all(agentIds.map((agentId) => client.getAgentScope({ agentId })));
      return agentIds.filter((_, i) => !scopes[i].exists || !scopes[i].isActive);
    },
  };
}
