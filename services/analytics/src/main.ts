import { createBus, createLogger, stopOnSignals } from "@transferops/kit";
import { startAnalytics } from "./app.ts";
import { loadAnalyticsConfig } from "./config.ts";

const config = loadAnalyticsConfig();
const log = createLogger("analytics", { level: config.env.LOG_LEVEL });
const bus = createBus(config.env, "analytics", log);
const service = await startAnalytics({ config, port: config.env.GRPC_PORT, bus, log });
stopOnSignals({ stop: async () => (await service.stop(), await bus.close()) }, log);
