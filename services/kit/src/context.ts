import { AsyncLocalStorage } from "node:async_hooks";
import { randomUUID } from "node:crypto";

/** What follows a request across services: its correlation id. */
export interface RequestContext {
  correlationId: string;
  /** Epoch ms by which the caller wants an answer; outbound calls inherit what is left. */
  deadline?: number;
}

const storage = new AsyncLocalStorage<RequestContext>();

export const CORRELATION_HEADER = "x-correlation-id";

export function currentContext(): RequestContext | undefined {
  return storage.getStore();
}

export function runWithContext<T>(ctx: RequestContext, fn: () => T): T {
  return storage.run(ctx, fn);
}

/** Accepts a caller's id when it is sane, otherwise mints one. */
export function correlationIdFrom(value: string | null | undefined): string {
  return value && /^[A-Za-z0-9._:-]{1,128}$/.test(value) ? value : randomUUID();
}
