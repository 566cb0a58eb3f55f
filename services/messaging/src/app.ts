import {
  OutboxRelay,
  openDatabase,
  served,
  serviceClient,
  startConsumer,
  startGrpcServer,
  type EventBus,
  type Logger,
} from "@transferops/kit";
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
  const db = await openDatabase({
    log,
    url: config.databaseUrl,
    schema: "messaging",
    migrations,
    poolMax: config.dbPoolMax,
  });
  const relay = new OutboxRelay(db, bus, log);
  relay.start();
  const worker = new ImportWorker({
    db,
    log,
    pollMs: config.importPollMs,
    batchRows: config.importBatchRows,
    leaseS: config.importLeaseS,
    stages: config.lifecycleStages,
    published: () => relay.kick(),
    afterBatch: options.afterImportBatch,
  });
  worker.start();
  const deps: MessagingDeps = {
    db,
    config,
    agents: options.agents ?? fleetAgents(serviceClient(FleetService, config.fleetUrl)),
    published: () => relay.kick(),
    importQueued: () => worker.wake(),
    log,
  };
  const consumer = await startConsumer({
    bus,
    db,
    group: "messaging.operations",
    topics: operationTopics,
    handlers: operationHandlers,
    log,
  });
  const purge = new KeyPurge(db, config.idempotencyRetentionH, log);
  purge.start();
  const server = await startGrpcServer({
    name: "messaging",
    port: options.port,
    log,
    ready: [consumer.joined],
    services: [
      served(MessagingService, {
        ...contactHandlers(deps),
        ...contactListHandlers(deps),
        ...mappingHandlers(deps),
        ...importHandlers(deps),
      }),
    ],
  });
  return {
    url: server.url,
    port: server.port,
    async stop() {
      await server.close();
      await worker.stop();
      await purge.stop();
      await consumer.close();
      await relay.stop();
      await db.close();
    },
  };
}
