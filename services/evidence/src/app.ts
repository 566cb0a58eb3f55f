import { served, startGrpcServer, type EventBus, type Logger } from "@transferops/kit";
import { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { EvidenceConfig } from "./config.ts";

export interface EvidenceOptions {
  config: EvidenceConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

/** Serves health and reflection only, until the evidence issue builds the service. */
export async function startEvidence(options: EvidenceOptions) {
  const server = await startGrpcServer({
    name: "evidence",
    port: options.port,
    log: options.log,
    services: [served(EvidenceService, {})],
  });
  return { url: server.url, port: server.port, stop: () => server.close() };
}
