// Webhook deliveries against real PostgreSQL: an attempt recorded after its webhook was deleted
// (the delivery on its way when an admin deleted the endpoint) is dropped with the delivery.

import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { freshDatabase, type TestDatabase } from "../../../../test/infra/context.ts";
import { migrations } from "./migrations/index.ts";
import { claimDueDeliveries, deleteWebhook, enqueueDeliveries, insertWebhook, recordAttempt } from "./webhooks.ts";

let tdb: TestDatabase;
let db: Database;

beforeAll(async () => {
  tdb = await freshDatabase();
  db = await openDatabase({ url: tdb.url, schema: "fleet", migrations });
});
afterAll(async () => {
  await db?.close();
  await tdb?.drop();
});

async function claimedDelivery(): Promise<{ webhookId: string; deliveryId: string }> {
  const webhookId = randomUUID();
  await db.tx((em) =>
    insertWebhook(em, {
      id: webhookId,
      url: "https://hooks.example/in",
      events: ["OperationConfirmed"],
      secret_key_id: "k1",
      secret_ciphertext: Buffer.from("sealed"),
      created_by: null,
    }),
  );
  await db.tx((em) => enqueueDeliveries(em, { event_type: "OperationConfirmed", event_id: randomUUID(), body: "{}" }));
  const due = await db.tx((em) => claimDueDeliveries(em, 10, 30));
  const mine = due.find((d) => d.webhook_id === webhookId)!;
  expect(mine).toBeDefined();
  return { webhookId, deliveryId: mine.id };
}

const attempt = (deliveryId: string) => ({
  delivery_id: deliveryId,
  attempt: 1,
  attempted_at: new Date(),
  status_code: 500,
  error: null,
  duration_ms: 12,
});

describe("an attempt recorded", () => {
  it("updates its delivery and keeps the attempt while the webhook stands", async () => {
    const { deliveryId } = await claimedDelivery();
    const next = new Date(Date.now() + 60_000);
    await db.tx((em) => recordAttempt(em, attempt(deliveryId), { status: "pending", next_attempt_at: next }));
    const [d] = await db
      .em()
      .execute(
        `select status, attempt_count, lease_until, next_attempt_at from fleet.webhook_deliveries where id = ?`,
        [deliveryId],
      );
    expect(d).toMatchObject({ status: "pending", attempt_count: 1, lease_until: null });
    expect(new Date(d.next_attempt_at).getTime()).toBe(next.getTime());
    const attempts = await db
      .em()
      .execute(`select attempt, status_code, duration_ms from fleet.webhook_attempts where delivery_id = ?`, [
        deliveryId,
      ]);
    expect(attempts).toEqual([{ attempt: 1, status_code: 500, duration_ms: 12 }]);
  });

  it("after its webhook was deleted is dropped with the delivery, not refused by the foreign key", async () => {
    const { webhookId, deliveryId } = await claimedDelivery();
    expect(await db.tx((em) => deleteWebhook(em, webhookId))).toBe(true);
    await expect(
      db.tx((em) => recordAttempt(em, attempt(deliveryId), { status: "delivered" })),
    ).resolves.toBeUndefined();
    const left = await db
      .em()
      .execute(`select count(*)::int as n from fleet.webhook_attempts where delivery_id = ?`, [deliveryId]);
    expect(left[0].n).toBe(0);
  });
});
