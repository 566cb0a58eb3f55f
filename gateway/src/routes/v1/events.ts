import type { Request, Response } from "express";
import { correlationIdFrom, MAX_PAGE_LIMIT, runWithContext, type Caller, type Logger } from "@transferops/kit";
import type { Services } from "../../services.ts";
import type { CredentialListener } from "../../http/auth-cache.ts";

// GET /v1/events: live hints for the board, as Server-Sent Events. A hint only says what
// changed (`operation`, `transaction`, `message`, `alert`: an id and a status); the board then
// refetches through the REST routes, which stay the truth. The stream is the caller's own:
// each connection reads the lists its session token may read (the services scope them) and
// sends the differences. So a hint never reveals more than the REST route it points to. It
// reads when something changed: the gateway hears the events behind the hints on the bus
// (http/change-feed.ts, a count, nothing more) and one timer per gateway has every stream
// read again within `pollMs` of a change; an idle stream costs no read (docs/decisions/board.md).
// Each read is counted against the caller's rate limit. A session holds at most
// `maxPerSession` streams; fleet's credential announcements end a stream at once.
//
// Not in the OpenAPI document: it is not a JSON route, and it never ends by itself.

export interface EventStreamOptions {
  /** How often the caller's lists are read (ms). */
  pollMs: number;
  /** How often the credential is checked again, so a revoked or expired session ends its stream (ms). */
  reauthMs: number;
  /** A comment line this often keeps proxies from closing an idle stream (ms). */
  heartbeatMs: number;
  /** Deadline of each read (ms); the stream itself has none. */
  readTimeoutMs: number;
  /** Streams open at once per session; a new one ends the oldest. */
  maxPerSession: number;
  /** With a live change feed, every stream also reads this often, whatever was heard (ms). */
  safetyReadMs: number;
}

export const EVENT_STREAM_DEFAULTS: EventStreamOptions = {
  pollMs: 2000,
  reauthMs: 30_000,
  heartbeatMs: 15_000,
  readTimeoutMs: 5000,
  maxPerSession: 3,
  safetyReadMs: 5 * 60_000,
};

export type HintKind = "operation" | "transaction" | "message" | "alert";
/** What was last seen of each item of one kind: id → a fingerprint of what the board shows. */
type Seen = Map<string, string>;

/** The caller's view, one map per kind, read with the caller's credential. */
async function readView(services: Services, caller: Caller): Promise<Record<HintKind, Seen>> {
  const [ops, unproven, txs, orphans, alerts] = await Promise.all([
    services.dispatch.listOperations({ caller, limit: MAX_PAGE_LIMIT }),
    services.dispatch.listUnproven({ caller, limit: MAX_PAGE_LIMIT, window: { days: 0, from: "", to: "", all: true } }),
    services.intake.listTransactions({ caller, limit: MAX_PAGE_LIMIT }),
    services.evidence.listUnmatchedEvidence({
      caller,
      unmatched: true,
      limit: MAX_PAGE_LIMIT,
      window: { days: 0, from: "", to: "", all: true },
    }),
    // Alerts are an admin's (the notifications routes are admin-only).
    caller.role === "admin" ? services.fleet.listNotifications({ caller, acknowledged: false, limit: 50 }) : undefined,
  ]);
  const operation: Seen = new Map(ops.operations.map((o) => [o.operationId, o.status]));
  // Operations on the caller's SIMs that are not its own reach it through the arbitration queue.
  for (const u of unproven.operations) if (!operation.has(u.operationId)) operation.set(u.operationId, "no_evidence");
  return {
    operation,
    transaction: new Map(
      txs.transactions.map((t) => [
        t.id,
        `${t.state}|${t.paymentConfirmedAt ? 1 : 0}|${t.receiverName}|${t.receiverPhone}`,
      ]),
    ),
    message: new Map(orphans.evidences.map((e) => [e.id, "unmatched"])),
    alert: new Map((alerts?.notifications ?? []).map((n) => [n.notificationId, n.kind])),
  };
}

/** The hints between two views: what appeared or changed (with its status), what left ("gone"). */
export function hintsBetween(
  before: Record<HintKind, Seen>,
  after: Record<HintKind, Seen>,
): { kind: HintKind; id: string; status: string }[] {
  const out: { kind: HintKind; id: string; status: string }[] = [];
  for (const kind of Object.keys(after) as HintKind[]) {
    for (const [id, fingerprint] of after[kind]) {
      if (before[kind].get(id) !== fingerprint) out.push({ kind, id, status: fingerprint.split("|")[0] });
    }
    for (const id of before[kind].keys()) if (!after[kind].has(id)) out.push({ kind, id, status: "gone" });
  }
  return out;
}

/** The caller of a stream and when its session ends (ms since the epoch), if fleet said. */
export interface StreamAuth {
  caller: Caller;
  validUntil?: number;
}

/** Fleet's credential announcements as the gateway hears them (the AuthCache). */
export interface CredentialWatch {
  /** Whether announcements are being heard now. */
  readonly live: boolean;
  onChange(listener: CredentialListener): () => void;
}

export interface EventStreamDeps {
  services: Services;
  log: Logger;
  /** The gateway's own authentication (session tokens only, the refusals of every board route), asked of fleet. */
  authenticate: (res: Response) => Promise<StreamAuth>;
  /** Answers a refusal as JSON ({detail, code, context}) before the stream opens. */
  refuse: (res: Response, err: unknown) => void;
  /** Fleet's announcements: a stream whose session or agent is named ends at once. */
  credentials?: CredentialWatch;
  /** Counts one of the stream's reads against the caller's rate limit: 0 when allowed, else the seconds to wait. */
  charge?: (res: Response) => number;
  /** Changes heard on the bus: while live, streams read only when something changed. */
  changes?: { readonly live: boolean; readonly version: number };
  /** Counts each read of a stream (metrics, tests). */
  onRead?: () => void;
  options?: Partial<EventStreamOptions>;
}

/** Why the gateway ended a stream (the `end` event's reason). */
export type EndReason = "session_ended" | "credentials_changed" | "stream_limit";

/** Whether two answers for one session give the same rights (what the stream reads depends on them). */
const sameRights = (a: Caller, b: Caller) =>
  a.agentId === b.agentId &&
  a.sessionId === b.sessionId &&
  a.role === b.role &&
  a.isActive === b.isActive &&
  a.mustChangePassword === b.mustChangePassword;

const isRefusal = (err: unknown) => {
  const status = (err as { status?: number }).status;
  const code = (err as { code?: unknown }).code;
  return status === 401 || status === 403 || code === 16 /* unauthenticated */ || code === 7; /* permission denied */
};

/** The longest setTimeout (about 24.8 days). */
const MAX_TIMEOUT_MS = 2 ** 31 - 1;

/** The express handler of GET /v1/events. */
export function eventStream(deps: EventStreamDeps) {
  const options = { ...EVENT_STREAM_DEFAULTS, ...deps.options };
  /** The open streams of each session, oldest first: each entry ends its stream. */
  const bySession = new Map<string, ((reason: EndReason) => void)[]>();
  const follow = streamHub(deps, options);
  return async (req: Request, res: Response) => {
    const correlationId = correlationIdFrom(req.header("x-correlation-id"));
    const within = <T>(fn: () => Promise<T>) =>
      runWithContext({ correlationId, deadline: Date.now() + options.readTimeoutMs }, fn);
    let auth: StreamAuth;
    try {
      auth = await within(() => deps.authenticate(res));
    } catch (err) {
      return deps.refuse(res, err);
    }
    openStream(req, res);
    new OpenStream({ deps, options, res, bySession, within, correlationId }, auth.caller).start(
      req,
      auth.validUntil,
      follow,
    );
  };
}

/** Follows a stream: its refresh is called on each beat with whether anything changed; returns the unfollow. */
type Follow = (refresh: (changed: boolean) => void) => () => void;

/**
 * One timer for every stream of this gateway (never one per stream): each `pollMs` it has
 * every stream read again if the change feed moved (or is not live), and every
 * `safetyReadMs` regardless.
 */
function streamHub(deps: EventStreamDeps, options: EventStreamOptions): Follow {
  const streams = new Set<(changed: boolean) => void>();
  let hub: NodeJS.Timeout | undefined;
  let heardVersion = -1;
  let safetyAt = Date.now();
  const beat = () => {
    const now = Date.now();
    const feed = deps.changes;
    const changed = !feed?.live || feed.version !== heardVersion || now - safetyAt >= options.safetyReadMs;
    if (changed) {
      heardVersion = feed?.version ?? -1;
      if (now - safetyAt >= options.safetyReadMs) safetyAt = now;
    }
    // A stream whose last read failed reads again even when nothing changed.
    for (const refresh of streams) refresh(changed);
  };
  return (refresh) => {
    streams.add(refresh);
    if (!hub) {
      hub = setInterval(beat, options.pollMs);
      hub.unref();
    }
    return () => {
      streams.delete(refresh);
      if (streams.size === 0 && hub) {
        clearInterval(hub);
        hub = undefined;
      }
    };
  };
}

/** The 200 and the headers of an event stream, sent at once. */
function openStream(req: Request, res: Response): void {
  res.status(200);
  res.setHeader("Content-Type", "text/event-stream; charset=utf-8");
  res.setHeader("Cache-Control", "no-cache, no-transform");
  // nginx (and ingress-nginx) would otherwise buffer the stream.
  res.setHeader("X-Accel-Buffering", "no");
  res.flushHeaders();
  req.socket.setNoDelay(true);
}

interface StreamContext {
  deps: EventStreamDeps;
  options: EventStreamOptions;
  res: Response;
  bySession: Map<string, ((reason: EndReason) => void)[]>;
  /** Runs `fn` with the request's correlation id and a deadline of its own (one per read). */
  within: <T>(fn: () => Promise<T>) => Promise<T>;
  correlationId: string;
}

/** One open stream: its caller, what it last sent, its timers; ended by the gateway or closed by the client. */
class OpenStream {
  private closed = false;
  private view: Record<HintKind, Seen> | undefined;
  private unfollow: (() => void) | undefined;
  private expiry: NodeJS.Timeout | undefined;
  private stopHearing: (() => void) | undefined;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly sessionKey: string;
  private authenticatedAt = 0;
  private reading = false;
  private stale = true;

  constructor(
    private readonly ctx: StreamContext,
    private caller: Caller,
  ) {
    this.sessionKey = caller.sessionId || caller.agentId;
    this.heartbeat = setInterval(
      () => this.send(`: heartbeat ${new Date().toISOString()}\n\n`),
      ctx.options.heartbeatMs,
    );
  }

  start(req: Request, validUntil: number | undefined, follow: Follow): void {
    const { res, bySession, options } = this.ctx;
    req.on("close", this.close);
    res.on("close", this.close);
    // At most `maxPerSession` streams per session: the oldest ends first.
    const mine = [...(bySession.get(this.sessionKey) ?? []), this.end];
    bySession.set(this.sessionKey, mine);
    while (mine.length > options.maxPerSession) mine.shift()!("stream_limit");
    this.expireAt(validUntil);
    this.authenticatedAt = Date.now();
    this.stopHearing = this.hear();
    if (!this.closed) this.unfollow = follow((changed) => void (changed || this.stale ? this.tick() : undefined));
    void this.tick();
  }

  private send(text: string): void {
    if (!this.closed) this.ctx.res.write(text);
  }

  private readonly close = (): void => {
    if (this.closed) return;
    this.closed = true;
    clearInterval(this.heartbeat);
    this.unfollow?.();
    clearTimeout(this.expiry);
    this.stopHearing?.();
    const { bySession } = this.ctx;
    const open = bySession.get(this.sessionKey);
    const left = open?.filter((e) => e !== this.end) ?? [];
    if (left.length > 0) bySession.set(this.sessionKey, left);
    else bySession.delete(this.sessionKey);
  };

  /** Ends the stream with its reason; the board reconnects (a revoked token then gets 401). */
  private readonly end = (reason: EndReason): void => {
    if (this.closed) return;
    this.send(`event: end\ndata: ${JSON.stringify({ reason })}\n\n`);
    this.close();
    this.ctx.res.end();
  };

  /** The session's own expiry ends the stream at that moment. */
  private expireAt(validUntil: number | undefined): void {
    clearTimeout(this.expiry);
    if (validUntil === undefined || !Number.isFinite(validUntil)) return;
    this.expiry = setTimeout(
      () => this.end("session_ended"),
      Math.min(MAX_TIMEOUT_MS, Math.max(0, validUntil - Date.now())),
    );
    this.expiry.unref();
  }

  /** Asks fleet again: a refusal or other rights end the stream; true when it goes on. */
  private async recheck(): Promise<boolean> {
    try {
      const again = await this.ctx.within(() => this.ctx.deps.authenticate(this.ctx.res));
      this.authenticatedAt = Date.now();
      this.expireAt(again.validUntil);
      if (!sameRights(this.caller, again.caller)) {
        this.end("credentials_changed");
        return false;
      }
      this.caller = again.caller;
      return true;
    } catch (err) {
      if (isRefusal(err)) {
        this.end("session_ended");
        return false;
      }
      throw err;
    }
  }

  /**
   * Fleet's announcements, heard by every gateway: a change naming this session or its
   * agent (sign-out, deactivation, role, grant, password) ends the stream at once; when
   * anything may have changed unheard (the watch is back, or forget-all), fleet is asked.
   */
  private hear(): (() => void) | undefined {
    const { deps, correlationId } = this.ctx;
    return deps.credentials?.onChange((change) => {
      if (this.closed) return;
      if (change.sessionIds.has(this.caller.sessionId) || change.agentIds.has(this.caller.agentId)) {
        this.end("credentials_changed");
      } else if (change.everything) {
        void this.recheck().catch((err: unknown) =>
          deps.log.warn(
            { err, correlation_id: correlationId },
            "event stream recheck failed; the next read tries again",
          ),
        );
      }
    });
  }

  /** Reads the caller's view and sends what changed since the last read (`ready` the first time). */
  private async tick(): Promise<void> {
    if (this.closed || this.reading) return;
    this.reading = true;
    this.stale = true;
    try {
      await this.readAndSend();
    } catch (err) {
      // A session revoked or expired meanwhile ends the stream: the board signs in again.
      if (isRefusal(err)) {
        this.end("session_ended");
        return;
      }
      this.ctx.deps.log.warn({ err, correlation_id: this.ctx.correlationId }, "event stream read failed; trying again");
    } finally {
      this.reading = false;
    }
  }

  private async readAndSend(): Promise<void> {
    const { deps, options, res, within } = this.ctx;
    // Announcements unheard (no watch, or it ended): fleet is asked every `reauthMs`.
    if (!deps.credentials?.live && Date.now() - this.authenticatedAt >= options.reauthMs) {
      if (!(await this.recheck())) return;
    }
    const wait = deps.charge?.(res) ?? 0;
    if (wait !== 0) return;
    deps.onRead?.();
    // Each read has its own deadline; the request's deadline does not bound the stream.
    const caller = this.caller;
    const next = await within(() => readView(deps.services, caller));
    if (this.closed) return;
    if (this.view)
      for (const h of hintsBetween(this.view, next)) this.send(`event: ${h.kind}\ndata: ${JSON.stringify(h)}\n\n`);
    else this.send(`event: ready\ndata: {}\n\n`);
    this.view = next;
    this.stale = false;
  }
}
