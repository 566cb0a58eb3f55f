import { createHmac } from "node:crypto";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Topics } from "@transferops/kit";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import { OperationSchema } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import {
  OperationConfirmedSchema,
  OperationFailedSchema,
} from "@transferops/kit/gen/transferops/dispatch/v1/events_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import {
  ADMIN_ONLY,
  publishTestEvent,
  statusesFor,
  type Credentials,
} from "../../../../test/support/fleet-fixtures.ts";
import { UNKNOWN_ID, LOCAL_WEBHOOKS } from "../../../../test/support/constants.ts";

// A receiver on a real local port: records every request, answers from a script per path.
interface Received {
  path: string;
  headers: http.IncomingHttpHeaders;
  body: string;
  at: number;
}
const received: Received[] = [];
const script = new Map<string, number[]>();
let receiver: http.Server;
let base: string;

let sys: TestSystem;
let admin: { token: string; agentId: string };
let creds: Credentials & { deviceId: string };

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      const path = req.url ?? "/";
      received.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString("utf8"), at: Date.now() });
      const answers = script.get(path) ?? [];
      res.statusCode = answers.length > 1 ? answers.shift()! : (answers[0] ?? 200);
      res.end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", () => r()));
  base = `http://127.0.0.1:${(receiver.address() as AddressInfo).port}`;
});
// After hooks run last-registered first: the system stops before the receiver closes.
afterAll(() => new Promise((r) => receiver?.close(r)));
routeSystem(
  {
    prefix: "ntf",
    // Fast retries for the test: first retry after 200 ms, doubling, given up after 3 s.
    env: {
      WEBHOOK_POLL_MS: "50",
      WEBHOOK_RETRY_BASE_MS: "200",
      WEBHOOK_GIVE_UP_AFTER_S: "3",
      WEBHOOK_TIMEOUT_MS: "2000",
      // The receiver is on this machine: http and loopback allowed explicitly, as an operator would.
      ...LOCAL_WEBHOOKS,
    },
  },
  (s) => ({ sys, admin, creds } = s),
);

type Notification = {
  notification_id: string;
  kind: string;
  severity: string;
  message: string;
  acknowledged_at: string | null;
  acknowledged_by: string | null;
  context: Record<string, unknown>;
};
const listNotifications = async (q = ""): Promise<Notification[]> =>
  (await sys.api.get(`/v1/admin/notifications${q}`, { token: admin.token })).body;

/** An alert from "another service", on the alerts topic. */
const raise = (o: { kind: string; dedupe: string; message?: string; operationId?: string }) =>
  publishTestEvent(sys, {
    topic: Topics.alerts,
    key: o.operationId ?? o.dedupe,
    schema: AlertRaisedSchema,
    message: create(AlertRaisedSchema, {
      kind: o.kind,
      severity: "warning",
      message: o.message ?? `Alert ${o.dedupe}`,
      operationId: o.operationId ?? "",
      context: { expected: 5000, found: 500 },
      raisedAt: timestampFromDate(new Date()),
      dedupeKey: o.dedupe,
    }),
  });

const notificationBy = (message: string) =>
  eventually(
    async () => (await listNotifications("?limit=250")).find((n) => n.message === message),
    30_000,
    `notification "${message}"`,
  );

describe("notifications", () => {
  it("stores an alert raised by any service once per dedupe key", async () => {
    const op = "11111111-1111-4111-8111-111111111111";
    await raise({
      kind: "evidence_divergent",
      dedupe: "divergent:1",
      message: "Amount diverges on op 1",
      operationId: op,
    });
    await raise({
      kind: "evidence_divergent",
      dedupe: "divergent:1",
      message: "Amount diverges on op 1",
      operationId: op,
    });
    await raise({ kind: "evidence_divergent", dedupe: "divergent:2", message: "Amount diverges on op 2" });
    const n = await notificationBy("Amount diverges on op 1");
    await notificationBy("Amount diverges on op 2");
    expect(n).toMatchObject({
      kind: "evidence_divergent",
      severity: "warning",
      operation_id: op,
      sim_id: null,
      device_id: null,
      context: { expected: 5000, found: 500 },
      acknowledged_at: null,
    });
    expect((await listNotifications("?limit=250")).filter((x) => x.message === "Amount diverges on op 1")).toHaveLength(
      1,
    );
  });

  it("acknowledges once (idempotent) and filters on acknowledged", async () => {
    await raise({ kind: "test", dedupe: "ack:1", message: "To acknowledge" });
    const n = await notificationBy("To acknowledge");
    const first = await sys.api.post(`/v1/admin/notifications/${n.notification_id}/ack`, { token: admin.token });
    expect(first.status).toBe(200);
    expect(first.body).toMatchObject({ notification_id: n.notification_id, acknowledged_by: admin.agentId });
    expect(first.body.acknowledged_at).toMatch(/^\d{4}-/);
    const second = await sys.api.post(`/v1/admin/notifications/${n.notification_id}/ack`, { token: admin.token });
    expect(second.body.acknowledged_at).toBe(first.body.acknowledged_at);
    const open = await listNotifications("?acknowledged=false&limit=250");
    const done = await listNotifications("?acknowledged=true&limit=250");
    expect(open.map((x) => x.notification_id)).not.toContain(n.notification_id);
    expect(done.map((x) => x.notification_id)).toContain(n.notification_id);
    expect(done.every((x) => x.acknowledged_at !== null)).toBe(true);
    expect(open.every((x) => x.acknowledged_at === null)).toBe(true);
  });

  it("answers 404 for an unknown notification and 422 for a malformed id or query", async () => {
    expect((await sys.api.post(`/v1/admin/notifications/${UNKNOWN_ID}/ack`, { token: admin.token })).status).toBe(404);
    expect((await sys.api.post(`/v1/admin/notifications/nope/ack`, { token: admin.token })).status).toBe(422);
    expect((await sys.api.get(`/v1/admin/notifications?limit=0`, { token: admin.token })).status).toBe(422);
  });
});

describe("webhooks", () => {
  const createHook = (body: Record<string, unknown>) =>
    sys.api.post("/v1/admin/webhooks", { token: admin.token, body });
  const deliveries = async (id: string) =>
    (await sys.api.get(`/v1/admin/webhooks/${id}/deliveries`, { token: admin.token })).body;

  it("registers an endpoint: the secret is returned once, stored encrypted, never listed", async () => {
    const secret = "my-webhook-secret-0123456789";
    const res = await createHook({ url: `${base}/register`, secret });
    expect(res.status).toBe(201);
    expect(res.body).toMatchObject({
      url: `${base}/register`,
      secret,
      events: ["operation.confirmed", "operation.failed", "alert.raised"],
      created_by: admin.agentId,
    });
    const list = await sys.api.get("/v1/admin/webhooks", { token: admin.token });
    expect(list.body.find((w: { webhook_id: string }) => w.webhook_id === res.body.webhook_id)).not.toHaveProperty(
      "secret",
    );
    expect(JSON.stringify(list.body)).not.toContain(secret);
    const [row] = await sys.db.query(
      `select secret_key_id, secret_ciphertext, row_to_json(w)::text as whole from fleet.webhooks w where id = $1`,
      [res.body.webhook_id],
    );
    expect(row.secret_key_id).toBe("local");
    expect(row.whole).not.toContain(secret);
    const generated = await createHook({ url: `${base}/generated` });
    expect(generated.body.secret).toMatch(/^whsec_/);
  });

  it.each([
    ["a URL that is not http(s)", { url: "ftp://example.com/x" }],
    ["a relative URL", { url: "/hook" }],
    ["a URL with credentials", { url: "http://user:pw@127.0.0.1/x" }],
    ["a short secret", { url: "http://127.0.0.1/x", secret: "short" }],
    ["an unknown event type", { url: "http://127.0.0.1/x", events: ["operation.created"] }],
  ])("refuses %s with 422", async (_name, body) => {
    const res = await createHook(body);
    expect(res.status).toBe(422);
    expect(res.body.code).toBe("invalid_request");
  });

  it("delivers an alert signed with HMAC-SHA256 over timestamp.body, retrying after a failure, recording every attempt", async () => {
    const secret = "alert-signing-secret-0123456789";
    script.set("/alerts", [500, 200]);
    const hook = (await createHook({ url: `${base}/alerts`, secret, events: ["alert.raised"] })).body;
    await raise({ kind: "low_balance", dedupe: "deliver:1", message: "Deliver me" });
    const n = await notificationBy("Deliver me");
    const list = await eventually(
      async () => {
        const d = await deliveries(hook.webhook_id);
        return d[0]?.status === "delivered" ? d : undefined;
      },
      30_000,
      "the delivery to succeed",
    );
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      event_type: "alert.raised",
      event_id: n.notification_id,
      status: "delivered",
      attempt_count: 2,
      next_attempt_at: null,
    });
    expect(
      list[0].attempts.map((a: { attempt: number; status_code: number; error: string | null }) => [
        a.attempt,
        a.status_code,
        a.error,
      ]),
    ).toEqual([
      [1, 500, "HTTP 500"],
      [2, 200, null],
    ]);
    expect(list[0].payload).toMatchObject({
      event_type: "alert.raised",
      event_id: n.notification_id,
      data: { kind: "low_balance", message: "Deliver me", notification_id: n.notification_id },
    });

    const requests = received.filter((r) => r.path === "/alerts");
    expect(requests).toHaveLength(2);
    for (const r of requests) {
      const timestamp = String(r.headers["x-timestamp"]);
      expect(Math.abs(Number(timestamp) - Date.now() / 1000)).toBeLessThan(60);
      const expected = "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${r.body}`).digest("hex");
      expect(r.headers["x-signature"]).toBe(expected);
      expect(r.headers["x-event-type"]).toBe("alert.raised");
      expect(r.headers["x-event-id"]).toBe(n.notification_id);
      expect(r.headers["content-type"]).toBe("application/json");
    }
    expect(requests[0].body).toBe(requests[1].body);
    expect(requests[1].at - requests[0].at).toBeGreaterThanOrEqual(150);
    expect(JSON.parse(requests[0].body)).toEqual(list[0].payload);
  });

  it("backs off exponentially and gives up after the bounded retry period", async () => {
    script.set("/down", [503]);
    const hook = (await createHook({ url: `${base}/down`, secret: "down-secret-0123456789", events: ["alert.raised"] }))
      .body;
    await raise({ kind: "test", dedupe: "down:1", message: "Never delivered" });
    const [failed] = await eventually(
      async () => {
        const d = await deliveries(hook.webhook_id);
        return d[0]?.status === "failed" ? d : undefined;
      },
      30_000,
      "the delivery to be given up",
    );
    const times = failed.attempts.map((a: { attempted_at: string }) => new Date(a.attempted_at).getTime());
    expect(times.length).toBeGreaterThanOrEqual(3);
    // Each wait is at least the policy's: 200 ms, then doubled after every failure.
    const gaps = times.slice(1).map((t: number, i: number) => t - times[i]);
    gaps.forEach((gap: number, i: number) => expect(gap).toBeGreaterThanOrEqual(200 * 2 ** i - 5));
    // Bounded: no attempt is scheduled past 3 s after the event (plus one poll of slack).
    expect(times[times.length - 1] - times[0]).toBeLessThan(3_500);
    expect(failed.attempts.every((a: { status_code: number }) => a.status_code === 503)).toBe(true);
    // Given up: the last attempt is the last request the receiver sees.
    expect(received.filter((r) => r.path === "/down")).toHaveLength(failed.attempt_count);
    expect(failed.next_attempt_at).toBeNull();
  });

  it("delivers operation.confirmed and operation.failed from dispatch's events, only to endpoints that subscribed", async () => {
    const confirmedHook = (
      await createHook({ url: `${base}/confirmed`, secret: "ops-secret-0123456789", events: ["operation.confirmed"] })
    ).body;
    const failedHook = (
      await createHook({ url: `${base}/failed`, secret: "ops-secret-0123456789", events: ["operation.failed"] })
    ).body;
    const operation = create(OperationSchema, {
      operationId: "22222222-2222-4222-8222-222222222222",
      requestId: "req-webhook-1",
      status: "confirmed",
      origin: "aggregated",
      opType: "deposit",
      agentId: "33333333-3333-4333-8333-333333333333",
      operator: "operator_a",
      montant: 15000n,
      msisdnDest: "670000001",
      createdAt: timestampFromDate(new Date("2026-01-02T10:00:00Z")),
    });
    const confirmedId = await publishTestEvent(sys, {
      topic: Topics.operations,
      key: operation.operationId,
      schema: OperationConfirmedSchema,
      message: create(OperationConfirmedSchema, {
        operation,
        trigger: "proof",
        confirmedAt: timestampFromDate(new Date("2026-01-02T10:05:00Z")),
      }),
    });
    await publishTestEvent(sys, {
      topic: Topics.operations,
      key: "44444444-4444-4444-8444-444444444444",
      schema: OperationFailedSchema,
      message: create(OperationFailedSchema, {
        operation: { ...operation, operationId: "44444444-4444-4444-8444-444444444444", status: "rejected" },
        reason: "cancelled_by_agent",
      }),
    });
    const [confirmed] = await eventually(
      async () => {
        const d = await deliveries(confirmedHook.webhook_id);
        return d[0]?.status === "delivered" ? d : undefined;
      },
      30_000,
      "operation.confirmed to be delivered",
    );
    expect(confirmed).toMatchObject({ event_type: "operation.confirmed", event_id: confirmedId });
    expect(confirmed.payload.data).toMatchObject({
      trigger: "proof",
      confirmed_at: "2026-01-02T10:05:00.000Z",
      operation: {
        operation_id: operation.operationId,
        status: "confirmed",
        montant: 15000,
        msisdn_dest: "670000001",
        sim_id: null,
        created_at: "2026-01-02T10:00:00.000Z",
      },
    });
    const [failed] = await eventually(
      async () => {
        const d = await deliveries(failedHook.webhook_id);
        return d[0]?.status === "delivered" ? d : undefined;
      },
      30_000,
      "operation.failed to be delivered",
    );
    expect(failed.payload.data).toMatchObject({ reason: "cancelled_by_agent", operation: { status: "rejected" } });
    expect((await deliveries(confirmedHook.webhook_id)).map((d: { event_type: string }) => d.event_type)).toEqual([
      "operation.confirmed",
    ]);
  });

  it("deletes an endpoint with its deliveries; 404 afterwards and for unknown ids", async () => {
    const hook = (await createHook({ url: `${base}/gone` })).body;
    expect((await sys.api.delete(`/v1/admin/webhooks/${hook.webhook_id}`, { token: admin.token })).status).toBe(204);
    expect((await sys.api.get(`/v1/admin/webhooks/${hook.webhook_id}/deliveries`, { token: admin.token })).status).toBe(
      404,
    );
    expect((await sys.api.delete(`/v1/admin/webhooks/${hook.webhook_id}`, { token: admin.token })).status).toBe(404);
    const list = await sys.api.get("/v1/admin/webhooks", { token: admin.token });
    expect(list.body.map((w: { webhook_id: string }) => w.webhook_id)).not.toContain(hook.webhook_id);
    expect((await sys.api.get(`/v1/admin/webhooks/nope/deliveries`, { token: admin.token })).status).toBe(422);
  });
});

describe("roles", () => {
  it("notification and webhook routes are admin routes", async () => {
    const names = Object.keys(ADMIN_ONLY) as (keyof typeof ADMIN_ONLY)[];
    const routes: [string, string, unknown?][] = [
      ["GET", "/v1/admin/notifications"],
      ["POST", `/v1/admin/notifications/${UNKNOWN_ID}/ack`],
      ["POST", "/v1/admin/webhooks", { url: "ftp://x" }],
      ["GET", "/v1/admin/webhooks"],
      ["DELETE", `/v1/admin/webhooks/${UNKNOWN_ID}`],
      ["GET", `/v1/admin/webhooks/${UNKNOWN_ID}/deliveries`],
    ];
    const expected = { ...ADMIN_ONLY };
    for (const [method, path, body] of routes) {
      const statuses = await statusesFor(sys.api, creds, method as "GET", path, names, body);
      expect({ route: `${method} ${path}`, statuses }).toEqual({ route: `${method} ${path}`, statuses: expected });
    }
  });
});
