import { createHash } from "node:crypto";
import express, { type NextFunction, type Request, type Response } from "express";
import {
  CORRELATION_HEADER,
  correlationIdFrom,
  openSpan,
  runWithContext,
  SpanKind,
  type Caller,
  type Logger,
  isUuid,
  fromTs,
  eventStreamReads,
} from "@transferops/kit";
import { HttpError, sendError, validationError } from "./http/errors.ts";
import { checkInput } from "./http/input-guard.ts";
import { RateLimiter } from "./http/rate-limit.ts";
import { AuthCache } from "./http/auth-cache.ts";
import { LoginThrottle, type LoginThrottleOptions } from "./http/login-throttle.ts";
import { IdlePolls } from "./http/idle-polls.ts";
import type { Route } from "./http/route.ts";
import { openApiDocument } from "./http/openapi.ts";
import type { Services } from "./services.ts";
import { allRoutes } from "./routes/v1/index.ts";
import { endHttpSpan, httpMetrics } from "./http/metrics.ts";
import { boardRouter } from "./http/board.ts";
import { eventStream, type EventStreamOptions } from "./routes/v1/events.ts";
import { RefusedCredentials } from "./http/refused-credentials.ts";
import { Code, ConnectError } from "@connectrpc/connect";

export interface GatewayOptions {
  services: Services;
  log: Logger;
  rateLimit: { ratePerS: number; burst: number };
  requestTimeoutMs: number;
  /** Fleet's authentication answers, reused while its watch is live (started by the caller); none by default. */
  authCache?: AuthCache;
  /** Failed sign-ins allowed per login and per client address. */
  loginThrottle?: LoginThrottleOptions;
  /** Handsets known idle, answered without a call (started by the caller); none by default. */
  idlePolls?: IdlePolls;
  /** The built board served at /board; gateway/board/dist by default. */
  boardDir?: string;
  /** Timings of the board's live hints (GET /v1/events). */
  eventStream?: Partial<EventStreamOptions>;
  /**
   * The proxies in front of the gateway (addresses or CIDRs, express's `trust proxy` list) whose
   * X-Forwarded-For is believed for the client address; none by default (the socket's address).
   */
  trustedProxies?: string[];
  /** The events behind the board's hints, heard on the bus: streams read only on change while it is live. */
  changes?: { readonly live: boolean; readonly version: number };
  /** How long a credential fleet refused is refused again without asking (ms); 10 s by default. */
  refusedCredentialTtlMs?: number;
}

const DEFAULT_LOGIN_THROTTLE: LoginThrottleOptions = {
  perLogin: { burst: 10, perMinute: 5 },
  perAddress: { burst: 50, perMinute: 30 },
};

interface Credential {
  kind: "api_key" | "bearer";
  secret: string;
  /** SHA-256 of the secret: the rate limiter's and the cache's key, never the secret itself. */
  digest: string;
}

function credentialOf(req: Request): Credential | undefined {
  const apiKey = req.header("x-api-key");
  if (apiKey) return { kind: "api_key", secret: apiKey, digest: digestOf(apiKey) };
  const auth = req.header("authorization");
  const m = auth ? /^Bearer\s+(\S+)\s*$/i.exec(auth) : null;
  return m ? { kind: "bearer", secret: m[1], digest: digestOf(m[1]) } : undefined;
}

function digestOf(secret: string): string {
  return createHash("sha256").update(secret).digest("base64url");
}

/** The express app serving the `/v1` contract over the services. */
export function createGatewayApp(options: GatewayOptions): express.Express {
  const { services, log } = options;
  const limiter = new RateLimiter(options.rateLimit.ratePerS, options.rateLimit.burst);
  const authCache = options.authCache ?? new AuthCache({ ttlMs: 0, log });
  const loginThrottle = loginThrottleOf(options);
  const idlePolls = options.idlePolls ?? new IdlePolls({ ttlMs: 0, log });
  const routes = allRoutes();
  const app = express();
  app.disable("x-powered-by");
  app.set("etag", false);
  app.set("trust proxy", options.trustedProxies?.length ? options.trustedProxies : false);
  app.set("query parser", "simple");
  app.use(httpMetrics());

  app.use(requestContext(options.requestTimeoutMs));

  app.use("/board", boardRouter(options.boardDir));

  // Only a verified caller has a bucket of its own (taken once fleet's answer is known:
  // `authenticate`). A request without a credential, with one fleet refused lately, or to an
  // open route is limited by its client address. An unknown credential spends a token of its
  // address to be asked, given back when fleet verifies it: made-up tokens are limited by
  // address even when sent all at once, agents behind one address are not charged for their
  // own first requests, and a refused credential costs no further call to fleet for
  // `refusedCredentialTtlMs`.
  const refused = new RefusedCredentials(options.refusedCredentialTtlMs ?? 10_000);
  const gate: Gate = { limiter, refused, authCache };
  app.use(admission(gate, log));

  // Routes that take large bodies (imports) parse them first; the 1 MB parser then skips them.
  for (const r of routes) if (r.bodyLimit) app[r.method](r.path, express.json({ limit: r.bodyLimit }));
  app.use(express.json({ limit: "1mb" }));

  // Built once, on first request: building it converts every route's schemas (tens of ms
  // of CPU), which an open route must not cost per call.
  let openapi: string | undefined;
  app.get("/v1/openapi.json", (_req, res) => {
    openapi ??= JSON.stringify(openApiDocument(routes));
    res.type("application/json").send(openapi);
  });

  // The board's live hints: a stream, outside the JSON routes and their deadline (events.ts).
  const streamRoute = { auth: ["session"] } as Route;
  app.get(
    "/v1/events",
    eventStream({
      services,
      log,
      authenticate: async (res) => {
        let validUntil: number | undefined;
        const caller = await authenticate(streamRoute, res, services, gate, false, (v) => (validUntil = v));
        return { caller: caller!, validUntil };
      },
      refuse: (res, err) => sendError(res, err, log),
      credentials: authCache.enabled ? authCache : undefined,
      changes: options.changes,
      onRead: () => eventStreamReads.inc(),
      charge: (res) => limiter.take("c:" + (res.locals.credential as Credential).digest),
      options: options.eventStream,
    }),
  );

  for (const r of routes) app[r.method](r.path, handler(r, services, log, gate, loginThrottle, idlePolls));

  app.use((req, res) => {
    sendError(
      res,
      new HttpError("not_found", `No route ${req.method} ${req.path}`, { reason: "route_not_found" }),
      log,
    );
  });

  // Body parser failures (malformed JSON) and anything a handler let through.
  app.use(lastErrors(log));
  return app;
}

function handler(
  r: Route,
  services: Services,
  log: Logger,
  gate: Gate,
  loginThrottle: LoginThrottle,
  idlePolls: IdlePolls,
) {
  const { authCache } = gate;
  return async (req: Request, res: Response) => {
    try {
      const caller = await authenticate(r, res, services, gate, true);
      const params = req.params as Record<string, string>;
      checkInput({ body: req.body, query: req.query, params });
      for (const name of r.uuidParams ?? []) {
        if (!isUuid(params[name] ?? "")) {
          throw new HttpError("invalid", [{ field: `path.${name}`, message: "must be a UUID" }], {
            context: { [name]: params[name] },
          });
        }
      }
      let body: unknown = undefined;
      if (r.body) {
        const parsed = r.body.safeParse(req.body ?? {});
        if (!parsed.success) throw validationError(parsed.error.issues, "body");
        body = parsed.data;
      }
      let query: unknown = undefined;
      if (r.query) {
        const parsed = r.query.safeParse(req.query ?? {});
        if (!parsed.success) throw validationError(parsed.error.issues, "query");
        query = parsed.data;
      }
      const reply = await r.handle({
        caller,
        body,
        query,
        params,
        services,
        req,
        res,
        loginThrottle,
        idlePolls,
      });
      // Fleet announces the change to every replica; this one forgets before answering.
      if (r.endsCredentials && reply.status < 400) authCache.clear();
      for (const [k, v] of Object.entries(reply.headers ?? {})) res.setHeader(k, v);
      if (reply.json === undefined) res.status(reply.status).end();
      else res.status(reply.status).json(reply.json);
    } catch (err) {
      sendError(res, err, log);
    }
  };
}

/** What limits requests before and after authentication (see the limiter in createGatewayApp). */
interface Gate {
  limiter: RateLimiter;
  refused: RefusedCredentials;
  authCache: AuthCache;
}

const rateLimited = (wait: number) =>
  new HttpError("rate_limited", "Too many requests", {
    reason: "rate_limited",
    context: { retry_after_s: wait },
    headers: { "Retry-After": String(wait) },
  });

/** Fleet's own refusal of a credential (its reason, documented on every 401), given again from memory. */
const credentialsInvalid = () =>
  new HttpError("unauthenticated", "Missing or invalid credentials", { context: { reason: "credentials_invalid" } });

/** The client's address: the socket's, or the one the trusted proxies forwarded (express `trust proxy`). */
const clientAddress = (req: Request) => req.ip ?? req.socket.remoteAddress ?? "unknown";

/**
 * The caller of a request. `reuse`: a remembered answer (AuthCache) may stand in for
 * fleet's; else fleet is asked. A verified caller's request is counted in its own bucket; a
 * credential fleet refuses is remembered as refused and counted against the client address;
 * an open route's request is counted against the client address.
 */
async function authenticate(
  r: Route,
  res: Response,
  services: Services,
  gate: Gate,
  reuse: boolean,
  onValidUntil?: (ms: number | undefined) => void,
): Promise<Caller | undefined> {
  const { limiter, refused, authCache } = gate;
  const address = res.locals.address as string;
  const credential = res.locals.credential as Credential | undefined;
  if (r.auth === "none") {
    // Without a credential the address was counted already, before the route.
    const wait = credential ? limiter.take("ip:" + address) : 0;
    if (wait > 0) throw rateLimited(wait);
    return undefined;
  }
  if (!credential)
    throw new HttpError("unauthenticated", "Missing or invalid credentials", { reason: "credentials_missing" });
  const messagingOnly = r.auth.length === 1 && r.auth[0] === "messaging_key";
  const kind = credential.kind === "bearer" && messagingOnly ? "messaging_key" : credential.kind;
  const cacheKey = `${kind}:${credential.digest}`;
  if (refused.has(cacheKey)) throw credentialsInvalid();
  const ask = async () => {
    try {
      const reply = await services.fleet.authenticate({ credentialKind: kind, secret: credential.secret });
      onValidUntil?.(fromTs(reply.validUntil)?.getTime());
      return reply;
    } catch (err) {
      if (err instanceof ConnectError && err.code === Code.Unauthenticated) {
        refused.add(cacheKey);
        if (!res.locals.addressCharged) limiter.take("ip:" + address);
      }
      throw err;
    }
  };
  const caller = reuse ? (await authCache.authenticate(cacheKey, ask)).caller : (await ask()).caller;
  if (res.locals.addressCharged) limiter.giveBack("ip:" + address);
  res.locals.addressCharged = false;
  const wait = limiter.take("c:" + credential.digest);
  if (wait > 0) throw rateLimited(wait);
  if (!caller || !(r.auth as string[]).includes(caller.kind)) {
    throw new HttpError("forbidden", `This route does not accept a ${caller?.kind ?? "this"} credential`, {
      reason: "credential_not_accepted",
      context: { accepted: r.auth },
    });
  }
  if (caller.kind === "session" && !caller.isActive && !r.allowInactive) {
    throw new HttpError("forbidden", "This agent is inactive", { reason: "agent_inactive" });
  }
  if (caller.kind === "session" && caller.mustChangePassword && !r.allowTemporaryPassword) {
    throw new HttpError("forbidden", "Change the temporary password first", { reason: "password_change_required" });
  }
  return caller;
}

/** A login under attack is reported to fleet, which alerts the admins (once per login per hour). */
function loginThrottleOf(options: GatewayOptions): LoginThrottle {
  const { services, log } = options;
  return new LoginThrottle({
    ...(options.loginThrottle ?? DEFAULT_LOGIN_THROTTLE),
    onAttack: (login) => {
      log.warn({ login }, "sign-ins for a login reached their global ceiling; alerting the admins");
      services.fleet
        .reportSignInAttack({ login }, { timeoutMs: 5000 })
        .catch((err: unknown) => log.warn({ err, login }, "the sign-in attack alert could not be raised"));
    },
  });
}

/** Each request's correlation id (echoed), its server span and its deadline, carried to the handler. */
function requestContext(requestTimeoutMs: number) {
  return (req: Request, res: Response, next: NextFunction) => {
    const correlationId = correlationIdFrom(req.header(CORRELATION_HEADER));
    res.setHeader("X-Correlation-Id", correlationId);
    const span = openSpan(req.method, SpanKind.SERVER, { correlation_id: correlationId }, req.headers);
    if (span) res.on("finish", () => endHttpSpan(span, req, res));
    const carry = () => runWithContext({ correlationId, deadline: Date.now() + requestTimeoutMs }, () => next());
    if (span) span.run(carry);
    else carry();
  };
}

/** The rate limit before any route (see the comment where it is mounted). */
function admission({ limiter, refused, authCache }: Gate, log: GatewayOptions["log"]) {
  return (req: Request, res: Response, next: NextFunction) => {
    const credential = credentialOf(req);
    res.locals.credential = credential;
    const address = clientAddress(req);
    res.locals.address = address;
    let wait = 0;
    // Refusals are remembered per kind asked: a session token refused as a messaging key (on a
    // messaging route) is not refused as the session it is.
    const asItself = credential && `${credential.kind}:${credential.digest}`;
    if (!asItself || refused.has(asItself)) wait = limiter.take("ip:" + address);
    else if (!authCache.recall(asItself)) {
      wait = limiter.take("ip:" + address);
      res.locals.addressCharged = wait === 0;
    }
    if (wait > 0) return sendError(res, rateLimited(wait), log);
    if (asItself && refused.has(asItself)) return sendError(res, credentialsInvalid(), log);
    next();
  };
}

/** The 4xx of the body parsers and the router, and whatever else reached the end of the chain. */
function lastErrors(log: GatewayOptions["log"]) {
  return (err: unknown, _req: Request, res: Response, _next: NextFunction) => {
    const e = err as { type?: string; status?: number };
    if (e?.type === "entity.parse.failed") {
      return sendError(res, new HttpError("bad_request", "Malformed JSON body", { reason: "malformed_json" }), log);
    }
    if (e?.type === "entity.too.large") {
      return sendError(
        res,
        new HttpError("bad_request", "Body too large", { reason: "body_too_large", httpStatus: 413 }),
        log,
      );
    }
    // Any other client fault the parsers or the router found (an unsupported or corrupt
    // Content-Encoding, a charset, a malformed percent-escape in the path): its 4xx.
    const status = e?.status ?? (e as { statusCode?: number })?.statusCode;
    if (typeof status === "number" && status >= 400 && status < 500) {
      const unsupported = e?.type === "encoding.unsupported" || e?.type === "charset.unsupported";
      const [detail, reason] = unsupported
        ? (["Unsupported Content-Encoding or charset", "unsupported_encoding"] as const)
        : (["Malformed request", "malformed_request"] as const);
      return sendError(res, new HttpError("bad_request", detail, { reason, httpStatus: status }), log);
    }
    sendError(res, err, log);
  };
}
