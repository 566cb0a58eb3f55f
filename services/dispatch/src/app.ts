import { served, serviceClient, ServiceRuntime, type EventBus, type Logger } from "@transferops/kit";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { DispatchConfig } from "./config.ts";
import type { UssdMenus } from "./domain/index.ts";
import { fleetHandlers, fleetTopics } from "./flows/fleet-changes.ts";
import { countSimHistories } from "./flows/fleet-facing.ts";
import { EvidenceSweep } from "./jobs/evidence-sweep.ts";
import { type DispatchDeps, fleetPort, type FleetPort } from "./flows/ports.ts";
import { fleetFacingHandlers } from "./rpc/fleet-facing.ts";
import { handsetHandlers } from "./rpc/handset.ts";
import { matchingHandlers } from "./rpc/matching.ts";
import { operationHandlers } from "./rpc/operations.ts";
import { proofHandlers } from "./rpc/proof.ts";
import { queueHandlers } from "./rpc/queues.ts";
import { migrations } from "./store/migrations/index.ts";
import { IdleDevices } from "./store/idle-devices.ts";
import { registerQueueMetrics } from "./store/metrics.ts";

export interface DispatchOptions {
  config: DispatchConfig;
  port: number;
  bus: EventBus;
  log: Logger;
  /** Stands in for fleet (tests); by default a gRPC client of FLEET_URL. */
  fleet?: FleetPort;
  /** The clock (tests); by default the system clock. */
  now?: () => Date;
  /** USSD menu templates; by default domain/ussd-menus.json. */
  menus?: UssdMenus;
}

export interface RunningDispatch {
  url: string;
  port: number;
  /** Runs one evidence-sweep pass now (tests and operations tooling). */
  sweep(): Promise<number>;
  stop(): Promise<void>;
}

/** Wires the dispatch service: database, outbox relay, fleet consumer, evidence sweep, gRPC server. */
export async function startDispatch(options: DispatchOptions): Promise<RunningDispatch> {
  const { config, log, bus } = options;
  const rt = await ServiceRuntime.open({
    name: "dispatch",
    databaseUrl: config.databaseUrl,
    migrations,
    poolMax: config.dbPoolMax,
    bus,
    log,
  });
  const { db, published } = rt;
  await countSimHistories({ db, log });
  const queueMetrics = registerQueueMetrics(db);
  rt.stopsWith(() => queueMetrics.stop());
  const now = options.now ?? (() => new Date());
  const idle = new IdleDevices({ url: config.databaseUrl, log, ttlMs: config.idleDeviceTtlMs });
  if (config.idleDeviceTtlMs > 0) await idle.start();
  rt.stopsWith(() => idle.stop());
  const deps: DispatchDeps = {
    db,
    config,
    fleet: options.fleet ?? fleetPort(serviceClient(FleetService, config.fleetUrl)),
    published,
    log,
    now,
    menus: options.menus,
    idle,
  };
  await rt.consume({ group: "dispatch.fleet", topics: fleetTopics, handlers: fleetHandlers(now, idle) });
  const sweep = await rt.run(
    new EvidenceSweep({
      db,
      log,
      intervalMs: config.sweepIntervalMs,
      batch: config.sweepBatch,
      runningTimeoutS: config.runningTimeoutS,
      now,
      published,
    }),
  );
  const running = await rt.serve(options.port, [
    served(DispatchService, {
      ...operationHandlers(deps),
      ...matchingHandlers(deps),
      ...queueHandlers(deps),
      ...handsetHandlers(deps),
      ...proofHandlers(deps),
      ...fleetFacingHandlers(deps),
    }),
  ]);
  return { ...running, sweep: () => sweep.runOnce() };
}
