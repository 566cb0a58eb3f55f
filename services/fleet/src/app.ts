import {
  OutboxRelay,
  openDatabase,
  served,
  startGrpcServer,
  type EventBus,
  type Logger,
} from "@transferops/kit";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { FleetConfig } from "./config.ts";
import { identityHandlers } from "./rpc/identity.ts";
import { migrations } from "./store/migrations/index.ts";

export interface FleetOptions {
  config: FleetConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

export interface RunningService {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/** Wires the fleet service: database, outbox relay, gRPC server. */
export async function startFleet(options: FleetOptions): Promise<RunningService> {
  const { config, log, bus } = options;
  const db = await openDatabase({ url: config.databaseUrl, schema: "fleet", migrations });
  const relay = new OutboxRelay(db, bus, log);
  relay.start();
  const published = () => relay.kick();
  const server = await startGrpcServer({
    name: "fleet",
    port: options.port,
    log,
    services: [served(FleetService, { ...identityHandlers({ db, config, published }) })],
  });
  return {
    url: server.url,
    port: server.port,
    async stop() {
      await server.close();
      await relay.stop();
      await db.close();
    },
  };
}
