import type { Route } from "../../http/route.ts";
import { agentRoutes } from "./agents.ts";
import { healthRoutes } from "./health.ts";

/** Every route of the /v1 contract, one file per route group. Order matters where paths overlap. */
export function allRoutes(): Route[] {
  return [...healthRoutes, ...agentRoutes];
}
