import { z } from "zod";
import {
  NotificationSchema,
  WebhookDeliverySchema,
  WebhookSchema,
  type Notification,
  type WebhookDelivery,
} from "@transferops/kit/gen/transferops/fleet/v1/fleet_pb";
import { toContractJson } from "../../http/json.ts";
import { created, noContent, ok, pageLimit, queryBool, route, type Route } from "../../http/route.ts";
import { adminOnly } from "../../http/reasons.ts";
import { FLEET } from "../../http/service-reasons.ts";
import { contractSchema } from "../../http/contract-schema.ts";

// Notifications (stored alerts) and webhook endpoints (admin). The contract names the
// alerts and the events operation.confirmed / operation.failed but not their delivery:
// these routes are ours (docs/decisions/fleet.md).

const notificationJson = (n: Notification) => ({ ...toContractJson(NotificationSchema, n), context: n.context ?? {} });
const deliveryJson = (d: WebhookDelivery) => ({
  ...toContractJson(WebhookDeliverySchema, d),
  payload: d.payload ?? null,
});

export const notificationRoutes: Route[] = [
  route({
    operationId: "listNotifications",
    method: "get",
    path: "/v1/admin/notifications",
    tag: "Admin",
    summary: "Stored alerts, newest first; acknowledged=false for the open ones",
    auth: ["session"],
    query: z.object({ acknowledged: queryBool().optional(), limit: pageLimit().optional() }),
    responses: adminOnly(
      {
        200: { description: "Array of notifications", schema: z.array(contractSchema(NotificationSchema)) },
        422: "Invalid query",
      },
      FLEET,
    ),
    async handle({ caller, query, services }) {
      const res = await services.fleet.listNotifications({
        caller,
        acknowledged: query.acknowledged,
        limit: query.limit ?? 50,
      });
      return ok(res.notifications.map(notificationJson));
    },
  }),
  route({
    operationId: "acknowledgeNotification",
    method: "post",
    path: "/v1/admin/notifications/:notification_id/ack",
    tag: "Admin",
    summary: "Acknowledge an alert (idempotent: the first acknowledgement is kept)",
    auth: ["session"],
    uuidParams: ["notification_id"],
    responses: adminOnly(
      {
        200: { description: "The notification", schema: contractSchema(NotificationSchema) },
        404: "Unknown notification",
      },
      FLEET,
      ["notification_not_found"],
    ),
    async handle({ caller, params, services }) {
      const res = await services.fleet.acknowledgeNotification({ caller, notificationId: params.notification_id });
      return ok(notificationJson(res.notification!));
    },
  }),
  route({
    operationId: "createWebhook",
    method: "post",
    path: "/v1/admin/webhooks",
    tag: "Admin",
    summary: "Register a webhook endpoint; its signing secret is returned here only",
    auth: ["session"],
    body: z.object({
      url: z.string().min(1).max(2000),
      secret: z.string().min(16).max(200).optional(),
      events: z.array(z.string().max(40)).max(10).optional(),
    }),
    responses: adminOnly(
      {
        201: {
          description: "The webhook with its secret (returned once)",
          schema: contractSchema(WebhookSchema).extend({ secret: z.string() }),
        },
        422: "Invalid URL, secret or event type",
      },
      FLEET,
    ),
    async handle({ caller, body, services }) {
      const res = await services.fleet.createWebhook({
        caller,
        url: body.url,
        secret: body.secret ?? "",
        events: body.events ?? [],
      });
      return created({ ...toContractJson(WebhookSchema, res.webhook!), secret: res.secret });
    },
  }),
  route({
    operationId: "listWebhooks",
    method: "get",
    path: "/v1/admin/webhooks",
    tag: "Admin",
    summary: "Registered webhook endpoints (never their secrets)",
    auth: ["session"],
    responses: adminOnly(
      { 200: { description: "Array of webhooks", schema: z.array(contractSchema(WebhookSchema)) } },
      FLEET,
    ),
    async handle({ caller, services }) {
      const res = await services.fleet.listWebhooks({ caller });
      return ok(res.webhooks.map((w) => toContractJson(WebhookSchema, w)));
    },
  }),
  route({
    operationId: "deleteWebhook",
    method: "delete",
    path: "/v1/admin/webhooks/:webhook_id",
    tag: "Admin",
    summary: "Remove a webhook endpoint and its deliveries",
    auth: ["session"],
    uuidParams: ["webhook_id"],
    responses: adminOnly({ 204: "Removed", 404: "Unknown webhook" }, FLEET, ["webhook_not_found"]),
    async handle({ caller, params, services }) {
      await services.fleet.deleteWebhook({ caller, webhookId: params.webhook_id });
      return noContent();
    },
  }),
  route({
    operationId: "listWebhookDeliveries",
    method: "get",
    path: "/v1/admin/webhooks/:webhook_id/deliveries",
    tag: "Admin",
    summary: "A webhook's deliveries, newest first, with every attempt",
    auth: ["session"],
    uuidParams: ["webhook_id"],
    query: z.object({ limit: pageLimit().optional() }),
    responses: adminOnly(
      {
        200: { description: "Array of deliveries", schema: z.array(contractSchema(WebhookDeliverySchema)) },
        404: "Unknown webhook",
        422: "Invalid query",
      },
      FLEET,
      ["webhook_not_found"],
    ),
    async handle({ caller, params, query, services }) {
      const res = await services.fleet.listWebhookDeliveries({
        caller,
        webhookId: params.webhook_id,
        limit: query.limit ?? 50,
      });
      return ok(res.deliveries.map(deliveryJson));
    },
  }),
];
