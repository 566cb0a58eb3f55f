import { createBus, createLogger, stopOnSignals } from "@transferops/kit";
import { startDispatch } from "./app.ts";
import { loadDispatchConfig } from "./config.ts";

const config = loadDispatchConfig();
const log = createLogger("dispatch", { level: config.env.LOG_LEVEL });
const bus = createBus(config.env, "dispatch", log);
const service = await startDispatch({ config, port: config.env.GRPC_PORT, bus, log });
stopOnSignals({ stop: async () => (await service.stop(), await bus.close()) }, log);
