import { SpanKind } from "@opentelemetry/api";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "./client.ts";
import { runWithContext } from "./context.ts";
import { createLogger } from "./log.ts";
import { served, startGrpcServer, type GrpcServer } from "./server.ts";
import { openSpan, startTracing, stopTracing, traceHeaders, tracingEnabled, tracingRequested } from "./tracing.ts";
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

  it("on: an event's headers carry the producer's trace and the consumer's span continues it", async () => {
    const exporter = new InMemorySpanExporter();
    await stopTracing();
    await startTracing("tracing-test", { exporter });
    const producer = openSpan("produce", SpanKind.INTERNAL, {})!;
    const headers: Record<string, string> = producer.run(() => ({ "event-id": "e1", ...traceHeaders() }));
    producer.end();
    expect(headers.traceparent).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    const consumer = openSpan("consume", SpanKind.CONSUMER, { correlation_id: "corr-ev" }, headers)!;
    consumer.end();
    const [p, c] = exporter.getFinishedSpans();
    expect(c.spanContext().traceId).toBe(p.spanContext().traceId);
    expect(c.parentSpanContext?.spanId).toBe(p.spanContext().spanId);
  });
});
