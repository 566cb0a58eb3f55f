import type { EventBus } from "./bus.ts";
import { KafkaBus } from "./bus-kafka.ts";
import { MemoryBus } from "./bus-memory.ts";
import { csv } from "./config.ts";
import type { Logger } from "./log.ts";

/** Kafka when brokers are configured; otherwise the in-process bus of the embedded local run. */
export function createBus(
  config: { KAFKA_BROKERS?: string; KAFKA_TOPIC_PREFIX?: string },
  clientId: string,
  log: Logger,
): EventBus {
  const brokers = csv(config.KAFKA_BROKERS);
  if (!brokers.length) {
    log.warn("KAFKA_BROKERS unset: using the in-process event bus (local run only)");
    return new MemoryBus();
  }
  return new KafkaBus({ brokers, clientId, prefix: config.KAFKA_TOPIC_PREFIX, log });
}

export interface Stoppable {
  stop(): Promise<void>;
}

/** How long a component may take to stop after SIGTERM before it exits regardless. */
export const SHUTDOWN_DEADLINE_MS = 8_000;

/**
 * Stops the component on SIGTERM or SIGINT, then exits; a second signal exits at once.
 * Whatever is in flight (calls, jobs, consumers, relays), the process exits within
 * `deadlineMs`: a stop that has not finished by then is logged and abandoned (exit 1),
 * so an orchestrator's 10 s grace period is never exceeded.
 */
export function stopOnSignals(component: Stoppable, log: Logger, deadlineMs = SHUTDOWN_DEADLINE_MS): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    const started = Date.now();
    log.info({ signal }, "shutting down");
    setTimeout(() => {
      log.error({ deadline_ms: deadlineMs }, "shutdown did not finish in time; exiting");
      process.exit(1);
    }, deadlineMs).unref();
    component
      .stop()
      .then(() => {
        log.info({ took_ms: Date.now() - started }, "stopped");
        process.exit(0);
      })
      .catch((err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
}

/**
 * Stops a service's parts together (its server, jobs, consumers and relay), so that no job
 * keeps running while in-flight calls drain, then what they all use (the database).
 */
export async function stopService(parts: (() => Promise<unknown>)[], shared: () => Promise<unknown>): Promise<void> {
  await Promise.allSettled(parts.map((stop) => stop()));
  await shared();
}
