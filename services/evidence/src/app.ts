import { served, serviceClient, ServiceRuntime, type EventBus, type Logger } from "@transferops/kit";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { EvidenceConfig } from "./config.ts";
import { fleetHandlers, fleetTopics } from "./events/fleet.ts";
import type { DispatchPort, FaultHooks, FleetPort } from "./flows/ports.ts";
import { DayKeeper } from "./flows/day-keeper.ts";
import { Redrive } from "./flows/redrive.ts";
import { Reread } from "./flows/reread.ts";
import { evidenceHandlers } from "./rpc/evidence.ts";
import { migrations } from "./store/migrations/index.ts";

export interface EvidenceOptions {
  config: EvidenceConfig;
  port: number;
  bus: EventBus;
  log: Logger;
  /** Tests stand in for dispatch or fleet, or inject crashes; production uses neither. */
  dispatch?: DispatchPort;
  fleet?: FleetPort;
  hooks?: FaultHooks;
}

export interface RunningEvidence {
  url: string;
  port: number;
  redrive: Redrive;
  reread: Reread;
  dayKeeper: DayKeeper;
  stop(): Promise<void>;
}

/** Wires the evidence service: database, outbox relay, fleet consumer, re-drive, day keeper, gRPC server. */
export async function startEvidence(options: EvidenceOptions): Promise<RunningEvidence> {
  const { config, log, bus } = options;
  const rt = await ServiceRuntime.open({
    name: "evidence",
    databaseUrl: config.databaseUrl,
    migrations,
    poolMax: config.poolMax,
    bus,
    log,
  });
  const deps = {
    db: rt.db,
    log,
    published: rt.published,
    dispatch: options.dispatch ?? serviceClient(DispatchService, config.env.DISPATCH_URL),
    fleet: options.fleet ?? serviceClient(FleetService, config.env.FLEET_URL),
    hooks: options.hooks,
    senders: config.senders,
  };
  await rt.consume({ group: "evidence.fleet", topics: fleetTopics, handlers: fleetHandlers });
  const redrive = await rt.run(new Redrive(deps, config.redrive));
  const reread = await rt.run(
    new Reread(deps, { intervalMs: config.redrive.intervalMs, marginMs: config.redrive.graceMs }),
  );
  const dayKeeper = await rt.run(new DayKeeper(deps, config.dayKeep));
  const running = await rt.serve(options.port, [served(EvidenceService, evidenceHandlers(deps, reread))]);
  return { ...running, redrive, reread, dayKeeper };
}
