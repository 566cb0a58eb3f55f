import { fromTs, InFlight, LiveMemory, type Caller, type Logger } from "@transferops/kit";
import type { AuthenticateResponse } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import type { Services } from "../services.ts";
import { keepWatching } from "./watch.ts";

export interface AuthCacheOptions {
  /** A remembered answer is asked again at least this often; 0 turns the whole thing off. */
  ttlMs: number;
  log: Logger;
  /** Most credentials remembered at once. */
  maxEntries?: number;
  /** Wait before watching again after the watch ended. */
  retryMs?: number;
  /** The watch is renewed this often (a gRPC call needs a deadline). */
  watchRenewMs?: number;
}

/** What a listener hears of fleet's announcements: the agents and sessions named, or everything. */
export interface CredentialChange {
  agentIds: ReadonlySet<string>;
  sessionIds: ReadonlySet<string>;
  everything: boolean;
}
export type CredentialListener = (change: CredentialChange) => void;

/**
 * Fleet's authentication answers, remembered so that a request, whatever its credential
 * (board session, device token, API key) and route, does not cost an authentication call.
 *
 * Fleet owns the knowledge; this is its mirror one hop earlier, built as IdlePolls is (kit
 * `LiveMemory`). An answer is forgotten when fleet's WatchCredentials stream announces a
 * change that ends it: a session signed out (its id), an agent changed, deactivated, given a
 * new password or a temporary one (every session of the agent: the Caller carries its role,
 * name and state), a device token revoked or replaced, a device renamed or deleted (its id),
 * a production reset or a fleet replica starting (everything: it may hold new API keys).
 * Every fleet replica forwards every change any replica commits (the writes NOTIFY in their
 * transactions, and the replica that wrote waits until it heard its own announcement before
 * answering), so a credential revoked through any gateway is refused by every gateway.
 * The memory is live only while the watch is; an answer is remembered only if no
 * announcement arrived while it was in flight; when the watch ends everything is forgotten
 * and every request asks fleet until it is ready again. A session's answer is never used
 * past the session's expiry (`valid_until`). Each answer is kept a random time between half
 * the TTL and the TTL (a fleet of handsets that signed in together does not re-authenticate
 * together). A TTL of 0 disables the cache.
 */
export class AuthCache extends LiveMemory<Caller> {
  private stopWatching?: () => void;
  private readonly asking = new InFlight<string, AuthenticateResponse>();
  private readonly listeners = new Set<CredentialListener>();

  constructor(private readonly o: AuthCacheOptions) {
    super(o.ttlMs, o.maxEntries ?? 50_000);
  }

  get enabled(): boolean {
    return this.o.ttlMs > 0;
  }

  /** Starts watching fleet's credential changes (and keeps doing so until `stop`). */
  start(fleet: Services["fleet"]): void {
    if (!this.enabled || this.stopWatching) return;
    this.stopWatching = keepWatching({
      memory: this,
      open: (signal, timeoutMs) => fleet.watchCredentials({}, { signal, timeoutMs }),
      apply: (m) => this.changed(m),
      log: this.o.log,
      what: "auth cache",
      retryMs: this.o.retryMs,
      renewMs: this.o.watchRenewMs,
    });
  }

  /**
   * Hears what fleet announces (open event streams: gateway/src/routes/v1/events.ts), after the
   * memory forgot it. `everything`: the watch became ready or fleet said forget-all, so any
   * credential may have changed unheard. Returns what stops hearing.
   */
  onChange(listener: CredentialListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /** Fleet announced these credentials changed: every answer about them is forgotten. */
  changed(m: {
    agentIds: string[];
    sessionIds: string[];
    deviceIds: string[];
    ready?: boolean;
    forgetAll?: boolean;
  }): void {
    if (this.listeners.size > 0) this.tell(m);
    if (m.agentIds.length + m.sessionIds.length + m.deviceIds.length === 0) return;
    const agents = new Set(m.agentIds);
    const sessions = new Set(m.sessionIds);
    const devices = new Set(m.deviceIds);
    this.forgetWhere((c) =>
      c.kind === "device" ? devices.has(c.deviceId) : agents.has(c.agentId) || sessions.has(c.sessionId),
    );
  }

  /**
   * The caller of a credential: remembered, else fleet's answer (remembered if nothing changed
   * meanwhile). While the watch is live, requests for one credential that arrive together share
   * one question to fleet, unless a change was announced after it was asked.
   */
  async authenticate(
    key: string,
    ask: () => Promise<AuthenticateResponse>,
  ): Promise<{ caller: Caller | undefined; cached: boolean }> {
    const hit = this.recall(key);
    if (hit) return { caller: hit, cached: true };
    const mark = this.mark();
    const reply = await (this.live ? this.asking.run(`${mark}:${key}`, ask) : ask());
    if (reply.caller) {
      const now = Date.now();
      this.keep(key, reply.caller, mark, now, fromTs(reply.validUntil)?.getTime() ?? Infinity);
    }
    return { caller: reply.caller, cached: false };
  }

  private tell(m: { agentIds: string[]; sessionIds: string[]; ready?: boolean; forgetAll?: boolean }): void {
    const everything = Boolean(m.ready || m.forgetAll);
    if (!everything && m.agentIds.length + m.sessionIds.length === 0) return;
    const change = { agentIds: new Set(m.agentIds), sessionIds: new Set(m.sessionIds), everything };
    for (const l of this.listeners) l(change);
  }

  stop(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
  }
}
