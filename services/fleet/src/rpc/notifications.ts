import { randomUUID } from "node:crypto";
import type { ServiceImpl } from "@connectrpc/connect";
import { MAX_PAGE_LIMIT, type Violation } from "@transferops/kit";
import type { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { requireAdmin } from "../domain/agents.ts";
import { seal, webhookSecretAad } from "../domain/pin-crypto.ts";
import { invalid } from "../domain/reasons.ts";
import { isWebhookEvent, WEBHOOK_EVENTS } from "../domain/vocabulary.ts";
import { newWebhookSecret } from "../domain/webhooks.ts";
import { registrationProblem } from "../flows/egress.ts";
import {
  acknowledge,
  createWebhook,
  deliveries,
  notifications,
  removeWebhook,
  webhooks,
} from "../flows/notifications.ts";
import type { FleetDeps } from "../flows/ports.ts";
import { toDelivery, toNotification, toWebhook } from "../flows/mappers.ts";

type Impl = Pick<
  ServiceImpl<typeof FleetService>,
  | "listNotifications"
  | "acknowledgeNotification"
  | "createWebhook"
  | "listWebhooks"
  | "deleteWebhook"
  | "listWebhookDeliveries"
>;

const pageSize = (limit: number) => (limit > 0 ? Math.min(limit, MAX_PAGE_LIMIT) : 50);

export function notificationsHandlers(deps: FleetDeps): Impl {
  const { config } = deps;
  return {
    async listNotifications(req) {
      requireAdmin(req.caller);
      const list = await notifications(deps, req.acknowledged, pageSize(req.limit));
      return { notifications: list.map(toNotification) };
    },

    async acknowledgeNotification(req) {
      requireAdmin(req.caller);
      const n = await acknowledge(deps, req.caller!.agentId, req.notificationId);
      return { notification: toNotification(n) };
    },

    async createWebhook(req) {
      requireAdmin(req.caller);
      const problems: Violation[] = [];
      const urlIssue = await registrationProblem(req.url, config.webhooks.egress);
      if (urlIssue) problems.push({ field: "url", message: urlIssue });
      if (req.secret && (req.secret.length < 16 || req.secret.length > 200))
        problems.push({ field: "secret", message: "must be 16 to 200 characters" });
      const unknown = req.events.filter((e) => !isWebhookEvent(e));
      if (unknown.length)
        problems.push({
          field: "events",
          message: `unknown event types: ${unknown.join(", ")}; use ${WEBHOOK_EVENTS.join(", ")}`,
        });
      if (problems.length) throw invalid(problems);
      const id = randomUUID();
      const secret = req.secret || newWebhookSecret();
      const sealed = seal(config.pinKeyring, secret, webhookSecretAad(id));
      const events = req.events.length ? [...new Set(req.events)] : [...WEBHOOK_EVENTS];
      const webhook = await createWebhook(deps, req.caller!.agentId, { id, url: req.url, events, sealed });
      return { webhook: toWebhook(webhook), secret };
    },

    async listWebhooks(req) {
      requireAdmin(req.caller);
      return { webhooks: (await webhooks(deps)).map(toWebhook) };
    },

    async deleteWebhook(req) {
      requireAdmin(req.caller);
      await removeWebhook(deps, req.caller!.agentId, req.webhookId);
      return {};
    },

    async listWebhookDeliveries(req) {
      requireAdmin(req.caller);
      const list = await deliveries(deps, req.webhookId, pageSize(req.limit));
      return { deliveries: list.map((d) => toDelivery(d.delivery, d.attempts)) };
    },
  };
}
