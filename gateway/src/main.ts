import { createLogger, stopOnSignals } from "@transferops/kit";
import { loadGatewayConfig } from "./config.ts";
import { startGateway } from "./server.ts";

const config = loadGatewayConfig();
const log = createLogger("gateway", { level: config.LOG_LEVEL });
const gateway = await startGateway(config, log, process.env.HOST ?? "0.0.0.0");
stopOnSignals(gateway, log);
