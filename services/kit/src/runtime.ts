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

/** Stops the component on SIGTERM or SIGINT, then exits; a second signal exits at once. */
export function stopOnSignals(component: Stoppable, log: Logger): void {
  let stopping = false;
  const onSignal = (signal: string) => {
    if (stopping) process.exit(1);
    stopping = true;
    log.info({ signal }, "shutting down");
    component
      .stop()
      .then(() => process.exit(0))
      .catch((err: unknown) => {
        log.error({ err }, "shutdown failed");
        process.exit(1);
      });
  };
  process.on("SIGTERM", () => onSignal("SIGTERM"));
  process.on("SIGINT", () => onSignal("SIGINT"));
}
