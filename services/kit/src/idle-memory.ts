/**
 * Handsets known to have nothing to do, as dispatch keeps them (from its reads, forgotten on
 * LISTEN/NOTIFY) and the gateway mirrors them (from dispatch's answers, forgotten on its
 * WatchDeviceWork stream).
 *
 * Nothing is known unless the source of announcements is `live`. An answer is remembered
 * only if no announcement arrived since the `mark()` taken before asking (an epoch counter),
 * so a stale "idle" can never be recorded after the work it missed was announced. Going
 * live or dark forgets everything; an entry expires whatever happens, after a random time
 * between half `ttlMs` and `ttlMs` (handsets remembered together are not asked again together).
 */
export class IdleMemory {
  private readonly idle = new Map<string, number>();
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
    this.idle.clear();
  }

  /** Whether the device is known to have nothing queued or running. */
  isIdle(deviceId: string, nowMs = Date.now()): boolean {
    if (!this.isLive) return false;
    const at = this.idle.get(deviceId);
    if (at === undefined) return false;
    if (nowMs - at > this.ttlMs) {
      this.idle.delete(deviceId);
      return false;
    }
    return true;
  }

  /** Taken before asking: the answer is remembered only if nothing was announced meanwhile. */
  mark(): number {
    return this.epoch;
  }

  remember(deviceId: string, markBeforeAsking: number, nowMs = Date.now()): void {
    if (!this.isLive || this.epoch !== markBeforeAsking || this.idle.size >= this.maxEntries) return;
    this.idle.set(deviceId, nowMs - Math.floor((Math.random() * this.ttlMs) / 2));
  }

  /** Work was announced for the device. */
  forget(deviceId: string): void {
    this.epoch += 1;
    this.idle.delete(deviceId);
  }

  /** Forgets every device. */
  clear(): void {
    this.epoch += 1;
    this.idle.clear();
  }

  get size(): number {
    return this.idle.size;
  }
}
