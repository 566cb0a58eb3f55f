import { z } from "zod";
import { route, type Route } from "../../http/route.ts";
import { probeServices } from "../../health.ts";

const healthSchema = z.object({
  status: z.enum(["ok", "degraded"]),
  services: z.record(z.string(), z.string()).describe("Each service's gRPC health state, e.g. SERVING"),
  time: z.iso.datetime(),
});

export const healthRoutes: Route[] = [
  route({
    operationId: "getHealth",
    method: "get",
    path: "/v1/health",
    tag: "Health",
    summary: "Basic health: the gateway and each service's gRPC health check",
    auth: "none",
    responses: {
      200: { description: "Serving; `services` gives each service's state", schema: healthSchema },
      503: { description: "A service is not serving", schema: healthSchema },
    },
    async handle({ services }) {
      const states = await probeServices(services.urls);
      const healthy = Object.values(states).every((s) => s === "SERVING");
      return {
        status: healthy ? 200 : 503,
        json: { status: healthy ? "ok" : "degraded", services: states, time: new Date().toISOString() },
      };
    },
  }),
];
