import { isUuid } from "@transferops/kit";
import type { Sealed } from "../domain/pin-crypto.ts";
import { notFound } from "../domain/reasons.ts";
import { audit } from "../store/agents.ts";
import { acknowledgeNotification, listNotifications } from "../store/notifications.ts";
import { deleteWebhook, findWebhook, insertWebhook, listDeliveries, listWebhooks } from "../store/webhooks.ts";
import type { FleetDeps } from "./ports.ts";

/** The notifications, acknowledged or not, at most `limit`. */
export async function notifications(deps: FleetDeps, acknowledged: boolean | undefined, limit: number) {
  return listNotifications(deps.db.em(), { acknowledged, limit });
}

/** Acknowledges the notification, or 404. */
export async function acknowledge(deps: FleetDeps, actor: string, notificationId: string) {
  const n = isUuid(notificationId)
    ? await deps.db.tx((em) => acknowledgeNotification(em, notificationId, actor))
    : undefined;
  if (!n) throw notFound("notification", notificationId);
  return n;
}

export interface NewWebhook {
  id: string;
  url: string;
  events: string[];
  /** The secret sealed for this webhook's id. */
  sealed: Sealed;
}

/** A new webhook (already checked), audited. */
export async function createWebhook(deps: FleetDeps, actor: string, w: NewWebhook) {
  return deps.db.tx(async (em) => {
    const row = await insertWebhook(em, {
      id: w.id,
      url: w.url,
      events: w.events,
      secret_key_id: w.sealed.keyId,
      secret_ciphertext: w.sealed.ciphertext,
      created_by: actor,
    });
    await audit(em, { actor, action: "webhook.create", target: w.id, details: { url: w.url, events: w.events } });
    return row;
  });
}

/** Every webhook. */
export async function webhooks(deps: FleetDeps) {
  return listWebhooks(deps.db.em());
}

/** Deletes the webhook, or 404, audited. */
export async function removeWebhook(deps: FleetDeps, actor: string, webhookId: string): Promise<void> {
  await deps.db.tx(async (em) => {
    if (!isUuid(webhookId) || !(await deleteWebhook(em, webhookId))) throw notFound("webhook", webhookId);
    await audit(em, { actor, action: "webhook.delete", target: webhookId });
  });
}

/** The webhook's latest deliveries with their attempts, or 404. */
export async function deliveries(deps: FleetDeps, webhookId: string, limit: number) {
  const em = deps.db.em();
  if (!isUuid(webhookId) || !(await findWebhook(em, webhookId))) throw notFound("webhook", webhookId);
  return listDeliveries(em, webhookId, limit);
}
