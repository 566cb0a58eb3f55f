import http2 from "node:http2";
import "./abort-reason.ts";
import type { AddressInfo } from "node:net";
import type { DescService } from "@bufbuild/protobuf";
import { Code, ConnectError, type ConnectRouter, type Interceptor, type ServiceImpl } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { CORRELATION_HEADER, correlationIdFrom, runWithContext } from "./context.ts";
import { isDatabaseUnavailable } from "./db.ts";
import { DomainError, toConnectError } from "./errors.ts";
import { HealthState, registerHealth } from "./health.ts";
import type { Logger } from "./log.ts";
import { rpcDuration, serveMetrics } from "./metrics.ts";
import { DescriptorIndex, registerReflection } from "./reflection.ts";
import { inSpan, openSpan, SpanKind, startTracing } from "./tracing.ts";
import { Health } from "./gen/grpc/health/v1/health_pb.ts";
import * as reflectionV1 from "./gen/grpc/reflection/v1/reflection_pb.ts";
import * as reflectionV1alpha from "./gen/grpc/reflection/v1alpha/reflection_pb.ts";

/** How long a stopping server lets in-flight calls finish before it cancels them. */
const DRAIN_MS = 6_000;

export interface ServedService {
  service: DescService;
  impl: unknown;
}

/** Pairs a service with its handlers, typed against the service's descriptor. */
export function served<S extends DescService>(service: S, impl: Partial<ServiceImpl<S>>): ServedService {
  return { service, impl };
}

export interface GrpcServerOptions {
  name: string;
  port: number;
  host?: string;
  services: ServedService[];
  log: Logger;
  /**
   * What must hold before the server reports SERVING (grpc.health.v1, the readiness probe):
   * its Kafka consumers joined their groups. Calls are answered meanwhile; the schema is
   * current before the server starts at all (`openDatabase` migrates first).
   */
  ready?: Promise<unknown>[];
  /**
   * Asked at each health check once ready (answers shared for a second): false reports
   * NOT_SERVING for now, e.g. a pool that cannot hand out a connection in time.
   */
  probe?: () => Promise<boolean>;
}

export interface GrpcServer {
  port: number;
  url: string;
  health: HealthState;
  close(): Promise<void>;
}

const GRPC_TIMEOUT_UNIT_MS: Record<string, number> = { H: 3_600_000, M: 60_000, S: 1_000, m: 1, u: 0.001, n: 0.000001 };

/** The caller's deadline from `grpc-timeout` (gRPC) or `connect-timeout-ms` (Connect). */
function timeoutOf(header: Headers): number | undefined {
  const grpc = header.get("grpc-timeout");
  const match = grpc ? /^(\d{1,8})([HMSmun])$/.exec(grpc) : null;
  if (match) return Number(match[1]) * GRPC_TIMEOUT_UNIT_MS[match[2]];
  const connect = Number(header.get("connect-timeout-ms"));
  return connect > 0 ? connect : undefined;
}

/** Runs each call inside its correlation id and maps refusals and unknown failures once. */
function callInterceptor(log: Logger, service: string): Interceptor {
  return (next) => async (req) => {
    const observe = rpcDuration.startTimer({ service, method: req.method.name });
    const correlationId = correlationIdFrom(req.header.get(CORRELATION_HEADER));
    const timeoutMs = timeoutOf(req.header);
    const deadline = timeoutMs ? Date.now() + timeoutMs : undefined;
    const span = openSpan(
      `${service}/${req.method.name}`,
      SpanKind.SERVER,
      {
        "rpc.system": req.header.get("content-type")?.startsWith("application/grpc") ? "grpc" : "connect_rpc",
        "rpc.service": req.service.typeName,
        "rpc.method": req.method.name,
        correlation_id: correlationId,
      },
      req.header,
    );
    return runWithContext({ correlationId, deadline }, async () => {
      const started = performance.now();
      try {
        const res = await inSpan(span, () => next(req));
        log.debug({ rpc: req.method.name, ms: Math.round(performance.now() - started) }, "rpc ok");
        observe({ code: "OK" });
        return res;
      } catch (err) {
        const ms = Math.round(performance.now() - started);
        if (err instanceof DomainError) {
          log.debug({ rpc: req.method.name, ms, code: err.code }, "rpc refused");
          const mapped = toConnectError(err);
          observe({ code: Code[mapped.code] });
          throw mapped;
        }
        if (err instanceof ConnectError && err.code !== Code.Unknown && err.code !== Code.Internal) {
          log.debug({ rpc: req.method.name, ms, code: err.code }, "rpc error");
          observe({ code: Code[err.code] });
          throw err;
        }
        if (isDatabaseUnavailable(err)) {
          // No connection slot, a failover, a deadlock: the caller may send the same request
          // again (the gateway answers 503 outcome_unknown with Retry-After), never a 500.
          log.warn({ rpc: req.method.name, ms, err }, "rpc failed: database unavailable for now");
          observe({ code: Code[Code.Unavailable] });
          throw new ConnectError("database unavailable for now; send the same request again", Code.Unavailable);
        }
        log.error({ rpc: req.method.name, ms, err }, "rpc failed");
        observe({ code: Code[Code.Internal] });
        throw new ConnectError("internal error", Code.Internal);
      }
    });
  };
}

/** One h2c port serving gRPC, Connect and gRPC-web, with health and reflection. */
export async function startGrpcServer(options: GrpcServerOptions): Promise<GrpcServer> {
  const { log } = options;
  await startTracing(options.name);
  const served = options.services.map((s) => s.service);
  const health = new HealthState(
    served.map((s) => s.typeName),
    options.probe,
  );
  let closing = false;
  if (options.ready?.length) {
    health.setServing(false);
    const waiting = Date.now();
    void Promise.all(options.ready).then(() => {
      if (closing) return;
      health.setServing(true);
      log.info({ waited_ms: Date.now() - waiting }, `${options.name} ready (consumers joined)`);
    });
  }
  const index = new DescriptorIndex([
    ...served,
    Health,
    reflectionV1.ServerReflection,
    reflectionV1alpha.ServerReflection,
  ]);
  const routes = (router: ConnectRouter) => {
    for (const s of options.services) router.service(s.service, s.impl as ServiceImpl<DescService>);
    registerHealth(router, health);
    registerReflection(router, index);
  };
  const handler = connectNodeAdapter({
    routes,
    interceptors: [callInterceptor(log, options.name)],
    grpcWeb: true,
    connect: true,
  });
  const server = http2.createServer(handler);
  const sessions = new Set<http2.ServerHttp2Session>();
  server.on("session", (s) => {
    sessions.add(s);
    s.on("close", () => sessions.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    // GRPC_HOST: 0.0.0.0 in the container image, so other pods reach the service.
    server.listen(options.port, options.host ?? process.env.GRPC_HOST ?? "127.0.0.1", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  log.info({ port }, `${options.name} serving gRPC on h2c`);
  await serveMetrics(log);
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    health,
    async close() {
      closing = true;
      health.setServing(false);
      await new Promise<void>((resolve) => {
        server.close(() => resolve());
        for (const s of sessions) s.close();
        // In-flight calls get most of the shutdown deadline (runtime.ts, 8 s) to finish; what
        // is still running then is cancelled, and its caller answers "outcome unknown".
        setTimeout(() => {
          for (const s of sessions) s.destroy();
        }, DRAIN_MS).unref();
      });
    },
  };
}
