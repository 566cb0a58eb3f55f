import { createBus, createLogger, stopOnSignals } from "@transferops/kit";
import { startMessaging } from "./app.ts";
import { loadMessagingConfig } from "./config.ts";

const config = loadMessagingConfig();
const log = createLogger("messaging", { level: config.env.LOG_LEVEL });
const bus = createBus(config.env, "messaging", log);
const service = await startMessaging({ config, port: config.env.GRPC_PORT, bus, log });
stopOnSignals({ stop: async () => (await service.stop(), await bus.close()) }, log);
