import { z } from "zod";
import { HttpError } from "../../http/errors.ts";
import type { RouteContext } from "../../http/route.ts";

// Shared pieces of the messaging-side routes (contacts, imports, mappings): the page
// envelope, the Idempotency-Key header, and the schema version of the reference.

/** The schema version the messaging-side reference publishes (contract: 0.1.0). */
export const MESSAGING_SCHEMA_VERSION = "0.1.0";

export const PAGE_DEFAULT = 50;
export const PAGE_MAX = 200;

export const pageQuery = {
  cursor: z
    .string()
    .max(64)
    .optional()
    .describe("Opaque cursor from pagination.next_cursor; absent for the first page"),
  limit: z.coerce
    .number()
    .int()
    .min(1)
    .max(PAGE_MAX)
    .optional()
    .describe(`Rows per page, default ${PAGE_DEFAULT}, maximum ${PAGE_MAX}`),
};

export const paginationSchema = z.object({
  next_cursor: z.string().nullable().describe("Cursor of the next page; null on the last page"),
  has_more: z.boolean().describe("Whether another page exists"),
  limit: z.number().int().describe("Limit applied to this page"),
});

export function pageOf<T>(data: T[], nextCursor: string, limit: number | undefined) {
  return {
    data,
    pagination: { next_cursor: nextCursor || null, has_more: Boolean(nextCursor), limit: limit ?? PAGE_DEFAULT },
  };
}

export const IDEMPOTENCY_HEADER = {
  name: "Idempotency-Key",
  required: false,
  description:
    "Client-generated key (1 to 255 printable ASCII characters, e.g. a UUID). The first response is stored with a " +
    "hash of the request for at least 24 hours; a repeat with the same key and body gets it again with the header " +
    "`Idempotent-Replayed: true`; the same key with another body is refused with 409 `idempotency_key_reused`. " +
    "Concurrent requests with one key execute once.",
};

/** The Idempotency-Key of a create, checked for form (a malformed one is 422). */
export function idempotencyKeyOf(ctx: RouteContext<unknown, unknown>): string {
  const key = ctx.req.header("idempotency-key");
  if (key === undefined) return "";
  if (!/^[\x21-\x7e]{1,255}$/.test(key)) {
    throw new HttpError("invalid", [
      { field: "header.Idempotency-Key", message: "1 to 255 printable ASCII characters" },
    ]);
  }
  return key;
}

/** Headers of a create's answer: whether it is a replay of the first one. */
export const replayHeaders = (replayed: boolean): Record<string, string> =>
  replayed ? { "Idempotent-Replayed": "true" } : {};

/** Query booleans. */
export const queryBoolean = () => z.enum(["true", "false"]).transform((v) => v === "true");

/** Text without control characters (NUL included). */
export const cleanText = (max: number) =>
  z
    .string()
    .max(max)
    .regex(/^[^\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]*$/, "must not contain control characters");
