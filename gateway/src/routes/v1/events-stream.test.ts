import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import { createGatewayApp } from "../../app.ts";
import type { Services } from "../../services.ts";
import { hintsBetween } from "./events.ts";

// The stream's timing through the real gateway app with stand-in services (the lists the
// stream reads): heartbeats, and no request deadline on a stream that lives longer than it.
let server: Server;
let url: string;
const operations: { operationId: string; status: string }[] = [];

const services = {
  fleet: {
    authenticate: async () => ({
      caller: { kind: "session", agentId: "a", role: "agent", isActive: true, mustChangePassword: false },
    }),
  },
  dispatch: {
    listOperations: async () => ({ operations: [...operations] }),
    listUnproven: async () => ({ operations: [] }),
  },
  intake: { listTransactions: async () => ({ transactions: [] }) },
  evidence: { listUnmatchedEvidence: async () => ({ evidences: [] }) },
} as unknown as Services;

beforeAll(async () => {
  const app = createGatewayApp({
    services,
    log: createLogger("gateway", { level: "silent" }),
    rateLimit: { ratePerS: 100, burst: 100 },
    requestTimeoutMs: 300,
    eventStream: { pollMs: 100, heartbeatMs: 200 },
  });
  server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => {
  server.closeAllConnections();
  return new Promise<void>((resolve) => server.close(() => resolve()));
});

describe("the event stream's timing", () => {
  it("sends heartbeats and hints long after the request deadline has passed", async () => {
    const abort = new AbortController();
    const res = await fetch(url + "/v1/events", { headers: { authorization: "Bearer t" }, signal: abort.signal });
    expect(res.status).toBe(200);
    const reader = res.body!.pipeThrough(new TextDecoderStream()).getReader();
    let text = "";
    const started = Date.now();
    // Past three request deadlines (300 ms each), then a change to hint.
    while (Date.now() - started < 1000) text += (await reader.read()).value ?? "";
    operations.push({ operationId: "op-1", status: "queued" });
    while (!text.includes('"op-1"')) text += (await reader.read()).value ?? "";
    abort.abort();
    expect(text).toContain("event: ready");
    expect(text.match(/^: heartbeat /gm)!.length).toBeGreaterThanOrEqual(3);
    expect(text).toContain('event: operation\ndata: {"kind":"operation","id":"op-1","status":"queued"}');
  });
});

describe("hintsBetween", () => {
  const view = (op: [string, string][]) => ({
    operation: new Map(op),
    transaction: new Map<string, string>(),
    message: new Map<string, string>(),
    alert: new Map<string, string>(),
  });
  it("names what appeared, what changed (with its new status) and what left", () => {
    expect(
      hintsBetween(
        view([
          ["a", "queued"],
          ["b", "running"],
        ]),
        view([
          ["a", "queued"],
          ["b", "awaiting_evidence"],
          ["c", "queued"],
        ]),
      ),
    ).toEqual([
      { kind: "operation", id: "b", status: "awaiting_evidence" },
      { kind: "operation", id: "c", status: "queued" },
    ]);
    expect(hintsBetween(view([["a", "queued"]]), view([]))).toEqual([{ kind: "operation", id: "a", status: "gone" }]);
  });
});
