/**
 * Credentials fleet refused lately (by their digest), refused again without asking for
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

  has(digest: string, now = Date.now()): boolean {
    if (this.until.size === 0) return false;
    const at = this.until.get(digest);
    if (at === undefined) return false;
    if (at > now) return true;
    this.until.delete(digest);
    return false;
  }

  add(digest: string, now = Date.now()): void {
    if (this.ttlMs <= 0) return;
    this.until.delete(digest);
    if (this.until.size >= this.maxEntries) this.until.delete(this.until.keys().next().value!);
    this.until.set(digest, now + this.ttlMs);
  }
}
