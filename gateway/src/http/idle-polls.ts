import { DEVICE_IDLE_HEADER, IdleMemory, type Logger } from "@transferops/kit";
import type { GetNextOperationResponse } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import type { Services } from "../services.ts";
import { keepWatching } from "./watch.ts";

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
  private stopWatching?: () => void;

  constructor(private readonly o: IdlePollsOptions) {
    super(o.ttlMs, o.maxEntries);
  }

  get enabled(): boolean {
    return this.o.ttlMs > 0;
  }

  /** Starts watching dispatch's announcements (and keeps doing so until `stop`). */
  start(dispatch: Services["dispatch"]): void {
    if (!this.enabled || this.stopWatching) return;
    this.stopWatching = keepWatching({
      memory: this,
      open: (signal, timeoutMs) => dispatch.watchDeviceWork({}, { signal, timeoutMs }),
      apply: (m) => {
        for (const id of m.deviceIds) this.forget(id);
      },
      log: this.o.log,
      what: "idle polls",
      retryMs: this.o.retryMs,
      renewMs: this.o.watchRenewMs,
    });
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

  /**
   * A handset's outcome report: remembered idle when dispatch says (its `x-device-idle`
   * header) the report left the device nothing queued or running, so the poll that follows
   * is answered 204 without a call.
   */
  async outcome<T>(deviceId: string, report: (onHeader: (h: Headers) => void) => Promise<T>): Promise<T> {
    if (!this.enabled) return report(() => {});
    const mark = this.mark();
    let idle = false;
    const reply = await report((h) => (idle = h.get(DEVICE_IDLE_HEADER) === "1"));
    if (idle) this.remember(deviceId, mark);
    return reply;
  }

  stop(): void {
    this.stopWatching?.();
    this.stopWatching = undefined;
  }
}
