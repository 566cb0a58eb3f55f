import type { ServiceImpl } from "@connectrpc/connect";
import type { Database } from "@transferops/kit";
import type { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import type { AnalyticsConfig } from "../config.ts";
import { requireAdmin, scopeOf } from "../domain/scope.ts";
import { toKnownAgent, windowOf } from "../flows/mappers.ts";
import type { AnalyticsDeps, ProjectionLag } from "../flows/ports.ts";
import { analyticsReport, unprovenByHandsetReport } from "../flows/report.ts";
import { projectionStatus } from "../flows/status.ts";
import { knownAgents } from "../flows/agents.ts";

export function analyticsHandlers(
  db: Database,
  config: AnalyticsConfig,
  lag: ProjectionLag,
): Partial<ServiceImpl<typeof AnalyticsService>> {
  const deps: AnalyticsDeps = { db, config, lag };
  return {
    async listKnownAgents(req) {
      requireAdmin(req.caller);
      const agents = await knownAgents(deps);
      return { agents: agents.map(toKnownAgent) };
    },
    async getAnalytics(req) {
      const now = new Date();
      const scope = scopeOf(req.caller);
      return { report: await analyticsReport(deps, scope, windowOf(req.window, now), now) };
    },
    async getUnprovenByHandset(req) {
      const now = new Date();
      const scope = scopeOf(req.caller);
      return { report: await unprovenByHandsetReport(deps, scope, windowOf(req.window, now), now) };
    },
    async getProjectionStatus() {
      return { status: await projectionStatus(deps) };
    },
  };
}
