import {
  baseConfigShape,
  createLogger,
  parseConfig,
  KafkaBus,
  MemoryBus,
  csv,
  type EventBus,
  type Logger,
  type LoggerOptions,
} from "@transferops/kit";
import { startFleet } from "@transferops/fleet";
import { loadFleetConfig } from "@transferops/fleet/config";
import { startAnalytics } from "@transferops/analytics";
import { loadAnalyticsConfig } from "@transferops/analytics/config";
import { startDispatch } from "@transferops/dispatch";
import { loadDispatchConfig } from "@transferops/dispatch/config";
import { startEvidence } from "@transferops/evidence";
import { loadEvidenceConfig } from "@transferops/evidence/config";
import { startIntake } from "@transferops/intake";
import { loadIntakeConfig } from "@transferops/intake/config";
import { startMessaging } from "@transferops/messaging";
import { loadMessagingConfig } from "@transferops/messaging/config";
import { startGateway } from "@transferops/gateway";
import { freePort, isFree } from "./ports.ts";

export { freePort };
import { loadGatewayConfig } from "@transferops/gateway/config";

export interface SystemOptions {
  /** Environment of every component (DATABASE_URL, KAFKA_BROKERS, API_KEYS, ...). */
  env: Record<string, string | undefined>;
  /** 0 picks free ports (tests); otherwise each component's configured port. */
  randomPorts?: boolean;
  /** Where logs go; tests capture them. */
  logDestination?: LoggerOptions["destination"];
}

export interface RunningSystem {
  gatewayUrl: string;
  serviceUrls: Record<string, string>;
  stop(): Promise<void>;
}

/**
 * The gateway and the six services in one process, as `npm start` and the end-to-end
 * tests run them. Each service still talks to the others over gRPC on its own port
 * and owns its own schema. With KAFKA_BROKERS each service has its own Kafka client;
 * without, they share one in-process bus.
 */
export async function startSystem(options: SystemOptions): Promise<RunningSystem> {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await startOnce(options);
    } catch (err) {
      // Random ports: another process took one between the draw and the listen; draw again.
      const taken = (err as NodeJS.ErrnoException)?.code === "EADDRINUSE";
      if (!options.randomPorts || !taken || attempt >= 3) throw err;
    }
  }
}

async function startOnce(options: SystemOptions): Promise<RunningSystem> {
  const env = { ...options.env };
  const level = env.LOG_LEVEL ?? "info";
  const logOf = (name: string): Logger => createLogger(name, { level, destination: options.logDestination });
  const shared = csv(env.KAFKA_BROKERS).length ? undefined : new MemoryBus();
  const buses: EventBus[] = [];
  const busOf = (name: string, log: Logger): EventBus => {
    if (shared) return shared;
    const bus = new KafkaBus({ brokers: csv(env.KAFKA_BROKERS), clientId: name, prefix: env.KAFKA_TOPIC_PREFIX, log });
    buses.push(bus);
    return bus;
  };
  if (options.randomPorts) {
    // Every service learns every address up front, so calls in either direction work.
    for (const name of SERVICES) {
      const p = await freePort();
      env[`${name}_URL`] = `http://127.0.0.1:${p}`;
      env[`${name}_GRPC_PORT`] = String(p);
    }
  } else {
    await moveTakenPorts(env, logOf("system"));
  }
  const port = (name: string, configured: number) => Number(env[`${name.toUpperCase()}_GRPC_PORT`]) || configured;
  const started: { name: string; url: string; stop(): Promise<void> }[] = [];
  const start = async <C extends { env: { GRPC_PORT: number } }>(
    name: string,
    config: C,
    run: (o: {
      config: C;
      port: number;
      bus: EventBus;
      log: Logger;
    }) => Promise<{ url: string; stop(): Promise<void> }>,
  ) => {
    const log = logOf(name);
    const s = await run({ config, port: port(name, config.env.GRPC_PORT), bus: busOf(name, log), log });
    started.push({ name, ...s });
    return s.url;
  };
  try {
    const urls = {
      fleet: await start("fleet", loadFleetConfig(env), startFleet),
      dispatch: await start("dispatch", loadDispatchConfig(env), startDispatch),
      evidence: await start("evidence", loadEvidenceConfig(env), startEvidence),
      intake: await start("intake", loadIntakeConfig(env), startIntake),
      analytics: await start("analytics", loadAnalyticsConfig(env), startAnalytics),
      messaging: await start("messaging", loadMessagingConfig(env), startMessaging),
    };
    const gatewayConfig = loadGatewayConfig({
      ...env,
      ...(options.randomPorts ? { PORT: "0" } : {}),
    });
    const gatewayLog = logOf("gateway");
    const gateway = await startGateway(
      gatewayConfig,
      gatewayLog,
      env.HOST ?? "127.0.0.1",
      busOf("gateway", gatewayLog),
    );
    started.push({ name: "gateway", url: gateway.url, stop: gateway.stop });
    return {
      gatewayUrl: gateway.url,
      serviceUrls: urls,
      stop: () => stopAll(started, buses, shared),
    };
  } catch (err) {
    await stopAll(started, buses, shared);
    throw err;
  }
}

const SERVICES = ["FLEET", "DISPATCH", "EVIDENCE", "INTAKE", "ANALYTICS", "MESSAGING"] as const;

/**
 * `npm start`'s fixed service ports (50051-50056, the services' defaults) lie in Linux's ephemeral
 * range, where another process's outgoing connection can hold one for a while. A service whose
 * default address is taken moves to a free port, said in the log, instead of the start failing on
 * EADDRINUSE; an address the caller set (`<SERVICE>_URL`) is left as it is.
 */
async function moveTakenPorts(env: Record<string, string | undefined>, log: Logger): Promise<void> {
  const defaults = parseConfig(baseConfigShape, {});
  for (const name of SERVICES) {
    if (env[`${name}_URL`]) continue;
    const taken = Number(new URL(defaults[`${name}_URL`]).port);
    if (await isFree(taken)) continue;
    const p = await freePort();
    env[`${name}_URL`] = `http://127.0.0.1:${p}`;
    env[`${name}_GRPC_PORT`] = String(p);
    log.warn(
      { component: name.toLowerCase(), taken, port: p },
      "a service's default port is taken: it listens on another",
    );
  }
}

async function stopAll(started: { stop(): Promise<void> }[], buses: EventBus[], shared?: EventBus): Promise<void> {
  for (const s of [...started].reverse()) await s.stop().catch(() => undefined);
  await Promise.all(buses.map((b) => b.close().catch(() => undefined)));
  await shared?.close();
}
