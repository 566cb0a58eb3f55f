import { request, Agent, type IncomingMessage } from "node:http";
import { createServer as createTcpServer, type Socket } from "node:net";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import { eventually } from "../../test/support/eventually.ts";
import { loadGatewayConfig } from "./config.ts";
import { startGateway, type RunningGateway } from "./server.ts";

// Services that accept a connection and never answer: a request that calls one is still in
// flight when the gateway is told to stop, as it is during a rolling restart.
const held: Socket[] = [];
let bytesReceived = 0;
const silent = createTcpServer((socket) => {
  held.push(socket);
  socket.on("data", (chunk: Buffer) => (bytesReceived += chunk.length));
});
let gateway: RunningGateway;
const agent = new Agent({ keepAlive: true, maxSockets: 1 });

beforeAll(async () => {
  await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
  const config = loadGatewayConfig({
    PORT: "0",
    REQUEST_TIMEOUT_MS: "1500",
    FLEET_URL: url,
    DISPATCH_URL: url,
    EVIDENCE_URL: url,
    INTAKE_URL: url,
    ANALYTICS_URL: url,
    MESSAGING_URL: url,
  });
  gateway = await startGateway(config, createLogger("gateway", { level: "silent" }));
});
afterAll(async () => {
  agent.destroy();
  for (const s of held) s.destroy();
  await new Promise((resolve) => silent.close(resolve));
});

const get = (path: string): Promise<IncomingMessage> =>
  new Promise((resolve, reject) => {
    const req = request(`${gateway.url}${path}`, { agent }, (res) => {
      res.resume();
      res.on("end", () => resolve(res));
    });
    req.on("error", reject);
    req.end();
  });

describe("a stopping gateway", () => {
  it("keeps connections open while it runs, and answers what is in flight with Connection: close once told to stop", async () => {
    const before = await get("/v1/openapi.json");
    expect(before.statusCode).toBe(200);
    expect(before.headers.connection).toBe("keep-alive");

    // The health check calls every service; they never answer, so it is answered at its deadline.
    const sent = bytesReceived;
    const inFlight = get("/v1/health");
    await eventually(() => (bytesReceived > sent ? true : undefined), 5_000, "the health check calling the services");
    const stopped = gateway.stop();
    const res = await inFlight;
    expect(res.headers.connection).toBe("close");
    await stopped;
  });
});
