import type { NextFunction, Request, Response } from "express";
import { httpDuration } from "@transferops/kit";

/**
 * Times every request into transferops_http_request_duration_seconds, labelled by the
 * matched route pattern (`/v1/operations/:id`), never the raw path, so ids do not become
 * series; requests that match no route count as "unmatched".
 */
export function httpMetrics() {
  return (req: Request, res: Response, next: NextFunction) => {
    const stop = httpDuration.startTimer();
    res.on("finish", () => {
      const pattern = (req.route as { path?: unknown } | undefined)?.path;
      const route = typeof pattern === "string" ? req.baseUrl + pattern : "unmatched";
      stop({ method: req.method, route, status: String(res.statusCode) });
    });
    next();
  };
}
