import type { LiveMemory, Logger } from "@transferops/kit";

/** What every announcement stream says besides its own news. */
export interface WatchMessage {
  /** The first message: from now on every change is announced. */
  ready: boolean;
  /** Forget everything. */
  forgetAll: boolean;
}

export interface WatchOptions<M extends WatchMessage> {
  /** The memory the stream keeps true: live from `ready`, forgotten when the stream ends. */
  memory: LiveMemory<unknown>;
  /** Opens the service's announcement stream. */
  open(signal: AbortSignal, timeoutMs: number): AsyncIterable<M>;
  /** What a message's own news makes the memory forget. */
  apply(m: M): void;
  log: Logger;
  /** Named in the log when the watch ends. */
  what: string;
  /** Wait before watching again after the watch ended. */
  retryMs?: number;
  /** The watch is renewed this often (a gRPC call needs a deadline). */
  renewMs?: number;
}

/**
 * Keeps a service's announcement stream open (renewed, reopened a `retryMs` after it ends)
 * and the memory it feeds live only while it is: `ready` makes it live, the end of the stream
 * (the service stopped listening, a replica stopped, the connection broke) forgets everything
 * until the next `ready`. Returns what stops it.
 */
export function keepWatching<M extends WatchMessage>(o: WatchOptions<M>): () => void {
  let stopped = false;
  let abort: AbortController | undefined;
  let retry: NodeJS.Timeout | undefined;
  const watch = async () => {
    const current = new AbortController();
    abort = current;
    try {
      for await (const m of o.open(current.signal, o.renewMs ?? 10 * 60_000)) {
        if (m.ready) o.memory.live = true;
        if (m.forgetAll) o.memory.clear();
        o.apply(m);
      }
    } catch (err) {
      if (!stopped && !current.signal.aborted) {
        o.log.debug({ err }, `${o.what}: the watch ended; every request is asked until it is back`);
      }
    } finally {
      o.memory.live = false;
      if (!stopped) {
        retry = setTimeout(() => void watch(), o.retryMs ?? 1000);
        retry.unref();
      }
    }
  };
  void watch();
  return () => {
    stopped = true;
    if (retry) clearTimeout(retry);
    abort?.abort();
    o.memory.live = false;
  };
}
