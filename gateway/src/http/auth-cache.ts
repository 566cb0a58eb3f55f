import type { Caller } from "@transferops/kit";

/**
 * Short-lived memory of authentication answers, so a handset polling every few seconds, or
 * automation creating in bursts, does not cost an authentication call each time. Kept:
 * device tokens, and the static API keys (automation's and messaging's), which change only
 * with the configuration, whose rotation restarts the gateway (docs/operations.md). Never
 * kept: board sessions, which must die the moment they are revoked. A remembered device
 * answers only an idle poll (a 204 reveals nothing); every route that reveals a PIN or
 * changes something asks fleet again (`Route.cachedDeviceCaller`), so a token revoked
 * through one replica is refused by every replica at once. The replica that serves a board
 * change also forgets everything. A TTL of 0 disables the cache.
 * Each answer is kept a random time between half the TTL and the TTL, so that a fleet of
 * handsets that signed in together does not re-authenticate together every TTL.
 */
export class AuthCache {
  private readonly entries = new Map<string, { caller: Caller; until: number }>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  get(key: string, now = Date.now()): Caller | undefined {
    const hit = this.entries.get(key);
    if (!hit) return undefined;
    if (hit.until <= now) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.caller;
  }

  remember(key: string, caller: Caller, now = Date.now()): void {
    if (this.ttlMs <= 0 || caller.kind === "session") return;
    if (this.entries.size >= this.maxEntries) this.entries.clear();
    this.entries.set(key, { caller, until: now + this.ttlMs - Math.floor((Math.random() * this.ttlMs) / 2) });
  }

  forget(key: string): void {
    this.entries.delete(key);
  }

  clear(): void {
    this.entries.clear();
  }
}
