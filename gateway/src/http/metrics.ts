import type { NextFunction, Request, Response } from "express";
import { httpDuration, type SpanScope } from "@transferops/kit";

/**
 * Times every request into transferops_http_request_duration_seconds, labelled by the
 * matched route pattern (`/v1/operations/:id`), never the raw path, so ids do not become
 * series; requests that match no route count as "unmatched".
 */
export function httpMetrics() {
  return (req: Request, res: Response, next: NextFunction) => {
    const stop = httpDuration.startTimer();
    res.on("finish", () => {
      const route = routeOf(req);
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}

/** The matched route pattern (`/v1/operations/:id`), or "unmatched". */
function routeOf(req: Request): string {
  const pattern = (req.route as { path?: unknown } | undefined)?.path;
  return typeof pattern === "string" ? req.baseUrl + pattern : "unmatched";
}

/** Names the request's server span by its route pattern (never the raw path) and ends it. */
export function endHttpSpan(span: SpanScope, req: Request, res: Response): void {
  const route = routeOf(req);
  span.setAttributes({
    "http.request.method": req.method,
    "http.route": route,
    "http.response.status_code": res.statusCode,
  });
  span.updateName(`${req.method} ${route}`);
  span.end(res.statusCode >= 500 ? `status ${res.statusCode}` : undefined);
}
