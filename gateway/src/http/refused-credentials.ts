/**
 * Credentials fleet refused lately (by the kind they were asked as and their digest: a session
 * token refused as a messaging key is not refused as a session), refused again without asking for
 * `ttlMs`: a made-up token repeated costs one authentication call, not one per request.
 * Tokens are random, so a refused one does not become valid later; an API key added to
 * fleet's configuration is accepted at most `ttlMs` after a refusal. Bounded: past
 * `maxEntries` the oldest are dropped first.
 */
export class RefusedCredentials {
  private readonly until = new Map<string, number>();

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 50_000,
  ) {}

  has(key: string, now = Date.now()): boolean {
    if (this.until.size === 0) return false;
    const at = this.until.get(key);
    if (at === undefined) return false;
    if (at > now) return true;
    this.until.delete(key);
    return false;
  }

  add(key: string, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    this.until.delete(key);
    if (this.until.size >= this.maxEntries) this.until.delete(this.until.keys().next().value!);
    this.until.set(key, now + this.ttlMs);
  }
}
