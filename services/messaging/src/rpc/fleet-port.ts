import type { Client } from "@connectrpc/connect";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";

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
