// Invariant 15's judge of webhook deliveries, against deliveries made up here: it passes what
// fleet's decision describes and names each way a delivery can be wrong.
import { createHmac } from "node:crypto";
import { describe, expect, it } from "vitest";
import type { Reply, SimContext } from "./context.ts";
import { Random } from "./random.ts";
import { WebhookChecks, type Finding } from "./webhook-checks.ts";
import type { Received, WebhookReceiver } from "./webhook-receiver.ts";
import { WebhookAdmin, type Registration } from "./webhooks.ts";

const OP = "00000000-0000-4000-8000-000000000001";
const WEBHOOK = "00000000-0000-4000-8000-0000000000aa";
const SECRET = "sim-secret-0123456789";

function delivery(o: {
  path?: string;
  secret?: string;
  type?: string;
  status?: string;
  deliveryId?: string;
  eventId?: string;
  ageS?: number;
  extra?: string;
}): Received {
  const type = o.type ?? "operation.confirmed";
  const eventId = o.eventId ?? "event-1";
  const body = JSON.stringify({
    event_id: eventId,
    event_type: type,
    occurred_at: "2026-11-29T08:00:00.000Z",
    data: { operation: { operation_id: OP, status: o.status ?? "confirmed" }, note: o.extra ?? "" },
  });
  const at = Date.now();
  const ts = String(Math.floor(at / 1000) - (o.ageS ?? 0));
  const signature =
    "sha256=" +
    createHmac("sha256", o.secret ?? SECRET)
      .update(`${ts}.${body}`)
      .digest("hex");
  return {
    path: o.path ?? "/hooks/1",
    headers: {
      "x-signature": signature,
      "x-timestamp": ts,
      "x-event-type": type,
      "x-event-id": eventId,
      "x-delivery-id": o.deliveryId ?? "delivery-1",
      "x-delivery-attempt": "1",
    },
    body,
    at,
    answered: 200,
  };
}

/** A judge over one registration (`/hooks/1`) and the deliveries given; the API shows OP `shown`. */
function judge(received: Received[], o: { shown?: string; events?: string[]; outbox?: unknown[] } = {}) {
  const admin = new WebhookAdmin({ random: new Random(1) } as unknown as SimContext);
  const reg: Registration = {
    path: "/hooks/1",
    standing: false,
    asked: o.events,
    given: SECRET,
    status: 201,
    webhookId: WEBHOOK,
    secret: SECRET,
    events: o.events,
    ackAt: Date.now() - 60_000,
  };
  admin.registrations.push(reg);
  const query = (sql: string): Promise<unknown[]> =>
    Promise.resolve(/dispatch\.outbox/.test(sql) ? (o.outbox ?? []) : []);
  const http = (): Promise<Reply> => Promise.resolve({ status: 200, body: { status: o.shown ?? "confirmed" } });
  return new WebhookChecks({
    query: query as never,
    http,
    gateway: () => "http://gw",
    adminToken: "admin",
    admin,
    receiver: { received } as WebhookReceiver,
  });
}

async function findings(checks: WebhookChecks, final = false): Promise<string[]> {
  const out: Finding[] = [];
  await checks.deliveries(out, final);
  if (final) await checks.atLeastOnce(out);
  return out.map((f) => f.detail.replace(/^delivery .*? to \/hooks\/1: /, ""));
}

describe("the webhook deliveries' judge (invariant 15)", () => {
  it("passes a delivery signed with the endpoint's secret, of an event it asked for, true of its operation", async () => {
    expect(await findings(judge([delivery({}), delivery({})]))).toEqual([]);
  });

  it.each([
    ["another secret", { secret: "another-secret-0123" }, {}, /X-Signature is not the HMAC/],
    ["an old timestamp", { ageS: 600 }, {}, /X-Timestamp .* is 60[01] s from its arrival/],
    [
      "an event not asked for",
      { type: "operation.failed", status: "failed" },
      { events: ["operation.confirmed"], shown: "failed" },
      /asked for operation.confirmed only/,
    ],
    ["an operation the API shows otherwise", {}, { shown: "no_evidence" }, /shows it no_evidence/],
    ["a body that contradicts its event", { status: "queued" }, {}, /is queued in the body/],
  ])("names %s", async (_what, d, o, want) => {
    const problems = await findings(judge([delivery(d)], o));
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(want);
  });

  it("names a delivery id that comes again with another body", async () => {
    const problems = await findings(judge([delivery({}), delivery({ extra: "changed" })]));
    expect(problems).toEqual(
      expect.arrayContaining([expect.stringMatching(/the delivery came again with another body/)]),
    );
  });

  it("names an event owed to a webhook still registered that never came, and not one that came", async () => {
    const outbox = [
      { event_id: "event-1", type: "transferops.dispatch.v1.OperationConfirmed", key: OP, at: new Date() },
      { event_id: "event-2", type: "transferops.dispatch.v1.OperationConfirmed", key: OP, at: new Date() },
      // Taken by fleet before the registration: owed to none.
      { event_id: "event-3", type: "transferops.dispatch.v1.OperationConfirmed", key: OP, at: new Date(0) },
    ];
    const problems = await findings(judge([delivery({})], { outbox }), true);
    expect(problems).toHaveLength(1);
    expect(problems[0]).toMatch(/webhook \/hooks\/1 .* never received operation.confirmed event-2/);
  });
});
