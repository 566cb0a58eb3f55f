import net from "node:net";
import type { AddressInfo } from "node:net";
import { create } from "@bufbuild/protobuf";
import { timestampFromDate } from "@bufbuild/protobuf/wkt";
import { Topics } from "@transferops/kit";
import { AlertRaisedSchema } from "@transferops/kit/gen/transferops/common/v1/alerts_pb";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually, type TestSystem } from "../../../../test/support/system.ts";
import { routeSystem } from "../../../../test/support/route-system.ts";
import { publishTestEvent } from "../../../../test/support/fleet-fixtures.ts";

// Outbound calls never reach inside: fleet as deployed (https only, no allow-list) but for one
// loopback address the operator listed, 127.0.0.3, where the delivery log's wording is seen.
// The targets are raw TCP listeners that count the connections they are offered.
interface Listener {
  server: net.Server;
  port: number;
  connections: number;
  sockets: Set<net.Socket>;
}
async function listen(host: string): Promise<Listener> {
  const l = { connections: 0, sockets: new Set() } as Listener;
  // Accepts and never answers: a target that makes a delivery time out.
  l.server = net.createServer((socket) => {
    l.connections += 1;
    l.sockets.add(socket);
    socket.on("error", () => undefined);
  });
  await new Promise<void>((r) => l.server.listen(0, host, () => r()));
  l.port = (l.server.address() as AddressInfo).port;
  return l;
}
async function closedPort(host: string): Promise<number> {
  const l = await listen(host);
  await new Promise((r) => l.server.close(r));
  return l.port;
}

let inside: Listener;
let allowed: Listener;
let sys: TestSystem;
let admin: { token: string };

beforeAll(async () => {
  inside = await listen("127.0.0.1");
  allowed = await listen("127.0.0.3");
});
afterAll(async () => {
  for (const l of [inside, allowed]) {
    if (!l) continue;
    for (const s of l.sockets) s.destroy();
    await new Promise((r) => l.server.close(r));
  }
});
routeSystem(
  {
    prefix: "egress",
    env: {
      WEBHOOK_POLL_MS: "50",
      WEBHOOK_RETRY_BASE_MS: "60000",
      WEBHOOK_TIMEOUT_MS: "1000",
      WEBHOOK_ALLOWED_ADDRESSES: "127.0.0.3",
    },
  },
  (s) => ({ sys, admin } = s),
);

const createHook = (url: string) =>
  sys.api.post("/v1/admin/webhooks", { token: admin.token, body: { url, events: ["alert.raised"] } });

type Attempt = { status_code: number | null; error: string | null };
const firstAttempt = (webhookId: string) =>
  eventually(
    async () => {
      const r = await sys.api.get(`/v1/admin/webhooks/${webhookId}/deliveries`, { token: admin.token });
      const attempts = (r.body as { attempts: Attempt[] }[])[0]?.attempts ?? [];
      return attempts.length > 0 ? attempts[0] : undefined;
    },
    30_000,
    "a delivery attempt",
  );

let raised = 0;
const raise = () =>
  publishTestEvent(sys, {
    topic: Topics.alerts,
    key: `egress-${++raised}`,
    schema: AlertRaisedSchema,
    message: create(AlertRaisedSchema, {
      kind: "test",
      severity: "warning",
      message: `Egress ${raised}`,
      context: {},
      raisedAt: timestampFromDate(new Date()),
      dedupeKey: `egress-${raised}`,
    }),
  });

describe("webhook registration", () => {
  it.each([
    ["loopback", () => `https://127.0.0.1:${inside.port}/x`],
    ["IPv6 loopback", () => `https://[::1]:${inside.port}/x`],
    ["IPv4-mapped loopback", () => `https://[::ffff:127.0.0.1]:${inside.port}/x`],
    ["a name resolving to loopback", () => `https://localhost:${inside.port}/x`],
    ["a private address", () => "https://10.0.0.1/x"],
    ["a private address (192.168)", () => "https://192.168.1.10/x"],
    ["link-local", () => "https://[fe80::1]/x"],
    ["the cloud metadata address", () => "https://169.254.169.254/latest/meta-data/"],
    ["multicast", () => "https://224.0.0.251/x"],
    ["http without the operator's setting", () => "http://hooks.example.test/x"],
  ])("refuses %s with 422", async (_name, url) => {
    const r = await createHook(url());
    expect(r.status).toBe(422);
    expect(r.body).toMatchObject({ code: "invalid_request" });
    expect(JSON.stringify(r.body)).toContain("url");
  });

  it("accepts https to an address the operator listed, and to a name", async () => {
    expect((await createHook(`https://127.0.0.3:${allowed.port}/x`)).status).toBe(201);
    expect((await createHook("https://hooks.example.test/x")).status).toBe(201);
  });
});

describe("webhook delivery", () => {
  it("is refused when the name now resolves inside (as after DNS rebinding): no connection, the log says refused", async () => {
    // Registered while its name resolved outside (here: not at all), then the name points at
    // loopback, where something listens.
    const hook = await createHook("https://rebound.example.test/x");
    expect(hook.status).toBe(201);
    const id = (hook.body as { webhook_id: string }).webhook_id;
    await sys.db.query(`update fleet.webhooks set url = $2 where id = $1`, [id, `https://localhost:${inside.port}/x`]);
    const before = inside.connections;
    await raise();
    const attempt = await firstAttempt(id);
    expect(attempt).toEqual(expect.objectContaining({ status_code: null, error: "refused" }));
    expect(inside.connections).toBe(before);
    await sys.db.query(`delete from fleet.webhooks where id = $1`, [id]);
  });

  it("logs only refused or timeout, never what lies behind an address (no port scan)", async () => {
    const closed = await closedPort("127.0.0.3");
    const toClosed = (await createHook(`https://127.0.0.3:${closed}/x`)).body as { webhook_id: string };
    const toSilent = (await createHook(`https://127.0.0.3:${allowed.port}/x`)).body as { webhook_id: string };
    await raise();
    expect(await firstAttempt(toClosed.webhook_id)).toEqual(
      expect.objectContaining({ status_code: null, error: "refused" }),
    );
    expect(await firstAttempt(toSilent.webhook_id)).toEqual(
      expect.objectContaining({ status_code: null, error: "timeout" }),
    );
    expect(allowed.connections).toBeGreaterThan(0);
  });
});
