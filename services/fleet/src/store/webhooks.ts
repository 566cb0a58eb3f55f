import { one, rows, type EntityManager } from "@transferops/kit";
import { ARRAY_FROM_JSON, date, dateOrNull, jsonList } from "./values.ts";

export interface WebhookRecord {
  id: string;
  url: string;
  events: string[];
  secret_key_id: string;
  secret_ciphertext: Buffer;
  created_at: Date;
  created_by: string | null;
}

export interface DeliveryRecord {
  id: string;
  webhook_id: string;
  event_type: string;
  event_id: string;
  body: string;
  status: "pending" | "delivered" | "failed";
  attempt_count: number;
  next_attempt_at: Date | null;
  created_at: Date;
  delivered_at: Date | null;
}

export interface AttemptRecord {
  delivery_id: string;
  attempt: number;
  attempted_at: Date;
  status_code: number | null;
  error: string | null;
  duration_ms: number;
}

const toWebhook = (r: WebhookRecord): WebhookRecord => ({ ...r, created_at: date(r.created_at) });
const toDelivery = <T extends DeliveryRecord>(r: T): T => ({
  ...r,
  created_at: date(r.created_at),
  next_attempt_at: dateOrNull(r.next_attempt_at),
  delivered_at: dateOrNull(r.delivered_at),
});

const WEBHOOK = `id, url, events, secret_key_id, secret_ciphertext, created_at, created_by`;
const DELIVERY = `id, webhook_id, event_type, event_id, body, status, attempt_count, next_attempt_at, created_at, delivered_at`;

export async function insertWebhook(em: EntityManager, w: Omit<WebhookRecord, "created_at">): Promise<WebhookRecord> {
  return toWebhook(
    (await one<WebhookRecord>(
      em,
      `insert into fleet.webhooks (id, url, events, secret_key_id, secret_ciphertext, created_by) values (?, ?, ${ARRAY_FROM_JSON}, ?, ?, ?) returning ${WEBHOOK}`,
      [w.id, w.url, jsonList(w.events), w.secret_key_id, w.secret_ciphertext, w.created_by],
    ))!,
  );
}

export async function listWebhooks(em: EntityManager): Promise<WebhookRecord[]> {
  return (await rows<WebhookRecord>(em, `select ${WEBHOOK} from fleet.webhooks order by created_at, id`)).map(
    toWebhook,
  );
}

export async function findWebhook(em: EntityManager, id: string): Promise<WebhookRecord | undefined> {
  const r = await one<WebhookRecord>(em, `select ${WEBHOOK} from fleet.webhooks where id = ?`, [id]);
  return r && toWebhook(r);
}

export async function deleteWebhook(em: EntityManager, id: string): Promise<boolean> {
  return (await rows(em, `delete from fleet.webhooks where id = ? returning id`, [id])).length > 0;
}

/** One delivery per endpoint subscribed to the event type; a redelivered event adds none. */
export async function enqueueDeliveries(
  em: EntityManager,
  e: { event_type: string; event_id: string; body: string },
): Promise<number> {
  const r = await rows(
    em,
    `insert into fleet.webhook_deliveries (id, webhook_id, event_type, event_id, body, next_attempt_at)
     select gen_random_uuid(), w.id, ?, ?, ?, now() from fleet.webhooks w where ? = any(w.events)
     on conflict (webhook_id, event_id) do nothing returning id`,
    [e.event_type, e.event_id, e.body, e.event_type],
  );
  return r.length;
}

/**
 * Claims due deliveries for `leaseS` seconds (skip locked: several replicas share the
 * work, and a crashed worker's lease runs out).
 */
export async function claimDueDeliveries(
  em: EntityManager,
  limit: number,
  leaseS: number,
): Promise<(DeliveryRecord & { url: string; secret_key_id: string; secret_ciphertext: Buffer })[]> {
  const r = await rows<DeliveryRecord & { url: string; secret_key_id: string; secret_ciphertext: Buffer }>(
    em,
    `with due as (
       select id from fleet.webhook_deliveries
        where status = 'pending' and next_attempt_at <= now() and (lease_until is null or lease_until < now())
        order by next_attempt_at limit ? for update skip locked)
     update fleet.webhook_deliveries d set lease_until = now() + make_interval(secs => ?)
       from due, fleet.webhooks w
      where d.id = due.id and w.id = d.webhook_id
     returning d.id, d.webhook_id, d.event_type, d.event_id, d.body, d.status, d.attempt_count, d.next_attempt_at, d.created_at,
               d.delivered_at, w.url, w.secret_key_id, w.secret_ciphertext`,
    [limit, leaseS],
  );
  return r.map(toDelivery);
}

/**
 * Records an attempt and what follows it, in one statement: the delivery's row is updated (and
 * locked) first, and the attempt is written only if that row is still there. A webhook deleted
 * while its delivery was on its way took the delivery with it (`on delete cascade`): the
 * attempt is then dropped with it, not refused by the foreign key.
 */
export async function recordAttempt(
  em: EntityManager,
  a: AttemptRecord,
  outcome: { status: "delivered" } | { status: "pending"; next_attempt_at: Date } | { status: "failed" },
): Promise<void> {
  await em.execute(
    `with d as (
       update fleet.webhook_deliveries set attempt_count = ?, status = ?, lease_until = null,
         next_attempt_at = ?, delivered_at = case when ? = 'delivered' then now() else delivered_at end
       where id = ? returning id)
     insert into fleet.webhook_attempts (delivery_id, attempt, attempted_at, status_code, error, duration_ms)
     select d.id, ?::integer, ?::timestamptz, ?::integer, ?, ?::integer from d
     on conflict do nothing`,
    [
      a.attempt,
      outcome.status,
      outcome.status === "pending" ? outcome.next_attempt_at : null,
      outcome.status,
      a.delivery_id,
      a.attempt,
      a.attempted_at,
      a.status_code,
      a.error,
      a.duration_ms,
    ],
  );
}

export async function listDeliveries(
  em: EntityManager,
  webhookId: string,
  limit: number,
): Promise<{ delivery: DeliveryRecord; attempts: AttemptRecord[] }[]> {
  const deliveries = (
    await rows<DeliveryRecord>(
      em,
      `select ${DELIVERY} from fleet.webhook_deliveries where webhook_id = ? order by created_at desc, id limit ?`,
      [webhookId, limit],
    )
  ).map(toDelivery);
  if (!deliveries.length) return [];
  const attempts = await rows<AttemptRecord>(
    em,
    `select delivery_id, attempt, attempted_at, status_code, error, duration_ms from fleet.webhook_attempts
      where delivery_id in (?) order by attempt`,
    [deliveries.map((d) => d.id)],
  );
  return deliveries.map((delivery) => ({
    delivery,
    attempts: attempts
      .filter((a) => a.delivery_id === delivery.id)
      .map((a) => ({ ...a, attempted_at: date(a.attempted_at) })),
  }));
}
