import { IdleMemory, type Logger } from "@transferops/kit";
import type { GetNextOperationResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { Services } from "../services.ts";

export interface IdlePollsOptions {
  /** A remembered idle device is asked again at least this often; 0 turns the whole thing off. */
  ttlMs: number;
  log: Logger;
  /** Most devices remembered at once. */
  maxEntries?: number;
  /** Wait before watching again after the watch ended. */
  retryMs?: number;
  /** The watch is renewed this often (a gRPC call needs a deadline). */
  watchRenewMs?: number;
}

/**
 * The handsets known to have nothing queued and nothing running, so that their polls
 * (the vast majority of all requests) are answered 204 by the gateway without a call.
 *
 * Dispatch owns the knowledge; this is its mirror one hop earlier. A device is remembered
 * when dispatch answered a poll with `idle`, and forgotten when dispatch's WatchDeviceWork
 * stream announces work for it (every dispatch replica announces the work any replica
 * queues: the writes NOTIFY in their transactions). The memory (kit `IdleMemory`) is live
 * only while the watch is: an answer is remembered only if no announcement arrived while it
 * was in flight; when the watch ends everything is forgotten and every poll is asked until
 * it is ready again. Work queued after dispatch's read is announced after that read, so either
 * the answer is not remembered or it is forgotten when the announcement lands: the worst
 * case is a poll answered 204 while an announcement is in flight, never lost work.
 */
export class IdlePolls extends IdleMemory {
  private stopped = false;
  private abort?: AbortController;
  private retry?: NodeJS.Timeout;

  constructor(private readonly o: IdlePollsOptions) {
    super(o.ttlMs, o.maxEntries);
  }

  get enabled(): boolean {
    return this.o.ttlMs > 0;
  }

  /** Starts watching dispatch's announcements (and keeps doing so until `stop`). */
  start(dispatch: Services["dispatch"]): void {
    if (!this.enabled) return;
    this.stopped = false;
    void this.watch(dispatch);
  }

  private async watch(dispatch: Services["dispatch"]): Promise<void> {
    const abort = new AbortController();
    this.abort = abort;
    try {
      const stream = dispatch.watchDeviceWork(
        {},
        { signal: abort.signal, timeoutMs: this.o.watchRenewMs ?? 10 * 60_000 },
      );
      for await (const m of stream) {
        if (m.ready) this.live = true;
        if (m.forgetAll) this.clear();
        for (const id of m.deviceIds) this.forget(id);
      }
    } catch (err) {
      if (!this.stopped && !abort.signal.aborted) {
        this.o.log.debug(
          { err },
          "idle polls: the watch of dispatch's work ended; every poll is asked until it is back",
        );
      }
    } finally {
      this.live = false;
      if (!this.stopped) {
        this.retry = setTimeout(() => void this.watch(dispatch), this.o.retryMs ?? 1000);
        this.retry.unref();
      }
    }
  }

  /**
   * A handset's poll: nothing when the device is known idle (204 without a call), else
   * dispatch's answer, remembered when it says idle.
   */
  async poll(
    deviceId: string,
    ask: () => Promise<GetNextOperationResponse>,
  ): Promise<GetNextOperationResponse | undefined> {
    if (this.isIdle(deviceId)) return undefined;
    const mark = this.mark();
    const reply = await ask();
    if (!reply.dispatch && reply.idle) this.remember(deviceId, mark);
    return reply;
  }

  stop(): void {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    this.abort?.abort();
    this.live = false;
  }
}
