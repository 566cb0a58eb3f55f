import type { Route } from "../../http/route.ts";
import { accessRoutes } from "./access.ts";
import { adminRoutes } from "./admin.ts";
import { wordingRuleRoutes } from "./wording-rules.ts";
import { unknownWordingRoutes } from "./unknown-wordings.ts";
import { agentRoutes } from "./agents.ts";
import { deviceRoutes } from "./devices.ts";
import { handsetFleetRoutes } from "./handset-fleet.ts";
import { notificationRoutes } from "./notifications.ts";
import { auditRoutes } from "./audit.ts";
import { simRoutes } from "./sims.ts";
import { evidenceRoutes } from "./evidence.ts";
import { handsetMessageRoutes } from "./handset-messages.ts";
import { healthRoutes } from "./health.ts";
import { matchingRoutes } from "./matching.ts";
import { operationRoutes } from "./operations.ts";
import { handsetDispatchRoutes } from "./handset-dispatch.ts";
import { arbitrationRoutes } from "./arbitration.ts";
import { transactionRoutes } from "./transactions.ts";
import { analyticsRoutes } from "./analytics.ts";
import { reconciliationRoutes } from "./reconciliations.ts";
import { contactRoutes } from "./contacts.ts";
import { importRoutes } from "./imports.ts";

/** Every route of the /v1 contract, one file per route group. Order matters where paths overlap. */
export function allRoutes(): Route[] {
  return [
    ...healthRoutes,
    ...agentRoutes,
    ...evidenceRoutes,
    ...handsetMessageRoutes,
    ...accessRoutes,
    ...deviceRoutes,
    ...simRoutes,
    ...adminRoutes,
    ...unknownWordingRoutes,
    ...wordingRuleRoutes,
    ...handsetFleetRoutes,
    ...notificationRoutes,
    ...auditRoutes,
    ...matchingRoutes,
    ...operationRoutes,
    ...handsetDispatchRoutes,
    ...arbitrationRoutes,
    ...transactionRoutes,
    ...analyticsRoutes,
    ...reconciliationRoutes,
    ...contactRoutes,
    ...importRoutes,
  ];
}
