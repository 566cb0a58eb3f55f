import pg from "pg";
import type { Logger } from "./log.ts";

/** One batch of a watch: the keys announced since the previous batch, or forget everything. */
export interface AnnouncementBatch {
  keys: string[];
  forgetAll: boolean;
}

type Announcement = { kind: "key"; key: string } | { kind: "reset" } | { kind: "lost" };

/** A watcher further behind than this many announcements is cut off (it must forget everything). */
const MAX_PENDING_ANNOUNCEMENTS = 100_000;

/** The payload a writer NOTIFYs to make every listener forget everything. */
export const FORGET_ALL = "*";

export interface AnnouncementsOptions {
  url: string;
  /** PostgreSQL channel the writers NOTIFY in their transactions (payload: a key, or `FORGET_ALL`). */
  channel: string;
  log: Logger;
  /** What this replica does on each NOTIFY heard (its own memory), before its watchers hear it. */
  onKey?: (key: string) => void;
  onReset?: () => void;
  /** Listening started (true) or stopped (false). */
  onLive?: (live: boolean) => void;
}

/**
 * One replica's LISTEN on a PostgreSQL channel, handed on to watchers (a server stream such as
 * dispatch's WatchDeviceWork or fleet's WatchCredentials): every key any replica NOTIFYs in a
 * committed transaction reaches every watcher of every replica. `live` only while the LISTEN
 * connection is; when it is lost (or `stop`), every watch ends with an error, so the watcher
 * forgets everything it knows; it reconnects every second until `stop`.
 */
export class Announcements {
  private client?: pg.Client;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  private listening = false;
  private readonly watchers = new Set<(a: Announcement) => void>();
  private readonly waiting = new Map<string, Set<() => void>>();

  constructor(private readonly o: AnnouncementsOptions) {}

  get live(): boolean {
    return this.listening;
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect().catch((err: unknown) => {
      this.o.log.warn({ err, channel: this.o.channel }, "LISTEN failed; reconnecting");
      this.scheduleReconnect();
    });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.url });
    client.on("notification", (n) => {
      if (n.channel !== this.o.channel || !n.payload) return;
      if (n.payload === FORGET_ALL) {
        this.o.onReset?.();
        this.reset();
      } else {
        this.o.onKey?.(n.payload);
        this.key(n.payload);
      }
      this.heard(n.payload);
    });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.setLive(false);
      this.client = undefined;
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      if (!this.stopped) {
        this.o.log.warn({ err, channel: this.o.channel }, "LISTEN connection lost; reconnecting");
        this.scheduleReconnect();
      }
    };
    client.on("error", lost);
    client.on("end", () => lost());
    await client.connect();
    this.client = client;
    await client.query(`LISTEN ${this.o.channel}`);
    this.setLive(true);
  }

  private setLive(live: boolean): void {
    this.listening = live;
    this.o.onLive?.(live);
    if (!live) {
      this.announce({ kind: "lost" });
      for (const key of [...this.waiting.keys()]) this.heard(key);
    }
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect().catch(() => this.scheduleReconnect());
    }, 1000);
    this.retry.unref();
  }

  /** Tells this replica's watchers of `key` now (this replica changed it; its memory is the caller's). */
  key(key: string): void {
    this.announce({ kind: "key", key });
  }

  /** Tells this replica's watchers to forget everything. */
  reset(): void {
    this.announce({ kind: "reset" });
  }

  /**
   * Resolves once this replica's LISTEN heard `payload` (NOTIFYed by a transaction about to
   * commit), at the latest after `timeoutMs` or at once when not listening: a writer awaits it
   * so that its answer leaves after its announcement went out to this replica's watchers.
   */
  hearing(payload: string, timeoutMs = 2000): { heard: Promise<void>; cancel: () => void } {
    if (!this.listening) return { heard: Promise.resolve(), cancel: () => undefined };
    let done!: () => void;
    const heard = new Promise<void>((resolve) => (done = resolve));
    const timer = setTimeout(() => finish(), timeoutMs);
    timer.unref();
    const set = this.waiting.get(payload) ?? new Set();
    this.waiting.set(payload, set);
    const finish = () => {
      clearTimeout(timer);
      set.delete(finish);
      if (set.size === 0 && this.waiting.get(payload) === set) this.waiting.delete(payload);
      done();
    };
    set.add(finish);
    return { heard, cancel: finish };
  }

  private heard(payload: string): void {
    for (const f of [...(this.waiting.get(payload) ?? [])]) f();
  }

  /**
   * Every announcement from now on, in batches, until `signal` aborts (the generator returns)
   * or this replica stops listening or the watcher falls too far behind (it throws: the
   * watcher must forget everything it knows).
   */
  async *watch(signal: AbortSignal): AsyncGenerator<AnnouncementBatch> {
    if (!this.listening) throw new Error(`not listening on ${this.o.channel}`);
    let pending = new Set<string>();
    let forgetAll = false;
    let ended: string | undefined;
    let wake: (() => void) | undefined;
    const watcher = (a: Announcement) => {
      if (a.kind === "key") pending.add(a.key);
      else if (a.kind === "reset") {
        forgetAll = true;
        pending.clear();
      } else ended = `stopped listening on ${this.o.channel}`;
      if (pending.size > MAX_PENDING_ANNOUNCEMENTS) ended = "the watcher fell too far behind";
      wake?.();
    };
    const onAbort = () => wake?.();
    this.watchers.add(watcher);
    signal.addEventListener("abort", onAbort);
    try {
      for (;;) {
        if (signal.aborted) return;
        if (ended) throw new Error(ended);
        if (pending.size > 0 || forgetAll) {
          const batch = { keys: [...pending], forgetAll };
          pending = new Set();
          forgetAll = false;
          yield batch;
          continue;
        }
        await new Promise<void>((resolve) => (wake = resolve));
        wake = undefined;
      }
    } finally {
      this.watchers.delete(watcher);
      signal.removeEventListener("abort", onAbort);
    }
  }

  private announce(a: Announcement): void {
    for (const w of this.watchers) w(a);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    this.setLive(false);
    await client?.end().catch(() => undefined);
  }
}
