/**
 * Answers remembered only while a source of announcements that ends them is heard: handsets
 * known to have nothing to do (`IdleMemory`: dispatch from its reads, forgotten on
 * LISTEN/NOTIFY; the gateway from dispatch's answers, forgotten on its WatchDeviceWork
 * stream) and authenticated credentials (the gateway's AuthCache, forgotten on fleet's
 * WatchCredentials stream).
 *
 * Nothing is known unless the source of announcements is `live`. An answer is remembered
 * only if no announcement arrived since the `mark()` taken before asking (an epoch counter),
 * so a stale answer can never be recorded after the change it missed was announced. Going
 * live or dark forgets everything; an entry expires whatever happens, after a random time
 * between half `ttlMs` and `ttlMs` (answers remembered together are not asked again
 * together), or earlier at the `until` given when it is kept. A `ttlMs` of 0 keeps nothing.
 */
export class LiveMemory<V> {
  private readonly entries = new Map<string, { value: V; until: number }>();
  private epoch = 0;
  private isLive = false;

  constructor(
    private readonly ttlMs: number,
    private readonly maxEntries = 200_000,
  ) {}

  /** Whether announcements are being heard (and answers remembered). */
  get live(): boolean {
    return this.isLive;
  }

  set live(live: boolean) {
    this.isLive = live;
    this.epoch += 1;
    this.entries.clear();
  }

  /** The remembered answer, if any and still valid. */
  recall(key: string, nowMs = Date.now()): V | undefined {
    if (!this.isLive) return undefined;
    const hit = this.entries.get(key);
    if (hit === undefined) return undefined;
    if (hit.until <= nowMs) {
      this.entries.delete(key);
      return undefined;
    }
    return hit.value;
  }

  /** Taken before asking: the answer is remembered only if nothing was announced meanwhile. */
  mark(): number {
    return this.epoch;
  }

  /** Remembers `value` (unless something was announced since `markBeforeAsking`), at most until `untilMs`. */
  keep(key: string, value: V, markBeforeAsking: number, nowMs = Date.now(), untilMs = Infinity): void {
    if (this.ttlMs <= 0 || !this.isLive || this.epoch !== markBeforeAsking) return;
    if (this.entries.size >= this.maxEntries && !this.entries.has(key)) return;
    const until = Math.min(untilMs, nowMs + this.ttlMs - Math.floor((Math.random() * this.ttlMs) / 2));
    if (until > nowMs) this.entries.set(key, { value, until });
  }

  /** A change was announced for `key`: it is forgotten, and no answer in flight is remembered. */
  forget(key: string): void {
    this.epoch += 1;
    this.entries.delete(key);
  }

  /** A change was announced for whatever `matches`: those are forgotten, and no answer in flight is remembered. */
  forgetWhere(matches: (value: V, key: string) => boolean): void {
    this.epoch += 1;
    for (const [key, e] of this.entries) if (matches(e.value, key)) this.entries.delete(key);
  }

  /** Forgets everything. */
  clear(): void {
    this.epoch += 1;
    this.entries.clear();
  }

  get size(): number {
    return this.entries.size;
  }
}

/**
 * Response header of dispatch's ReportOutcome: "1" when the reporting device was left with
 * nothing queued or running, read in the report's transaction, so that the gateway answers the
 * handset's next poll 204 without a call. Metadata, not a field: the response message is the
 * contract's body.
 */
export const DEVICE_IDLE_HEADER = "x-device-idle";

/** Handsets known to have nothing queued or running (see LiveMemory). */
export class IdleMemory extends LiveMemory<true> {
  /** Whether the device is known to have nothing queued or running. */
  isIdle(deviceId: string, nowMs = Date.now()): boolean {
    return this.recall(deviceId, nowMs) === true;
  }

  remember(deviceId: string, markBeforeAsking: number, nowMs = Date.now()): void {
    this.keep(deviceId, true, markBeforeAsking, nowMs);
  }
}
