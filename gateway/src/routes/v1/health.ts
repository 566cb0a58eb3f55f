import { route, type Route } from "../../http/route.ts";
import { probeServices } from "../../health.ts";

export const healthRoutes: Route[] = [
  route({
    operationId: "getHealth",
    method: "get",
    path: "/v1/health",
    tag: "Health",
    summary: "Basic health: the gateway and each service's gRPC health check",
    auth: "none",
    responses: { 200: "Serving; `services` gives each service's state", 503: "A service is not serving" },
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
