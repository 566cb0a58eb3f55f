import { served, serviceClient, ServiceRuntime, type EventBus, type Logger } from "@transferops/kit";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { IntakeService } from "@transferops/kit/gen/transferops/intake/v1/intake_service_pb";
import type { IntakeConfig } from "./config.ts";
import { operationHandlers, operationTopics } from "./events/operations.ts";
import { LaunchSweep } from "./jobs/launch-sweep.ts";
import { Launcher } from "./flows/launch.ts";
import { grpcPorts, type IntakeDeps, type Ports } from "./flows/ports.ts";
import { launchHandlers } from "./rpc/launch.ts";
import { transactionHandlers } from "./rpc/transactions.ts";
import { migrations } from "./store/migrations/index.ts";
import { dropOneOperationPerTransaction } from "./store/transactions.ts";

export interface IntakeOptions {
  config: IntakeConfig;
  port: number;
  bus: EventBus;
  log: Logger;
  /** Stands in for dispatch and fleet (tests); by default gRPC clients of DISPATCH_URL and FLEET_URL. */
  ports?: Ports;
}

/** Wires intake: database, outbox relay, the operations consumer, the launch sweep, the gRPC server. */
export async function startIntake(options: IntakeOptions) {
  const { config, log, bus } = options;
  const rt = await ServiceRuntime.open({
    name: "intake",
    databaseUrl: config.databaseUrl,
    migrations,
    poolMax: config.dbPoolMax,
    bus,
    log,
  });
  const { db, published } = rt;
  if (config.disabledProtection === "unique_operation") {
    // Test switch: protection (3) off, to show (1) and (2) hold without it.
    await dropOneOperationPerTransaction(db.em());
  }
  const ports =
    options.ports ??
    grpcPorts(serviceClient(DispatchService, config.dispatchUrl), serviceClient(FleetService, config.fleetUrl));
  const deps: IntakeDeps = { db, config, ports, log, published };
  const launcher = new Launcher(deps);
  await rt.consume({ group: "intake.operations", topics: operationTopics, handlers: operationHandlers(ports) });
  const sweep = await rt.run(
    new LaunchSweep({ db, log, launcher, intervalMs: config.sweepIntervalMs, staleMs: config.claimStaleMs }),
  );
  const running = await rt.serve(options.port, [
    served(IntakeService, { ...transactionHandlers(deps), ...launchHandlers(launcher) }),
  ]);
  return {
    ...running,
    /** Runs one launch-sweep pass now (tests and operations tooling). */
    sweep: () => sweep.runOnce(),
  };
}
