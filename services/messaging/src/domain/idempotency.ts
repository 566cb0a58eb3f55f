// Idempotency keys (Stripe's model): the first response to a create is stored with a
// hash of the request; a repeat with the same key and the same request replays it; the
// same key with another request, or on another route, is a conflict.

import { createHash } from "node:crypto";

export const KEY_PATTERN = /^[\x21-\x7e]{1,255}$/;

/** SHA-256 of the route and the request, with object keys sorted so order does not count. */
export function requestHash(operation: string, request: unknown): string {
  return createHash("sha256")
    .update(operation + "\n" + canonical(request))
    .digest("hex");
}

function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => JSON.stringify(k) + ":" + canonical(x)).join(",")}}`;
  }
  return JSON.stringify(v ?? null);
}
