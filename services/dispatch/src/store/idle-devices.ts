import pg from "pg";
import { IdleMemory, type EntityManager, type Logger } from "@transferops/kit";

/** PostgreSQL channel announcing that a device was given queued work (payload: its id). */
export const DEVICE_WORK_CHANNEL = "dispatch_device_work";

/**
 * Announces, in the caller's transaction, that a device has queued work: every replica's
 * IdleDevices forgets it when the transaction commits (NOTIFY is delivered on commit).
 */
export async function announceDeviceWork(em: EntityManager, deviceId: string | null): Promise<void> {
  if (deviceId === null) return;
  await em.execute(`select pg_notify(?, ?)`, [DEVICE_WORK_CHANNEL, deviceId]);
}

/** What a watcher hears: work for a device, every device forgotten, or the end of listening. */
export type WorkAnnouncement = { kind: "work"; deviceId: string } | { kind: "reset" } | { kind: "lost" };

/** One batch of a watch: the devices given work since the previous batch, or forget them all. */
export interface WorkBatch {
  deviceIds: string[];
  forgetAll: boolean;
}

/** A watcher further behind than this many announcements is cut off (it must forget everything). */
const MAX_PENDING_ANNOUNCEMENTS = 100_000;

export interface IdleDevicesOptions {
  url: string;
  log: Logger;
  /** A remembered idle device is checked again at least this often (safety net). */
  ttlMs?: number;
  /** Most devices remembered at once. */
  maxEntries?: number;
}

/**
 * Which handsets are known to have nothing to do, so that their polls (the vast
 * majority) are answered without touching the database at all.
 *
 * A device is remembered idle after a poll read found no queued and no running work for
 * it. It is forgotten as soon as work is queued for it: the writer NOTIFYs
 * `dispatch_device_work` in its transaction and every replica LISTENs (the replica that
 * queued the work also forgets it at once, before answering). The memory is live only
 * while the LISTEN connection is (kit `IdleMemory`: a read that overlapped any
 * notification is not remembered, entries expire after `ttlMs`): without it every poll
 * reads the database. The worst case of a notification still in flight is one more empty
 * poll (a few seconds' delay), never lost work: the queue is the table.
 *
 * Watchers (`announcements`, served as the WatchDeviceWork stream) hear every device this
 * replica forgets while it listens, so the gateway can keep the same knowledge one hop
 * earlier; when listening stops, their watch ends and they must forget everything.
 */
export class IdleDevices extends IdleMemory {
  private client?: pg.Client;
  private stopped = false;
  private retry?: NodeJS.Timeout;
  private readonly watchers = new Set<(a: WorkAnnouncement) => void>();
  /** Devices given work since a poll last found their queue empty (see `expectsWork`). */
  private readonly withWork = new Set<string>();

  constructor(private readonly o: IdleDevicesOptions) {
    super(o.ttlMs ?? 60_000, o.maxEntries);
  }

  async start(): Promise<void> {
    this.stopped = false;
    await this.connect().catch((err: unknown) => {
      this.o.log.warn({ err }, "idle-device index: LISTEN failed; every poll reads the database until it reconnects");
      this.scheduleReconnect();
    });
  }

  private async connect(): Promise<void> {
    const client = new pg.Client({ connectionString: this.o.url });
    client.on("notification", (n) => {
      if (n.channel === DEVICE_WORK_CHANNEL && n.payload) this.forget(n.payload);
    });
    const lost = (err?: unknown) => {
      if (this.client !== client) return;
      this.live = false;
      this.announce({ kind: "lost" });
      this.client = undefined;
      client.removeAllListeners("notification");
      void client.end().catch(() => undefined);
      if (!this.stopped) {
        this.o.log.warn({ err }, "idle-device index: LISTEN connection lost; reconnecting");
        this.scheduleReconnect();
      }
    };
    client.on("error", lost);
    client.on("end", () => lost());
    await client.connect();
    this.client = client;
    await client.query(`LISTEN ${DEVICE_WORK_CHANNEL}`);
    this.live = true;
  }

  private scheduleReconnect(): void {
    if (this.stopped || this.retry) return;
    this.retry = setTimeout(() => {
      this.retry = undefined;
      void this.connect().catch(() => this.scheduleReconnect());
    }, 1000);
    this.retry.unref();
  }

  /** This replica queued work for the device: forget it now, before the caller is answered. */
  override forget(deviceId: string | null): void {
    if (deviceId === null) return;
    super.forget(deviceId);
    if (this.withWork.size >= (this.o.maxEntries ?? 200_000)) this.withWork.clear();
    this.withWork.add(deviceId);
    this.announce({ kind: "work", deviceId });
  }

  /**
   * Whether work was announced for the device and no poll has found its queue empty since:
   * its poll then claims in one transaction without the plain read first. Only a hint of
   * which path to take: the claim reads the queue again under its lock.
   */
  expectsWork(deviceId: string): boolean {
    return this.withWork.has(deviceId);
  }

  /** A poll found nothing queued for the device. */
  queueEmpty(deviceId: string): void {
    this.withWork.delete(deviceId);
  }

  /** Forgets every device (e.g. after the reset). */
  override clear(): void {
    super.clear();
    this.announce({ kind: "reset" });
  }

  /**
   * Every announcement from now on, in batches, until `signal` aborts (the generator
   * returns) or this replica stops listening or the watcher falls too far behind (it
   * throws: the watcher must forget everything it knows).
   */
  async *announcements(signal: AbortSignal): AsyncGenerator<WorkBatch> {
    if (!this.live) throw new Error("not listening for work announcements");
    let pending = new Set<string>();
    let forgetAll = false;
    let ended: string | undefined;
    let wake: (() => void) | undefined;
    const watcher = (a: WorkAnnouncement) => {
      if (a.kind === "work") pending.add(a.deviceId);
      else if (a.kind === "reset") {
        forgetAll = true;
        pending.clear();
      } else ended = "stopped listening for work announcements";
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
          const batch = { deviceIds: [...pending], forgetAll };
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

  private announce(a: WorkAnnouncement): void {
    for (const w of this.watchers) w(a);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.live = false;
    this.announce({ kind: "lost" });
    if (this.retry) clearTimeout(this.retry);
    const client = this.client;
    this.client = undefined;
    await client?.end().catch(() => undefined);
  }
}
