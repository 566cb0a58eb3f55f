import { served, ServiceRuntime, type EventBus, type Logger } from "@transferops/kit";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import type { AnalyticsConfig } from "./config.ts";
import { CONSUMERS, projectionLag } from "./events/index.ts";
import { analyticsHandlers } from "./rpc/analytics.ts";
import { migrations } from "./store/migrations/index.ts";

export interface AnalyticsOptions {
  config: AnalyticsConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

/** Wires analytics: its database, its event consumers, its gRPC server. */
export async function startAnalytics(options: AnalyticsOptions) {
  const { config, log, bus } = options;
  const rt = await ServiceRuntime.open({
    name: "analytics",
    databaseUrl: config.databaseUrl,
    migrations,
    bus,
    log,
    publishes: false,
  });
  // One after the other: each subscription creates its missing topics first.
  for (const c of CONSUMERS) await rt.consume({ batched: true, ...c });
  return rt.serve(options.port, [served(AnalyticsService, analyticsHandlers(rt.db, config, projectionLag(bus)))]);
}
