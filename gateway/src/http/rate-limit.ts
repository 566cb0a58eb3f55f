/**
 * Token bucket per credential (or per client address when none is presented):
 * `ratePerS` tokens a second up to `burst`. A refused request learns when to retry.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();

  constructor(
    private readonly ratePerS: number,
    private readonly burst: number,
    private readonly maxKeys = 100_000,
  ) {}

  /** Returns 0 when allowed, else the seconds to wait. */
  take(key: string, now = Date.now()): number {
    let b = this.buckets.get(key);
    if (!b) {
      if (this.buckets.size >= this.maxKeys) this.evict(now);
      b = { tokens: this.burst, at: now };
      this.buckets.set(key, b);
    }
    b.tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerS);
    b.at = now;
    if (b.tokens >= 1) {
      b.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - b.tokens) / this.ratePerS));
  }

  /** What `take` would answer, without consuming a token. */
  peek(key: string, now = Date.now()): number {
    const b = this.buckets.get(key);
    if (!b) return 0;
    const tokens = Math.min(this.burst, b.tokens + ((now - b.at) / 1000) * this.ratePerS);
    return tokens >= 1 ? 0 : Math.max(1, Math.ceil((1 - tokens) / this.ratePerS));
  }

  /** Gives back a token `take` spent (never above the burst): a charge that turned out undue. */
  giveBack(key: string): void {
    const b = this.buckets.get(key);
    if (b) b.tokens = Math.min(this.burst, b.tokens + 1);
  }

  /** Drops full buckets: they behave exactly like absent ones. */
  private evict(now: number): void {
    for (const [k, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.ratePerS >= this.burst) this.buckets.delete(k);
    }
  }
}
