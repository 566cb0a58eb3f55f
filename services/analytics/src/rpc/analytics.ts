import type { ServiceImpl } from "@connectrpc/connect";
import { rows, ts, type Database } from "@transferops/kit";
import type { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import type { AnalyticsConfig } from "../config.ts";
import { refuse } from "../domain/reasons.ts";
import { listAgents } from "../store/agents.ts";
import { analyticsReport, unprovenByHandsetReport } from "./report.ts";
import type { ProjectionLag } from "../events/index.ts";

export function analyticsHandlers(
  db: Database,
  config: AnalyticsConfig,
  lag: ProjectionLag,
): Partial<ServiceImpl<typeof AnalyticsService>> {
  return {
    async listKnownAgents(req) {
      const c = req.caller;
      if (!c || c.kind !== "session" || c.role !== "admin" || !c.isActive) {
        throw refuse("admin_required", "This route requires the admin role");
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
    async getAnalytics(req) {
      return { report: await analyticsReport(db, config, req.caller, req.window) };
    },
    async getUnprovenByHandset(req) {
      return { report: await unprovenByHandsetReport(db, req.caller, req.window) };
    },
    async getProjectionStatus() {
      const [last] = await rows<{ at: Date | null }>(db.em(), `select max(received_at) as at from analytics.inbox`);
      const byTopic = await lag();
      return {
        status: {
          lag: byTopic ? Object.values(byTopic).reduce((s, v) => s + v, 0n) : undefined,
          lagByTopic: byTopic ?? {},
          lastEventAt: last?.at ? ts(last.at) : undefined,
        },
      };
    },
  };
}
