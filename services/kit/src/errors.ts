import { create } from "@bufbuild/protobuf";
import type { JsonObject } from "@bufbuild/protobuf";
import { Code, ConnectError } from "@connectrpc/connect";
import { ErrorDetailSchema } from "./gen/transferops/common/v1/errors_pb.ts";

/**
 * The kinds of refusal a service can give, named after the contract's statuses.
 * `rpc/` maps each onto a Connect code once; the gateway maps it to HTTP.
 */
export type ErrorStatus =
  | "bad_request" // 400
  | "unauthenticated" // 401
  | "forbidden" // 403
  | "not_found" // 404
  | "conflict" // 409
  | "invalid" // 422 validation (code invalid_request)
  | "refused" // 422 business rule
  | "locked" // 423
  | "rate_limited" // 429
  | "internal"; // 500

const connectCodeOf: Record<ErrorStatus, Code> = {
  bad_request: Code.InvalidArgument,
  unauthenticated: Code.Unauthenticated,
  forbidden: Code.PermissionDenied,
  not_found: Code.NotFound,
  conflict: Code.AlreadyExists,
  invalid: Code.InvalidArgument,
  refused: Code.FailedPrecondition,
  locked: Code.FailedPrecondition,
  rate_limited: Code.ResourceExhausted,
  internal: Code.Internal,
};

/** Default code of each status, as the contract's error table names them. */
export const defaultCodeOf: Record<ErrorStatus, string> = {
  bad_request: "bad_request",
  unauthenticated: "not_signed_in",
  forbidden: "not_allowed",
  not_found: "not_found",
  conflict: "conflict",
  invalid: "invalid_request",
  refused: "refused",
  locked: "locked",
  rate_limited: "rate_limited",
  internal: "server_error",
};

export interface Violation {
  field: string;
  message: string;
}

/**
 * Codes the contract names besides the per-status defaults. Every other reason a
 * service gives travels as `context.reason` under the default code of its status:
 * clients switch on the status and `code`, support reads the reason.
 */
export const CONTRACT_NAMED_CODES: ReadonlySet<string> = new Set(["operation_not_cancellable"]);

/** The contract's `code` for a refusal of this status and reason. */
export function contractCodeOf(status: ErrorStatus, reason?: string): string {
  return reason && CONTRACT_NAMED_CODES.has(reason) ? reason : defaultCodeOf[status];
}

/**
 * A refusal raised by the domain: the status, text for the agent, a stable `reason`
 * (snake_case, listed per route in the OpenAPI document) and the ids and values of the
 * refusal. The body's `code` is derived (contractCodeOf); the reason goes into context.
 */
export class DomainError extends Error {
  readonly code: string;
  readonly reason: string | undefined;
  readonly context: Record<string, unknown>;
  readonly violations: Violation[];
  constructor(
    readonly status: ErrorStatus,
    readonly detail: string,
    options: { reason?: string; context?: Record<string, unknown>; violations?: Violation[] } = {},
  ) {
    super(detail);
    this.name = "DomainError";
    this.reason = options.reason;
    this.code = contractCodeOf(status, options.reason);
    this.context = options.reason ? { reason: options.reason, ...options.context } : (options.context ?? {});
    this.violations = options.violations ?? [];
  }
}

/** Throws a gate's refusal, if any (a check returns the refusal or null): the interceptor maps it once. */
export function check(refused: DomainError | null): void {
  if (refused !== null) throw refused;
}

/** A reason of a service's table: the status it answers and when it is given (OpenAPI lists it per route). */
export interface ReasonSpec {
  readonly status: ErrorStatus;
  readonly when: string;
}

/**
 * The refusal builder of a service's reason table (`domain/reasons.ts` in every service): the
 * status is looked up, never chosen by the caller, so reason and status cannot drift apart.
 * The reasons named in `asProblems` travel as the contract's list of problems (one violation
 * of `context.field`, else the context's first key), as the gateway's own validation does;
 * every other refusal keeps its text.
 */
export function refusalsOf<R extends string>(
  reasons: Record<R, ReasonSpec>,
  asProblems: readonly NoInfer<R>[] = [],
): (reason: R, detail: string, context?: Record<string, unknown>) => DomainError {
  return (reason, detail, context = {}) => {
    const violations = asProblems.includes(reason) ? [{ field: fieldOf(context), message: detail }] : [];
    return new DomainError(reasons[reason].status, detail, { reason, context, violations });
  };
}

function fieldOf(context: Record<string, unknown>): string {
  if (typeof context.field === "string") return context.field;
  return Object.keys(context)[0] ?? "";
}

export const refuse = (status: ErrorStatus, detail: string, reason?: string, context?: Record<string, unknown>) =>
  new DomainError(status, detail, { reason, context });

/** The status a refusal travels as, so the gateway can rebuild it exactly. */
function statusTag(err: DomainError): string {
  return err.status;
}

export function toConnectError(err: DomainError): ConnectError {
  const detail = create(ErrorDetailSchema, {
    code: err.code,
    detail: err.detail,
    context: JSON.parse(JSON.stringify(err.context)) as JsonObject,
    violations: err.violations,
  });
  const ce = new ConnectError(err.detail, connectCodeOf[err.status], { "x-error-status": statusTag(err) }, [
    { desc: ErrorDetailSchema, value: detail },
  ]);
  return ce;
}

export interface ErrorBody {
  status: number;
  body: { detail: unknown; code: string; context: Record<string, unknown> };
}

const httpStatusOf: Record<ErrorStatus, number> = {
  bad_request: 400,
  unauthenticated: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  invalid: 422,
  refused: 422,
  locked: 423,
  rate_limited: 429,
  internal: 500,
};

const statusOfConnectCode: Partial<Record<Code, ErrorStatus>> = {
  [Code.InvalidArgument]: "invalid",
  [Code.Unauthenticated]: "unauthenticated",
  [Code.PermissionDenied]: "forbidden",
  [Code.NotFound]: "not_found",
  [Code.AlreadyExists]: "conflict",
  [Code.Aborted]: "conflict",
  [Code.FailedPrecondition]: "refused",
  [Code.ResourceExhausted]: "rate_limited",
};

export function httpStatus(status: ErrorStatus): number {
  return httpStatusOf[status];
}

/**
 * The contract's default code of an HTTP status: 422 is `refused` (validation names
 * `invalid_request` itself), any other 4xx outside the table (413, 415) `bad_request`.
 */
export function defaultCodeOfHttp(status: number): string {
  if (status === 422) return defaultCodeOf.refused;
  const kind = (Object.keys(httpStatusOf) as ErrorStatus[]).find((k) => httpStatusOf[k] === status);
  if (kind) return defaultCodeOf[kind];
  return status >= 500 ? defaultCodeOf.internal : defaultCodeOf.bad_request;
}

/**
 * Rebuilds the contract's error body from a service's Connect error. Unknown errors
 * become a bare 500: their cause is logged by the caller, never sent.
 */
export function errorBodyFromConnect(err: ConnectError): ErrorBody {
  const [detail] = err.findDetails(ErrorDetailSchema);
  const tagged = err.metadata.get("x-error-status") as ErrorStatus | null;
  const status: ErrorStatus = tagged && tagged in httpStatusOf ? tagged : (statusOfConnectCode[err.code] ?? "internal");
  if (!detail || status === "internal") {
    return { status: 500, body: { detail: "Internal server error", code: "server_error", context: {} } };
  }
  const body = {
    detail: detail.violations.length
      ? detail.violations.map((v) => ({ field: v.field, message: v.message }))
      : detail.detail,
    code: detail.code || defaultCodeOf[status],
    context: (detail.context ?? {}) as Record<string, unknown>,
  };
  return { status: httpStatusOf[status], body };
}

/**
 * Another service's refusal, rebuilt as a DomainError so a caller can pass it on with
 * its status, detail, reason and context intact (intake's launch relays dispatch's
 * 422 and 423). Undefined for anything that is not a documented refusal.
 */
export function domainErrorFromConnect(err: unknown): DomainError | undefined {
  if (!(err instanceof ConnectError)) return undefined;
  const [detail] = err.findDetails(ErrorDetailSchema);
  const tagged = err.metadata.get("x-error-status") as ErrorStatus | null;
  if (!detail || !tagged || !(tagged in httpStatusOf) || tagged === "internal") return undefined;
  const context = { ...((detail.context ?? {}) as Record<string, unknown>) };
  const reason = typeof context.reason === "string" ? context.reason : undefined;
  delete context.reason;
  return new DomainError(tagged, detail.detail, {
    reason,
    context,
    violations: detail.violations.map((v) => ({ field: v.field, message: v.message })),
  });
}
