import {
  served,
  serviceClient,
  ServiceRuntime,
  type EventBus,
  type Logger,
  type RunningService,
} from "@transferops/kit";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { EvidenceService } from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import type { FleetConfig } from "./config.ts";
import { alertHandlers, alertTopics } from "./events/alerts.ts";
import { operationHandlers, operationTopics } from "./events/operations.ts";
import { transactionHandlers, transactionTopics } from "./events/transactions.ts";
import { wordingHandlers, wordingTopics } from "./events/wording.ts";
import { DeviceSilenceMonitor } from "./jobs/device-silence.ts";
import { WebhookWorker } from "./jobs/webhook-delivery.ts";
import { accessHandlers } from "./rpc/access.ts";
import { adminHandlers } from "./rpc/admin.ts";
import type { FleetDeps } from "./flows/ports.ts";
import { deviceAuthenticator } from "./flows/devices.ts";
import { devicesHandlers } from "./rpc/devices.ts";
import { handsetHandlers } from "./rpc/handset.ts";
import { identityHandlers } from "./rpc/identity.ts";
import { internalHandlers } from "./rpc/internal.ts";
import { notificationsHandlers } from "./rpc/notifications.ts";
import { auditHandlers } from "./rpc/audit.ts";
import { simsHandlers } from "./rpc/sims.ts";
import { migrations } from "./store/migrations/index.ts";
import { credentialKey, CredentialChanges } from "./store/credentials.ts";

export interface FleetOptions {
  config: FleetConfig;
  port: number;
  bus: EventBus;
  log: Logger;
}

/**
 * Wires the fleet service: database, outbox relay, consumers of alerts and operation
 * events, the webhook worker, the device silence monitor, and the gRPC server.
 */
export async function startFleet(options: FleetOptions): Promise<RunningService> {
  const { config, log, bus } = options;
  const rt = await ServiceRuntime.open({ name: "fleet", databaseUrl: config.databaseUrl, migrations, bus, log });
  const { db, published } = rt;
  // Every gateway forgets what it remembered: this replica may hold new API keys.
  const credentials = await rt.run(new CredentialChanges(db, config.databaseUrl, log));
  await credentials.change([credentialKey.all], async () => undefined);
  const deps: FleetDeps = {
    db,
    config,
    log,
    published,
    credentials,
    dispatch: serviceClient(DispatchService, config.env.DISPATCH_URL),
    evidence: serviceClient(EvidenceService, config.env.EVIDENCE_URL),
  };
  await rt.consume({
    group: "fleet.events",
    topics: [...alertTopics, ...operationTopics, ...wordingTopics, ...transactionTopics],
    handlers: [...alertHandlers, ...operationHandlers, ...wordingHandlers, ...transactionHandlers],
  });
  await rt.run(new WebhookWorker(db, config.pinKeyring, config.webhooks, log));
  await rt.run(
    new DeviceSilenceMonitor(
      db,
      { silentAfterS: config.deviceSilentAfterS, checkMs: config.deviceSilenceCheckMs },
      published,
      log,
    ),
  );
  return rt.serve(options.port, [
    served(FleetService, {
      ...identityHandlers({ db, config, published, credentials, authenticateDevice: deviceAuthenticator(deps) }),
      ...accessHandlers(deps),
      ...devicesHandlers(deps),
      ...simsHandlers(deps),
      ...adminHandlers(deps),
      ...handsetHandlers(deps),
      ...notificationsHandlers(deps),
      ...auditHandlers(deps),
      ...internalHandlers(deps),
    }),
  ]);
}
