import { createBus, createLogger, stopOnSignals } from "@transferops/kit";
import { startFleet } from "./app.ts";
import { loadFleetConfig } from "./config.ts";

const config = loadFleetConfig();
const log = createLogger("fleet", { level: config.env.LOG_LEVEL });
const bus = createBus(config.env, "fleet", log);
const service = await startFleet({ config, port: config.env.GRPC_PORT, bus, log });
stopOnSignals({ stop: async () => (await service.stop(), await bus.close()) }, log);
