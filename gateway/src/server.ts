import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { csv, KafkaBus, serveMetrics, startTracing, type EventBus, type Logger } from "@transferops/kit";
import { ChangeFeed } from "./http/change-feed.ts";
import { createGatewayApp } from "./app.ts";
import type { GatewayConfig } from "./config.ts";
import { serviceUrlsOf } from "./config.ts";
import { connectServices } from "./services.ts";
import { IdlePolls } from "./http/idle-polls.ts";
import { AuthCache } from "./http/auth-cache.ts";

export interface RunningGateway {
  url: string;
  port: number;
  stop(): Promise<void>;
}

/**
 * Starts the gateway. `bus`: where it hears the events behind the board's hints (the one
 * process of `npm start` shares its own); else Kafka when KAFKA_BROKERS is set; else none,
 * and the event streams read on a timer.
 */
export async function startGateway(
  config: GatewayConfig,
  log: Logger,
  host = "127.0.0.1",
  bus?: EventBus,
): Promise<RunningGateway> {
  await startTracing("gateway");
  const services = connectServices(serviceUrlsOf(config));
  const idlePolls = new IdlePolls({ ttlMs: config.IDLE_POLL_CACHE_TTL_MS, log });
  idlePolls.start(services.dispatch);
  const authCache = new AuthCache({ ttlMs: config.AUTH_CACHE_TTL_MS, log });
  authCache.start(services.fleet);
  const brokers = csv(config.KAFKA_BROKERS);
  const ownBus =
    bus || brokers.length === 0
      ? undefined
      : new KafkaBus({ brokers, clientId: "gateway", prefix: config.KAFKA_TOPIC_PREFIX, log });
  const changes = bus || ownBus ? new ChangeFeed(log) : undefined;
  await changes?.start((bus ?? ownBus)!);
  const app = createGatewayApp({
    services,
    idlePolls,
    log,
    rateLimit: { ratePerS: config.RATE_LIMIT_RPS, burst: config.RATE_LIMIT_BURST },
    requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
    authCache,
    loginThrottle: {
      perLogin: { burst: config.LOGIN_FAILURES_BURST, perMinute: config.LOGIN_FAILURES_PER_MIN },
      perAddress: { burst: config.LOGIN_ADDRESS_FAILURES_BURST, perMinute: config.LOGIN_ADDRESS_FAILURES_PER_MIN },
      perLoginGlobal: { burst: config.LOGIN_GLOBAL_FAILURES_BURST, perMinute: config.LOGIN_GLOBAL_FAILURES_PER_MIN },
    },
    trustedProxies: config.TRUSTED_PROXIES,
    changes,
  });
  // Once stopping, every answer closes its connection (those in flight when the stop came
  // too), so that a client does not send its next request on a connection this gateway is
  // about to close (it reconnects, and the Service in front sends it to another replica).
  let stopping = false;
  const inFlight = new Set<ServerResponse>();
  const server: Server = await new Promise((resolve) => {
    const s = createServer((req, res) => {
      if (stopping) res.setHeader("connection", "close");
      else {
        inFlight.add(res);
        res.once("close", () => inFlight.delete(res));
      }
      app(req, res);
    }).listen({ port: config.PORT, host, backlog: config.LISTEN_BACKLOG }, () => resolve(s));
  });
  server.keepAliveTimeout = 65_000;

  const port = (server.address() as AddressInfo).port;
  log.info({ port }, "gateway listening");
  await serveMetrics(log);
  return {
    url: `http://${host}:${port}`,
    port,
    stop: () =>
      new Promise<void>((resolve) => {
        stopping = true;
        for (const res of inFlight) if (!res.headersSent) res.setHeader("connection", "close");
        idlePolls.stop();
        authCache.stop();
        void changes
          ?.stop()
          .then(() => ownBus?.close())
          .catch(() => undefined);
        server.close(() => resolve());
        server.closeIdleConnections();
        // Requests still in flight get most of the shutdown deadline (8 s) to be answered
        // (a service call past its own deadline answers 503 outcome_unknown), then their
        // connections are cut.
        setTimeout(() => server.closeAllConnections(), 7_000).unref();
      }),
  };
}
