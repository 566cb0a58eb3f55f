import { served, startGrpcServer, type EventBus, type Logger } from "@transferops/kit";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { DispatchConfig } from "./config.ts";

export interface DispatchOptions {
  config: DispatchConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

/** Serves health and reflection only, until the dispatch issue builds the service. */
export async function startDispatch(options: DispatchOptions) {
  const server = await startGrpcServer({
    name: "dispatch",
    port: options.port,
    log: options.log,
    services: [served(DispatchService, {})],
  });
  return { url: server.url, port: server.port, stop: () => server.close() };
}
