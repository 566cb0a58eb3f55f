import { served, startGrpcServer, type EventBus, type Logger } from "@transferops/kit";
import { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import type { MessagingConfig } from "./config.ts";

export interface MessagingOptions {
  config: MessagingConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

/** Serves health and reflection only, until the messaging issue builds the service. */
export async function startMessaging(options: MessagingOptions) {
  const server = await startGrpcServer({
    name: "messaging",
    port: options.port,
    log: options.log,
    services: [served(MessagingService, {})],
  });
  return { url: server.url, port: server.port, stop: () => server.close() };
}
