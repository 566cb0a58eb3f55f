import type { DescService } from "@bufbuild/protobuf";
import "./abort-reason.ts";
import { ConnectError, createClient, type Client, type Transport } from "@connectrpc/connect";
import { createGrpcTransport, Http2SessionManager } from "@connectrpc/connect-node";
import { CORRELATION_HEADER, currentContext } from "./context.ts";
import { inSpan, openSpan, SpanKind, traceHeaders } from "./tracing.ts";

/** Default deadline of an outbound call made outside any incoming request. */
const DEFAULT_TIMEOUT_MS = 10_000;

/**
 * Wraps a transport so every call carries the current correlation id and the time
 * left before the incoming request's deadline.
 */
function propagating(inner: Transport): Transport {
  const options = (timeoutMs: number | undefined, header: HeadersInit | undefined) => {
    const ctx = currentContext();
    const headers = new Headers(header);
    if (ctx) headers.set(CORRELATION_HEADER, ctx.correlationId);
    const left = ctx?.deadline ? Math.max(1, ctx.deadline - Date.now()) : undefined;
    return { timeoutMs: timeoutMs ?? left ?? DEFAULT_TIMEOUT_MS, headers };
  };
  return {
    unary(method, signal, timeoutMs, header, input, contextValues) {
      const o = options(timeoutMs, header);
      const span = openSpan(`${method.parent.typeName}/${method.name}`, SpanKind.CLIENT, {
        "rpc.system": "grpc",
        "rpc.service": method.parent.typeName,
        "rpc.method": method.name,
        correlation_id: currentContext()?.correlationId ?? "",
      });
      const send = () => unrefused(() => inner.unary(method, signal, o.timeoutMs, o.headers, input, contextValues));
      if (!span) return send();
      return inSpan(span, () => {
        for (const [k, v] of Object.entries(traceHeaders())) o.headers.set(k, v);
        return send();
      });
    },
    stream(method, signal, timeoutMs, header, input, contextValues) {
      const o = options(timeoutMs, header);
      for (const [k, v] of Object.entries(traceHeaders())) o.headers.set(k, v);
      return inner.stream(method, signal, o.timeoutMs, o.headers, input, contextValues);
    },
  };
}

/** Tries of a call whose stream the server refused. */
const REFUSED_TRIES = 3;

/**
 * A stream the server refused (HTTP/2 REFUSED_STREAM: a replica shutting down refuses the
 * streams that crossed its GOAWAY) was never processed, so sending it again cannot do the
 * work twice; the retry goes out on a new connection (through the service's address, to a
 * replica that serves). Any other failure is the caller's to handle.
 */
async function unrefused<T>(call: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (err) {
      if (attempt >= REFUSED_TRIES || !(err instanceof ConnectError) || !/REFUSED_STREAM/.test(err.message)) throw err;
      await new Promise((resolve) => setTimeout(resolve, 20 * attempt));
    }
  }
}

/** A session's own `error` listener: see SessionManager. */
const ignoreLateError = () => undefined;

/**
 * connect-node's HTTP/2 session manager, with an `error` listener of our own on each session it
 * hands a stream from, kept for the session's life. A peer that restarts (a rolling restart)
 * sends GOAWAY; on a session with no open stream the manager destroys the session with an
 * error that Node raises only once the socket has closed. A call made meanwhile opens a new
 * session and the manager removes its listeners from the old one, so that late error had no
 * listener and ended the process (connect-es issue 1768, open at 2.2.0; seen as evidence-2
 * exiting in the replicas' rolling restart). The manager has already moved to a new session:
 * the old one's late error has nothing left to tell.
 */
export class SessionManager extends Http2SessionManager {
  override async request(...args: Parameters<Http2SessionManager["request"]>) {
    const stream = await super.request(...args);
    const session = stream.session;
    if (session && !session.listeners("error").includes(ignoreLateError)) session.on("error", ignoreLateError);
    return stream;
  }
}

const transports = new Map<string, Transport>();

/**
 * A Connect client over gRPC (HTTP/2) for another service, as the design names it; one
 * transport, so one HTTP/2 session, per address. It accepts no compression: the services talk
 * inside one cluster, where gzipping every answer over 1 KiB (connect-node's default) cost more
 * CPU than the bytes it saved (docs/decisions/dispatch.md, "Cost of one transfer"). The Connect
 * protocol would cost about a third less CPU a call (docs/decisions.md, "Calls between
 * services"): switching is this one transport.
 */
export function serviceClient<S extends DescService>(service: S, baseUrl: string): Client<S> {
  let transport = transports.get(baseUrl);
  if (!transport) {
    transport = propagating(
      createGrpcTransport({ baseUrl, acceptCompression: [], sessionManager: new SessionManager(baseUrl) }),
    );
    transports.set(baseUrl, transport);
  }
  return createClient(service, transport);
}
