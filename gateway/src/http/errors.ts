import type { Response } from "express";
import { ConnectError } from "@connectrpc/connect";
import { errorBodyFromConnect, type ErrorStatus, httpStatus, defaultCodeOf, type Logger } from "@transferops/kit";
import type { z } from "zod";

/** An error the gateway answers itself, in the contract's `{detail, code, context}` body. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly detail: unknown,
    readonly code: string,
    readonly context: Record<string, unknown> = {},
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof detail === "string" ? detail : code);
  }

  static of(status: ErrorStatus, detail: unknown, code?: string, context?: Record<string, unknown>): HttpError {
    return new HttpError(httpStatus(status), detail, code ?? defaultCodeOf[status], context);
  }
}

/** 422 with the list of validation problems as `detail`, code `invalid_request`. */
export function validationError(issues: z.core.$ZodIssue[], where: string): HttpError {
  const problems = issues.map((i) => ({
    field: [where, ...i.path.map(String)].filter(Boolean).join("."),
    message: i.message,
  }));
  return new HttpError(422, problems, "invalid_request");
}

export function sendError(res: Response, err: unknown, log: Logger): void {
  if (res.headersSent) return;
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
