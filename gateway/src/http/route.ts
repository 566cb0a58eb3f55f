import type { Request, Response } from "express";
import { z } from "zod";
import { MAX_PAGE_LIMIT, type Caller } from "@transferops/kit";
import type { Services } from "../services.ts";
import type { LoginThrottle } from "./login-throttle.ts";
import type { IdlePolls } from "./idle-polls.ts";

/** Who may call a route, as fleet authenticated the credential. */
export type CallerKind = "api_key" | "session" | "device" | "messaging_key";

export interface RouteContext<B, Q> {
  caller: Caller | undefined;
  body: B;
  query: Q;
  params: Record<string, string>;
  services: Services;
  req: Request;
  res: Response;
  loginThrottle: LoginThrottle;
  idlePolls: IdlePolls;
}

export interface Reply {
  status: number;
  json?: unknown;
  headers?: Record<string, string>;
}

/**
 * A documented response. 2xx responses carry the `schema` of their body (zod, published
 * as JSON Schema) and an `example`; error responses list the `reasons` (stable
 * `context.reason` values) the route can give with that status.
 */
export interface ResponseDoc {
  description: string;
  schema?: z.ZodType;
  example?: unknown;
  reasons?: readonly string[];
}

export interface Route<B = unknown, Q = unknown> {
  operationId: string;
  method: "get" | "post" | "patch" | "put" | "delete";
  /** Express path, e.g. `/v1/agents/:agent_id`. */
  path: string;
  tag: string;
  summary: string;
  /** Longer text for the OpenAPI document: rules, scope, what the contract leaves open and how it was decided. */
  description?: string;
  /** `none` for routes with their own credential (login, bootstrap) or none at all. */
  auth: "none" | CallerKind[];
  /** Inactive agents are refused (403) on board routes unless the route names itself open to them. */
  allowInactive?: boolean;
  /**
   * A session opened with a temporary password is refused (403 password_change_required)
   * everywhere except on routes that name themselves open to it.
   */
  allowTemporaryPassword?: boolean;
  /**
   * The route ends credentials (sign-out, password, agent changes, device tokens, reset):
   * on success this replica forgets every remembered caller before answering, without
   * waiting for fleet's announcement, which ends them on every other replica.
   */
  endsCredentials?: boolean;
  /** Path parameters typed UUID: a malformed one is 422. */
  uuidParams?: string[];
  body?: z.ZodType<B>;
  /** Largest JSON body this route takes (express size, e.g. "60mb"); default 1mb. */
  bodyLimit?: string;
  query?: z.ZodType<Q>;
  /** Example request body for the OpenAPI document. */
  requestExample?: unknown;
  /** Documented responses: status → description, or the full ResponseDoc. */
  responses: Record<number, string | ResponseDoc>;
  /** Extra request headers to document, e.g. X-Bootstrap-Token. */
  headers?: { name: string; description: string; required: boolean }[];
  handle(ctx: RouteContext<B, Q>): Promise<Reply>;
}

/** Declares a route with its types inferred from its schemas. */
export function route<B = undefined, Q = undefined>(r: Route<B, Q>): Route<unknown, unknown> {
  return r as unknown as Route<unknown, unknown>;
}

export const ok = (json: unknown): Reply => ({ status: 200, json });
export const created = (json: unknown): Reply => ({ status: 201, json });
export const noContent = (): Reply => ({ status: 204 });

/** Common field schemas. */
export const text = (max: number) => z.string().min(1).max(max);
export const uuid = () => z.string().uuid();
/** Query booleans arrive as strings. */
export const queryBool = () => z.enum(["true", "false", "1", "0"]).transform((v) => v === "true" || v === "1");
/** A protobuf int32 field: a larger integer would fail serialisation as a 500. */
export const int32 = () => z.number().int().min(-2_147_483_648).max(2_147_483_647);
/** An int32 query value, its meaningful range left to the service. */
export const queryInt32 = () => z.coerce.number().pipe(int32());
export const queryInt = (min: number, max: number) => z.coerce.number().int().min(min).max(max);
/** A list's `limit`: 1 to the kit's MAX_PAGE_LIMIT (250), as every list RPC takes it. */
export const pageLimit = () => queryInt(1, MAX_PAGE_LIMIT);

/** The range of every datetime the API takes: an instant outside it is a 422, never a 500 downstream. */
export const INSTANT_RANGE = { from: "2000-01-01T00:00:00Z", until: "2100-01-01T00:00:00Z" } as const;
const INSTANT_FROM = Date.parse(INSTANT_RANGE.from);
const INSTANT_UNTIL = Date.parse(INSTANT_RANGE.until);

/**
 * A datetime the API takes (body or query): ISO 8601 with `Z` or an offset, a real calendar
 * instant, from 2000-01-01 (inclusive) to 2100-01-01 (exclusive), UTC. Every route takes its
 * datetimes through this one schema (docs/decisions.md, "Datetimes have a range").
 */
export const instant = () =>
  z.iso
    .datetime({ offset: true })
    .refine(
      (v) => {
        const at = Date.parse(v);
        return Number.isFinite(at) && at >= INSTANT_FROM && at < INSTANT_UNTIL && sameCalendarDay(v, at);
      },
      { message: `must be an instant from ${INSTANT_RANGE.from} to before ${INSTANT_RANGE.until}` },
    )
    .describe(`ISO 8601 instant with Z or an offset, from ${INSTANT_RANGE.from} to before ${INSTANT_RANGE.until}`);

/** The written date exists (2026-02-30 is refused rather than read as March 2). */
function sameCalendarDay(written: string, at: number): boolean {
  const offset = /([+-])(\d{2}):?(\d{2})$/.exec(written);
  const shift = offset ? (offset[1] === "-" ? -1 : 1) * (Number(offset[2]) * 60 + Number(offset[3])) * 60_000 : 0;
  return new Date(at + shift).toISOString().slice(0, 10) === written.slice(0, 10);
}
