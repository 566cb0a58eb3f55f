import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { InMemorySpanExporter } from "@opentelemetry/sdk-trace-base";
import { SpanKind } from "@opentelemetry/api";
import { createLogger, startTracing, stopTracing } from "@transferops/kit";
import { afterAll, beforeAll, expect, it } from "vitest";
import { createGatewayApp } from "./app.ts";
import type { Services } from "./services.ts";

const exporter = new InMemorySpanExporter();
let server: Server;
let url: string;

beforeAll(async () => {
  await startTracing("gateway", { exporter });
  const app = createGatewayApp({
    services: {} as Services,
    log: createLogger("gateway-tracing-test", { level: "silent" }),
    rateLimit: { ratePerS: 100, burst: 100 },
    requestTimeoutMs: 5_000,
  });
  server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
  await stopTracing();
});

it("a gateway request is one server span named by its route, joined to the caller's traceparent", async () => {
  const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
  const res = await fetch(`${url}/v1/openapi.json`, {
    headers: { traceparent: `00-${traceId}-00f067aa0ba902b7-01`, "x-correlation-id": "corr-gw" },
  });
  expect(res.status).toBe(200);
  await res.arrayBuffer();
  const span = await new Promise<ReturnType<InMemorySpanExporter["getFinishedSpans"]>[number]>((resolve, reject) => {
    const started = Date.now();
    const look = () => {
      const found = exporter.getFinishedSpans().find((s) => s.kind === SpanKind.SERVER);
      if (found) resolve(found);
      else if (Date.now() - started > 2_000) reject(new Error("no server span"));
      else setTimeout(look, 10);
    };
    look();
  });
  expect(span.name).toBe("GET /v1/openapi.json");
  expect(span.spanContext().traceId).toBe(traceId);
  expect(span.parentSpanContext?.spanId).toBe("00f067aa0ba902b7");
  expect(span.attributes).toMatchObject({
    "http.route": "/v1/openapi.json",
    "http.response.status_code": 200,
    correlation_id: "corr-gw",
  });
});
