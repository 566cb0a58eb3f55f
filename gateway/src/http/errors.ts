import type { Response } from "express";
import { Code, ConnectError } from "@connectrpc/connect";
import { contractCodeOf, errorBodyFromConnect, type ErrorStatus, httpStatus, type Logger } from "@transferops/kit";
import { ErrorDetailSchema } from "@transferops/kit/gen/transferops/common/v1/errors_pb";
import type { z } from "zod";
import type { GatewayReason } from "./reasons.ts";

export interface HttpErrorOptions {
  /** Stable `context.reason`; the body's `code` is derived from the status and reason like a service's. */
  reason?: GatewayReason;
  context?: Record<string, unknown>;
  headers?: Record<string, string>;
  /** An HTTP status outside the contract's table (413), answered with the `code` of `status`. */
  httpStatus?: number;
}

/**
 * An error the gateway answers itself, in the contract's `{detail, code, context}` body. The
 * same rule as a service's DomainError: `code` is the contract's default for the status (or a
 * code the contract names), the precise reason goes into `context.reason`.
 */
export class HttpError extends Error {
  readonly status: number;
  readonly code: string;
  readonly context: Record<string, unknown>;
  readonly headers: Record<string, string>;
  constructor(
    readonly kind: ErrorStatus,
    readonly detail: unknown,
    options: HttpErrorOptions = {},
  ) {
    super(typeof detail === "string" ? detail : kind);
    this.status = options.httpStatus ?? httpStatus(kind);
    this.code = contractCodeOf(kind, options.reason);
    this.context = options.reason ? { reason: options.reason, ...options.context } : (options.context ?? {});
    this.headers = options.headers ?? {};
  }
}

/** 422 with the list of validation problems as `detail`, code `invalid_request`. */
export function validationError(issues: z.core.$ZodIssue[], where: string): HttpError {
  const problems = issues.map((i) => ({
    field: [where, ...i.path.map(String)].filter(Boolean).join("."),
    message: i.message,
  }));
  return new HttpError("invalid", problems);
}

/** Seconds a caller waits before sending a request whose outcome is unknown again. */
export const OUTCOME_UNKNOWN_RETRY_AFTER_S = 2;

/**
 * A service call that ran out of the request's deadline, or whose service went away during
 * it (connection lost; a replica stopping cancels the streams it could not finish in its
 * drain time, HTTP/2 CANCEL): the work may have been done or not. Never a 500: a 503 that
 * says so, and that the same request (same request_id, client_message_id or body) may be
 * sent again, which every write route answers idempotently. (A call the gateway itself
 * cancels is one whose client has gone: nobody reads the answer.)
 */
export function outcomeUnknown(err: ConnectError): HttpError | undefined {
  const unknown = [Code.DeadlineExceeded, Code.Unavailable, Code.Canceled];
  // A connection reset by a service killed mid-call comes back as `aborted` ("read
  // ECONNRESET"): no service refuses with that code (kit errors.ts), so one without a
  // refusal's detail is the transport's, and the outcome is unknown.
  const transportAborted = err.code === Code.Aborted && err.findDetails(ErrorDetailSchema).length === 0;
  if (!unknown.includes(err.code) && !transportAborted) return undefined;
  return new HttpError(
    "internal",
    "The request did not finish in time; it may or may not have taken effect. Send the same request again (same request_id or client_message_id) after Retry-After: a replay answers what was done.",
    {
      reason: "outcome_unknown",
      httpStatus: 503,
      context: { retry_after_s: OUTCOME_UNKNOWN_RETRY_AFTER_S },
      headers: { "Retry-After": String(OUTCOME_UNKNOWN_RETRY_AFTER_S) },
    },
  );
}

export function sendError(res: Response, err: unknown, log: Logger): void {
  if (res.headersSent) return;
  const unknown = err instanceof ConnectError ? outcomeUnknown(err) : undefined;
  if (unknown) {
    log.warn(
      { err: { code: (err as ConnectError).code, message: (err as ConnectError).rawMessage } },
      "service call outcome unknown",
    );
    return sendError(res, unknown, log);
  }
  if (err instanceof HttpError) {
    for (const [k, v] of Object.entries(err.headers)) res.setHeader(k, v);
    res.status(err.status).json({ detail: err.detail, code: err.code, context: err.context });
    return;
  }
  if (err instanceof ConnectError) {
    const { status, body } = errorBodyFromConnect(err);
    if (status === 500) log.error({ err: { code: err.code, message: err.rawMessage } }, "service call failed");
    res.status(status).json(body);
    return;
  }
  log.error({ err }, "unhandled gateway error");
  res.status(500).json({ detail: "Internal server error", code: "server_error", context: {} });
}
