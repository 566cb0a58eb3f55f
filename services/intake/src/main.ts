import { createBus, createLogger, stopOnSignals } from "@transferops/kit";
import { startIntake } from "./app.ts";
import { loadIntakeConfig } from "./config.ts";

const config = loadIntakeConfig();
const log = createLogger("intake", { level: config.env.LOG_LEVEL });
const bus = createBus(config.env, "intake", log);
const service = await startIntake({ config, port: config.env.GRPC_PORT, bus, log });
stopOnSignals({ stop: async () => (await service.stop(), await bus.close()) }, log);
