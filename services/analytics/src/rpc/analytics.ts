import type { ServiceImpl } from "@connectrpc/connect";
import { DomainError, type Database } from "@transferops/kit";
import type { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import { listAgents } from "../store/agents.ts";

export function analyticsHandlers(db: Database): Partial<ServiceImpl<typeof AnalyticsService>> {
  return {
    async listKnownAgents(req) {
      const c = req.caller;
      if (!c || c.kind !== "session" || c.role !== "admin" || !c.isActive) {
        throw new DomainError("forbidden", "This route requires the admin role");
      }
      const agents = await listAgents(db.em());
      return {
        agents: agents.map((a) => ({
          agentId: a.agent_id,
          fullName: a.full_name,
          role: a.role,
          isActive: a.is_active,
        })),
      };
    },
  };
}
