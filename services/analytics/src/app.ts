import { openDatabase, served, startGrpcServer, type EventBus, type Logger } from "@transferops/kit";
import { AnalyticsService } from "@transferops/kit/gen/transferops/analytics/v1/analytics_service_pb";
import type { AnalyticsConfig } from "./config.ts";
import { projectionLag, startConsumers } from "./events/index.ts";
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
  const db = await openDatabase({ log, url: config.databaseUrl, schema: "analytics", migrations });
  const consumers = await startConsumers(bus, db, log);
  const server = await startGrpcServer({
    name: "analytics",
    port: options.port,
    log,
    ready: consumers.map((c) => c.joined),
    services: [served(AnalyticsService, analyticsHandlers(db, config, projectionLag(bus)))],
  });
  return {
    url: server.url,
    port: server.port,
    async stop() {
      await server.close();
      await Promise.all(consumers.map((c) => c.close()));
      await db.close();
    },
  };
}
