import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Attributes,
  type Context,
  type TextMapGetter,
  type Tracer,
} from "@opentelemetry/api";
import type { SpanExporter } from "@opentelemetry/sdk-trace-base";

export { SpanKind };

/**
 * OpenTelemetry traces, off unless `OTEL_EXPORTER_OTLP_ENDPOINT` or `TRACING=on` is set.
 * Off, the SDK is never loaded and no provider is registered: every helper below returns
 * before touching the (no-op) API.
 */
let tracer: Tracer | undefined;
let shutdown: (() => Promise<void>) | undefined;

export function tracingRequested(env: NodeJS.ProcessEnv = process.env): boolean {
  return env.TRACING === "on" || Boolean(env.OTEL_EXPORTER_OTLP_ENDPOINT);
}

export function tracingEnabled(): boolean {
  return tracer !== undefined;
}

/**
 * Registers the global tracer provider once per process (later calls are ignored), exporting
 * over OTLP/HTTP to `OTEL_EXPORTER_OTLP_ENDPOINT` (batched), or to the given exporter
 * (synchronously, for tests).
 */
export async function startTracing(
  serviceName: string,
  options: { exporter?: SpanExporter; env?: NodeJS.ProcessEnv } = {},
): Promise<boolean> {
  if (tracer) return true;
  if (!options.exporter && !tracingRequested(options.env)) return false;
  const [{ NodeTracerProvider }, { BatchSpanProcessor, SimpleSpanProcessor }, { resourceFromAttributes }] =
    await Promise.all([
      import("@opentelemetry/sdk-trace-node"),
      import("@opentelemetry/sdk-trace-base"),
      import("@opentelemetry/resources"),
    ]);
  if (tracer) return true;
  const processor = options.exporter
    ? new SimpleSpanProcessor(options.exporter)
    : new BatchSpanProcessor(new (await import("@opentelemetry/exporter-trace-otlp-http")).OTLPTraceExporter());
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ "service.name": serviceName }),
    spanProcessors: [processor],
  });
  provider.register();
  tracer = trace.getTracer("@transferops/kit");
  shutdown = () => provider.shutdown();
  return true;
}

/** Flushes and unregisters the provider (tests, shutdown). */
export async function stopTracing(): Promise<void> {
  const done = shutdown;
  tracer = undefined;
  shutdown = undefined;
  await done?.();
  trace.disable();
  context.disable();
  propagation.disable();
}

const headersGetter: TextMapGetter<Headers> = {
  keys: (h) => [...h.keys()],
  get: (h, key) => h.get(key) ?? undefined,
};

/** A started span and the context it is current in. */
export interface SpanScope {
  run<T>(fn: () => T): T;
  setAttributes(attributes: Attributes): void;
  updateName(name: string): void;
  end(error?: unknown): void;
}

/**
 * Starts a span, a child of the trace in `carrier` (W3C `traceparent`) when given, else of
 * the active span; undefined when tracing is off.
 */
export function openSpan(
  name: string,
  kind: SpanKind,
  attributes: Attributes,
  carrier?: Headers | Record<string, string | string[] | undefined>,
): SpanScope | undefined {
  if (!tracer) return undefined;
  let parent: Context = context.active();
  if (carrier instanceof Headers) parent = propagation.extract(parent, carrier, headersGetter);
  else if (carrier) parent = propagation.extract(parent, carrier);
  const span = tracer.startSpan(name, { kind, attributes }, parent);
  const ctx = trace.setSpan(parent, span);
  return {
    run: (fn) => context.with(ctx, fn),
    setAttributes: (a) => span.setAttributes(a),
    updateName: (n) => span.updateName(n),
    end(error) {
      if (error !== undefined) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: error instanceof Error ? error.message : String(error) });
      }
      span.end();
    },
  };
}

/** The active trace as W3C headers (`traceparent`), empty when tracing is off. */
export function traceHeaders(): Record<string, string> {
  const carrier: Record<string, string> = {};
  if (tracer) propagation.inject(context.active(), carrier);
  return carrier;
}

/** Runs `fn` inside the span (when there is one) and ends it, marking a failure as an error. */
export async function inSpan<T>(span: SpanScope | undefined, fn: () => Promise<T>): Promise<T> {
  if (!span) return fn();
  let error: unknown;
  try {
    return await span.run(fn);
  } catch (err) {
    error = err ?? new Error("failed");
    throw err;
  } finally {
    span.end(error);
  }
}
