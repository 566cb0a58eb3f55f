import { createBus, createLogger, stopOnSignals } from "@transferops/kit";
import { startEvidence } from "./app.ts";
import { loadEvidenceConfig } from "./config.ts";

const config = loadEvidenceConfig();
const log = createLogger("evidence", { level: config.env.LOG_LEVEL });
const bus = createBus(config.env, "evidence", log);
const service = await startEvidence({ config, port: config.env.GRPC_PORT, bus, log });
stopOnSignals({ stop: async () => (await service.stop(), await bus.close()) }, log);
