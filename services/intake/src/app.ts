import { served, startGrpcServer, type EventBus, type Logger } from "@transferops/kit";
import { IntakeService } from "@transferops/kit/gen/transferops/intake/v1/intake_service_pb";
import type { IntakeConfig } from "./config.ts";

export interface IntakeOptions {
  config: IntakeConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

/** Serves health and reflection only, until the intake issue builds the service. */
export async function startIntake(options: IntakeOptions) {
  const server = await startGrpcServer({
    name: "intake",
    port: options.port,
    log: options.log,
    services: [served(IntakeService, {})],
  });
  return { url: server.url, port: server.port, stop: () => server.close() };
}
