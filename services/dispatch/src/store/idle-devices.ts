import { Announcements, IdleMemory, type EntityManager, type Logger } from "@transferops/kit";

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

/** One batch of a watch: the devices given work since the previous batch, or forget them all. */
export interface WorkBatch {
  deviceIds: string[];
  forgetAll: boolean;
}

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
  private readonly heard: Announcements;
  /** Devices given work since a poll last found their queue empty (see `expectsWork`). */
  private readonly withWork = new Set<string>();
  private readonly maxWithWork: number;

  constructor(o: IdleDevicesOptions) {
    super(o.ttlMs ?? 60_000, o.maxEntries);
    this.maxWithWork = o.maxEntries ?? 200_000;
    this.heard = new Announcements({
      url: o.url,
      channel: DEVICE_WORK_CHANNEL,
      log: o.log,
      onKey: (deviceId) => {
        super.forget(deviceId);
        this.noteWork(deviceId);
      },
      onReset: () => super.clear(),
      onLive: (live) => (this.live = live),
    });
  }

  start(): Promise<void> {
    return this.heard.start();
  }

  /** This replica queued work for the device: forget it now, before the caller is answered. */
  override forget(deviceId: string | null): void {
    if (deviceId === null) return;
    super.forget(deviceId);
    this.noteWork(deviceId);
    this.heard.key(deviceId);
  }

  private noteWork(deviceId: string): void {
    if (this.withWork.size >= this.maxWithWork) this.withWork.clear();
    this.withWork.add(deviceId);
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
    this.heard.reset();
  }

  /**
   * Every announcement from now on, in batches, until `signal` aborts (the generator
   * returns) or this replica stops listening or the watcher falls too far behind (it
   * throws: the watcher must forget everything it knows).
   */
  async *announcements(signal: AbortSignal): AsyncGenerator<WorkBatch> {
    for await (const b of this.heard.watch(signal)) yield { deviceIds: b.keys, forgetAll: b.forgetAll };
  }

  stop(): Promise<void> {
    return this.heard.stop();
  }
}
