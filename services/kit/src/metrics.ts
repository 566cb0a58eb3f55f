import http from "node:http";
import type { AddressInfo } from "node:net";
import client from "prom-client";
import type { Logger } from "./log.ts";

/**
 * Prometheus metrics of the process, served as text on `/metrics` of a port of their own
 * (METRICS_PORT; unset: not served). One registry per process: `npm start` runs every
 * component in one process and its series carry the `service` label that tells them apart.
 * Series names: docs/operations.md ("Metrics").
 */
export const metricsRegistry = new client.Registry();
client.collectDefaultMetrics({ register: metricsRegistry, prefix: "transferops_" });

const registers = [metricsRegistry];
const LATENCY_BUCKETS = [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.15, 0.25, 0.5, 1, 2.5, 5, 10];

/** Every gRPC call a service answered: rate, errors (code other than "ok") and latency. */
export const rpcDuration = new client.Histogram({
  name: "transferops_rpc_duration_seconds",
  help: "gRPC calls served, by service, method and gRPC code",
  labelNames: ["service", "method", "code"] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

/** Every HTTP request the gateway answered, by route pattern (never the raw path). */
export const httpDuration = new client.Histogram({
  name: "transferops_http_request_duration_seconds",
  help: "HTTP requests served by the gateway, by method, route pattern and status",
  labelNames: ["method", "route", "status"] as const,
  buckets: LATENCY_BUCKETS,
  registers,
});

/** From the end of the dial to the SMS that proved it. */
export const proofDelay = new client.Histogram({
  name: "transferops_proof_delay_seconds",
  help: "Delay between an operation's reported dial and the operator SMS that confirmed it",
  labelNames: ["operator", "op_type"] as const,
  buckets: [1, 2, 5, 10, 20, 30, 60, 120, 300, 600, 1800, 3600],
  registers,
});

/** Webhook delivery attempts by result: delivered, retry (failed, will retry), failed (given up). */
/** Reads of the board's event streams (each a few list calls), so their cost shows. */
export const eventStreamReads = new client.Counter({
  name: "transferops_event_stream_reads_total",
  help: "Reads of the caller's lists by the board's event streams",
  registers,
});

export const webhookDeliveries = new client.Counter({
  name: "transferops_webhook_deliveries_total",
  help: "Webhook delivery attempts, by result",
  labelNames: ["result"] as const,
  registers,
});

/** Messages a consumer group still has to read, per partition, after its last batch. */
export const consumerLag = new client.Gauge({
  name: "transferops_consumer_lag",
  help: "Kafka consumer lag (messages) per group, topic and partition, after the last batch",
  labelNames: ["group", "topic", "partition"] as const,
  registers,
});

export const eventsConsumed = new client.Counter({
  name: "transferops_events_consumed_total",
  help: "Events handed to a consumer, by group and topic",
  labelNames: ["group", "topic"] as const,
  registers,
});

type Sample = { labels: Record<string, string>; value: number };

/**
 * A gauge read from somewhere (the database) at scrape time. Sources register under a key
 * (e.g. the service) and leave when they stop; a failing source is skipped, never fatal.
 */
export class ScrapedGauge {
  private readonly sources = new Map<string, () => Promise<Sample[]>>();
  constructor(name: string, help: string, labelNames: string[]) {
    const sources = this.sources;
    new client.Gauge({
      name,
      help,
      labelNames,
      registers,
      async collect() {
        this.reset();
        const results = await Promise.allSettled([...sources.values()].map((read) => read()));
        for (const r of results) {
          if (r.status === "fulfilled") for (const s of r.value) this.set(s.labels, s.value);
        }
      },
    });
  }
  add(key: string, read: () => Promise<Sample[]>): void {
    this.sources.set(key, read);
  }
  remove(key: string): void {
    this.sources.delete(key);
  }
}

/** How long a statement or transaction waited for a connection of its service's pool. */
export const dbPoolWait = new client.Histogram({
  name: "transferops_db_pool_wait_seconds",
  help: "Time a statement or transaction waited for a connection of the service's pool",
  labelNames: ["service"] as const,
  buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
  registers,
});

/** Unpublished outbox rows and the age of the oldest, per service (OutboxRelay registers). */
export const outboxBacklog = new ScrapedGauge(
  "transferops_outbox_backlog",
  "Outbox events not yet published to Kafka, per service",
  ["service"],
);
export const outboxOldestAge = new ScrapedGauge(
  "transferops_outbox_oldest_age_seconds",
  "Age of the oldest unpublished outbox event, per service (0 when none)",
  ["service"],
);
/**
 * Each service's pool at scrape time: connections `in_use` (handed out), `idle`, `max` (its
 * size) and the calls `waiting` for one (the kit's driver registers).
 */
export const dbPoolConnections = new ScrapedGauge(
  "transferops_db_pool_connections",
  "Connections of the service's database pool by state (in_use, idle, max) and calls waiting for one (waiting)",
  ["service", "state"],
);
/** Queued operations per handset (dispatch registers). */
export const queueDepth = new ScrapedGauge(
  "transferops_queue_depth",
  "Operations queued for a handset, per device (devices with an empty queue are left out)",
  ["device_id"],
);

let served: Promise<http.Server | undefined> | undefined;

/**
 * Serves `/metrics` on METRICS_PORT once per process (later calls share the server);
 * nothing when METRICS_PORT is unset or empty. The server never keeps the process alive.
 */
export function serveMetrics(
  log: Logger,
  port = process.env.METRICS_PORT,
  host = process.env.METRICS_HOST ?? "0.0.0.0",
): Promise<http.Server | undefined> {
  if (port === undefined || port.trim() === "") return Promise.resolve(undefined);
  served ??= new Promise((resolve) => {
    const server = http.createServer((req, res) => {
      if (req.method !== "GET" || req.url?.split("?")[0] !== "/metrics") {
        res.writeHead(404).end();
        return;
      }
      metricsRegistry.metrics().then(
        (text) => res.writeHead(200, { "content-type": metricsRegistry.contentType }).end(text),
        (err: unknown) => {
          log.warn({ err }, "metrics collection failed");
          res.writeHead(500).end();
        },
      );
    });
    server.on("error", (err) => {
      log.error({ err, port }, "metrics server failed; no /metrics in this process");
      resolve(undefined);
    });
    server.listen(Number(port), host, () => {
      server.unref();
      log.info({ port: (server.address() as AddressInfo).port }, "metrics on /metrics");
      resolve(server);
    });
  });
  return served;
}
