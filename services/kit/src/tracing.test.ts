import { create, toBinary } from "@bufbuild/protobuf";
import { SpanKind, trace } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { serviceClient } from "./client.ts";
import { MemoryBus } from "./bus-memory.ts";
import { runWithContext } from "./context.ts";
import type { Database, EntityManager } from "./db.ts";
import { enqueueEvent, on, startConsumer } from "./events.ts";
import { createLogger } from "./log.ts";
import { served, startGrpcServer, type GrpcServer } from "./server.ts";
import { openSpan, startTracing, stopTracing, traceHeaders, tracingEnabled, tracingRequested } from "./tracing.ts";
import { AlertRaisedSchema } from "./gen/transferops/common/v1/alerts_pb.ts";
import { AnalyticsService } from "./gen/transferops/analytics/v1/analytics_service_pb.ts";

let server: GrpcServer;
const seen: { traceparent: string | null }[] = [];

beforeAll(async () => {
  server = await startGrpcServer({
    name: "tracing-test",
    port: 0,
    log: createLogger("tracing-test", { level: "silent" }),
    services: [
      served(AnalyticsService, {
        listKnownAgents(_req, ctx) {
          seen.push({ traceparent: ctx.requestHeader.get("traceparent") });
          return {};
        },
      }),
    ],
  });
});
afterAll(async () => {
  await stopTracing();
  await server?.close();
});

/** What the gateway does: a call to a service inside a request's correlation id. */
function callAsGateway(correlationId: string) {
  const client = serviceClient(AnalyticsService, server.url);
  return runWithContext({ correlationId }, () => client.listKnownAgents({}));
}

describe("tracing", () => {
  it("is off by default: no provider, no spans, no traceparent on calls or events", async () => {
    expect(tracingRequested({})).toBe(false);
    expect(tracingRequested({ OTEL_EXPORTER_OTLP_ENDPOINT: "http://collector:4318" })).toBe(true);
    expect(tracingRequested({ TRACING: "on" })).toBe(true);
    expect(tracingEnabled()).toBe(false);
    seen.length = 0;
    await callAsGateway("corr-off");
    expect(seen).toEqual([{ traceparent: null }]);
    expect(openSpan("x", SpanKind.CONSUMER, {})).toBeUndefined();
    expect(traceHeaders()).toEqual({});
    expect(Object.keys(await outboxHeaders()).sort()).toEqual([
      "correlation-id",
      "event-id",
      "event-type",
      "occurred-at",
    ]);
  });

  it("on: a gateway-like call yields a client and a server span of one trace carrying the correlation id", async () => {
    const exporter = new InMemorySpanExporter();
    expect(await startTracing("tracing-test", { exporter })).toBe(true);
    seen.length = 0;
    await callAsGateway("corr-on-1");
    expect(seen[0].traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);

    const spans = exporter.getFinishedSpans();
    const client = spans.find((s) => s.kind === SpanKind.CLIENT);
    const serverSpan = spans.find((s) => s.kind === SpanKind.SERVER);
    expect(client?.name).toBe("transferops.analytics.v1.AnalyticsService/ListKnownAgents");
    expect(serverSpan?.name).toBe("tracing-test/ListKnownAgents");
    expect(serverSpan!.spanContext().traceId).toBe(client!.spanContext().traceId);
    expect(serverSpan!.parentSpanContext?.spanId).toBe(client!.spanContext().spanId);
    expect(seen[0].traceparent).toContain(client!.spanContext().spanId);
    expect(client!.attributes.correlation_id).toBe("corr-on-1");
    expect(serverSpan!.attributes.correlation_id).toBe("corr-on-1");
  });

  it("on: the outbox row's headers carry the producer's trace and the consumer's span continues it", async () => {
    const exporter = new InMemorySpanExporter();
    await stopTracing();
    await startTracing("tracing-test", { exporter });
    const producer = openSpan("produce", SpanKind.SERVER, {})!;
    const headers = await producer.run(() => runWithContext({ correlationId: "corr-ev" }, () => outboxHeaders()));
    producer.end();
    expect(headers.traceparent).toContain(exporter.getFinishedSpans()[0].spanContext().spanId);

    const bus = new MemoryBus();
    const consumed = new Promise<string | undefined>((resolve) =>
      startConsumer({
        bus,
        db: {
          schema: "t",
          tx: (fn: (em: EntityManager) => Promise<unknown>) => fn(fakeEm([{}]).em),
        } as unknown as Database,
        group: "tracing-test",
        topics: ["alerts"],
        handlers: [on(AlertRaisedSchema, async () => resolve(trace.getActiveSpan()?.spanContext().traceId))],
        log: createLogger("tracing-test", { level: "silent" }),
      }),
    );
    await bus.publish([
      { topic: "alerts", key: "k", value: toBinary(AlertRaisedSchema, create(AlertRaisedSchema)), headers },
    ]);
    const [p] = exporter.getFinishedSpans();
    expect(await consumed).toBe(p.spanContext().traceId);
    const c = await vi.waitFor(() => {
      const span = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.CONSUMER);
      if (!span) throw new Error("consumer span not ended yet");
      return span;
    });
    expect(c.parentSpanContext?.spanId).toBe(p.spanContext().spanId);
    expect(c.attributes.correlation_id).toBe("corr-ev");
    await bus.close();
  });
});

/** An entity manager that records what is executed and answers `rows`. */
function fakeEm(rows: unknown[]) {
  const params: unknown[][] = [];
  const em = {
    execute: async (_sql: string, p: unknown[]) => {
      params.push(p);
      return rows;
    },
  } as unknown as EntityManager;
  return { em, params };
}

/** The headers enqueueEvent writes into the outbox row. */
async function outboxHeaders(): Promise<Record<string, string>> {
  const { em, params } = fakeEm([]);
  await enqueueEvent(em, "t", {
    topic: "alerts",
    key: "k",
    schema: AlertRaisedSchema,
    message: create(AlertRaisedSchema),
  });
  return JSON.parse(params[0][5] as string) as Record<string, string>;
}
