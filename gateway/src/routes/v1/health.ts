import { z } from "zod";
import { defaultCodeOfHttp } from "@transferops/kit";
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

const degradedSchema = healthSchema.extend({
  detail: z.string(),
  code: z.string(),
  context: z.object({ reason: z.literal("service_not_serving"), services: z.array(z.string()) }),
});

/**
 * The answer of the health route. A 503 is an error, so it carries the error body
 * (`detail`, `code`, `context` naming the services not serving) beside the
 * health fields, which a probe reads either way.
 */
export function healthAnswer(
  states: Record<string, string>,
  analytics: unknown,
  now: Date,
): { status: 200 | 503; json: Record<string, unknown> } {
  const health = { services: states, analytics, time: now.toISOString() };
  const down = Object.entries(states)
    .filter(([, state]) => state !== "SERVING")
    .map(([name]) => name);
  if (down.length === 0) return { status: 200, json: { status: "ok", ...health } };
  return {
    status: 503,
    json: {
      detail: `Not serving: ${down.join(", ")}`,
      code: defaultCodeOfHttp(503),
      context: { reason: "service_not_serving", services: down },
      status: "degraded",
      ...health,
    },
  };
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
      503: {
        description: "A service is not serving: the error body (reason service_not_serving) and the health fields",
        schema: degradedSchema,
      },
    },
    async handle({ services }) {
      const [states, analytics] = await Promise.all([probeServices(services.urls), analyticsProjection(services)]);
      return healthAnswer(states, analytics, new Date());
    },
  }),
];
