import { served, serviceClient, ServiceRuntime, type EventBus, type Logger } from "@transferops/kit";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { MessagingService } from "@transferops/kit/gen/transferops/messaging/v1/messaging_service_pb";
import type { MessagingConfig } from "./config.ts";
import { operationHandlers, operationTopics } from "./events/operations.ts";
import { ImportWorker } from "./jobs/import-worker.ts";
import { KeyPurge } from "./jobs/key-purge.ts";
import { contactListHandlers } from "./rpc/contact-list.ts";
import { contactHandlers } from "./rpc/contacts.ts";
import { importHandlers } from "./rpc/imports.ts";
import { mappingHandlers } from "./rpc/mappings.ts";
import { type MessagingDeps, fleetAgents, type AgentDirectory } from "./flows/ports.ts";
import { migrations } from "./store/migrations/index.ts";

export interface MessagingOptions {
  config: MessagingConfig;
  port: number;
  bus: EventBus;
  log: Logger;
  /** Stands in for fleet's agents (tests); by default a gRPC client of FLEET_URL. */
  agents?: AgentDirectory;
  /** Called after each committed import batch (tests). */
  afterImportBatch?(importId: string, processed: number): Promise<void>;
}

/** Wires messaging: database, outbox relay, operations consumer, import worker, key purge, gRPC server. */
export async function startMessaging(options: MessagingOptions) {
  const { config, log, bus } = options;
  const rt = await ServiceRuntime.open({
    name: "messaging",
    databaseUrl: config.databaseUrl,
    migrations,
    poolMax: config.dbPoolMax,
    bus,
    log,
  });
  const { db, published } = rt;
  const worker = await rt.run(
    new ImportWorker({
      db,
      log,
      pollMs: config.importPollMs,
      batchRows: config.importBatchRows,
      leaseS: config.importLeaseS,
      stages: config.lifecycleStages,
      published,
      afterBatch: options.afterImportBatch,
    }),
  );
  const deps: MessagingDeps = {
    db,
    config,
    agents: options.agents ?? fleetAgents(serviceClient(FleetService, config.fleetUrl)),
    published,
    importQueued: () => worker.wake(),
    log,
  };
  await rt.consume({ group: "messaging.operations", topics: operationTopics, handlers: operationHandlers });
  await rt.run(new KeyPurge(db, config.idempotencyRetentionH, log));
  return rt.serve(options.port, [
    served(MessagingService, {
      ...contactHandlers(deps),
      ...contactListHandlers(deps),
      ...mappingHandlers(deps),
      ...importHandlers(deps),
    }),
  ]);
}
