import { z } from "zod";
import { ProjectionStatusSchema } from "@transferops/kit/gen/transferops/analytics/v1/analytics_pb";
import { toContractJson } from "../../http/json.ts";
import { route, type Route } from "../../http/route.ts";
import type { Services } from "../../services.ts";
import { probeServices } from "../../health.ts";

const healthSchema = z.object({
  status: z.enum(["ok", "degraded"]),
  services: z.record(z.string(), z.string()).describe("Each service's gRPC health state, e.g. SERVING"),
  analytics: z
    .object({
      lag: z.number().nullable(),
      lag_by_topic: z.record(z.string(), z.number()),
      last_event_at: z.string().nullable(),
    })
    .nullable()
    .describe("Analytics' consumer lag and newest event; null when analytics does not answer"),
  time: z.iso.datetime(),
});
/** Analytics' consumer lag and newest event, or null when analytics does not answer in time. */
async function analyticsProjection(services: Services) {
  try {
    const res = await services.analytics.getProjectionStatus({}, { timeoutMs: 1_500 });
    return toContractJson(ProjectionStatusSchema, res.status!);
  } catch {
    return null;
  }
}

export const healthRoutes: Route[] = [
  route({
    operationId: "getHealth",
    method: "get",
    path: "/v1/health",
    tag: "Health",
    summary: "Basic health: the gateway and each service's gRPC health check",
    description:
      "`analytics` reports the read model's consumer lag (`lag`: events published and not yet projected, over " +
      "every topic; `lag_by_topic`) and `last_event_at`; null when analytics does not answer.",
    auth: "none",
    responses: {
      200: { description: "Serving; `services` gives each service's state", schema: healthSchema },
      503: { description: "A service is not serving", schema: healthSchema },
    },
    async handle({ services }) {
      const [states, analytics] = await Promise.all([probeServices(services.urls), analyticsProjection(services)]);
      const healthy = Object.values(states).every((s) => s === "SERVING");
      return {
        status: healthy ? 200 : 503,
        json: { status: healthy ? "ok" : "degraded", services: states, analytics, time: new Date().toISOString() },
      };
    },
  }),
];
