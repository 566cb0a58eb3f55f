import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { createServer, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger, served, startGrpcServer, type GrpcServer } from "@transferops/kit";
import { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import { FleetService } from "@transferops/kit/gen/transferops/fleet/v1/fleet_service_pb";
import { createGatewayApp } from "../app.ts";
import { connectServices } from "../services.ts";

// Fleet accepts the API key at once; dispatch takes the create and never answers in time
// (as a replica stuck behind a lock, or one that dies mid-call): the gateway cannot know
// whether the operation was created.
let services: GrpcServer;
let gateway: Server;
let url: string;
let creates = 0;

beforeAll(async () => {
  const log = createLogger("test", { level: "silent" });
  services = await startGrpcServer({
    name: "stub",
    port: 0,
    log,
    services: [
      served(FleetService, { authenticate: () => ({ caller: { kind: "api_key" } }) }),
      served(DispatchService, {
        createOperation: (_req, ctx) =>
          new Promise((_resolve, reject) => {
            creates += 1;
            ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason as Error));
          }),
      }),
    ],
  });
  const app = createGatewayApp({
    services: connectServices({
      fleet: services.url,
      dispatch: services.url,
      evidence: services.url,
      intake: services.url,
      analytics: services.url,
      messaging: services.url,
    }),
    log,
    rateLimit: { ratePerS: 1000, burst: 1000 },
    requestTimeoutMs: 300,
  });
  gateway = await new Promise((resolve) => {
    const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
  });
  url = `http://127.0.0.1:${(gateway.address() as AddressInfo).port}`;
});

afterAll(async () => {
  await new Promise((resolve) => gateway?.close(resolve));
  await services?.close();
});

const createBody = (requestId: string) =>
  JSON.stringify({
    request_id: requestId,
    agent_id: "3f0c2a4e-8b1d-4c6f-9e2a-5d7b8c9d0e1f",
    operator: "operator_a",
    type_op: "deposit",
    montant: 1000,
    client: { msisdn: "670000001", nom: "Late" },
  });

describe("a call whose replica cancels it (a stopping replica that could not finish it: HTTP/2 CANCEL)", () => {
  it("answers 503 outcome unknown, not 500", async () => {
    // A dispatch replica that takes the call, then resets the stream as a stopping server does.
    let taken = 0;
    const dying = http2.createServer((_req, res) => {
      taken += 1;
      res.stream.close(http2.constants.NGHTTP2_CANCEL);
    });
    await new Promise<void>((resolve) => dying.listen(0, "127.0.0.1", resolve));
    const dispatchUrl = `http://127.0.0.1:${(dying.address() as AddressInfo).port}`;
    const app = createGatewayApp({
      services: connectServices({
        fleet: services.url,
        dispatch: dispatchUrl,
        evidence: services.url,
        intake: services.url,
        analytics: services.url,
        messaging: services.url,
      }),
      log: createLogger("test", { level: "silent" }),
      rateLimit: { ratePerS: 1000, burst: 1000 },
      requestTimeoutMs: 5000,
    });
    const gw = await new Promise<Server>((resolve) => {
      const s = createServer(app).listen(0, "127.0.0.1", () => resolve(s));
    });
    try {
      const res = await fetch(`http://127.0.0.1:${(gw.address() as AddressInfo).port}/v1/operations`, {
        method: "POST",
        headers: { "content-type": "application/json", "x-api-key": "any" },
        body: createBody("cancelled-1"),
      });
      expect(taken).toBeGreaterThan(0);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { context: { reason: string } }).context.reason).toBe("outcome_unknown");
    } finally {
      await new Promise((resolve) => gw.close(resolve));
      await new Promise((resolve) => dying.close(resolve));
    }
  });
});

describe("a request that runs out of its deadline", () => {
  it("answers 503 with Retry-After: outcome unknown, send the same request again", async () => {
    const res = await fetch(`${url}/v1/operations`, {
      method: "POST",
      headers: { "content-type": "application/json", "x-api-key": "any" },
      body: JSON.stringify({
        request_id: "deadline-1",
        agent_id: "3f0c2a4e-8b1d-4c6f-9e2a-5d7b8c9d0e1f",
        operator: "operator_a",
        type_op: "deposit",
        montant: 1000,
        client: { msisdn: "670000001", nom: "Late" },
      }),
    });
    expect(creates).toBe(1);
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("2");
    expect(await res.json()).toEqual({
      detail: expect.stringContaining("may or may not have taken effect"),
      code: "server_error",
      context: { reason: "outcome_unknown", retry_after_s: 2 },
    });
  });

  it("is documented on every route that calls a service", async () => {
    const doc = (await (await fetch(`${url}/v1/openapi.json`)).json()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description: string }> }>>;
    };
    const create = doc.paths["/v1/operations"].post.responses["503"];
    expect(create.description).toContain("outcome_unknown");
    const routes = Object.entries(doc.paths).flatMap(([p, methods]) =>
      Object.entries(methods).map(([m, op]) => [`${m} ${p}`, op.responses["503"]?.description ?? ""] as const),
    );
    for (const [route, description] of routes)
      if (route !== "get /v1/health") expect(description, route).toContain("outcome_unknown");
  });
});

describe("a service's connection reset mid-call (the replica killed)", () => {
  it("is an unknown outcome (503), not a 500; a refusal with its detail is not", async () => {
    const { outcomeUnknown } = await import("./errors.ts");
    const { Code, ConnectError } = await import("@connectrpc/connect");
    const { create } = await import("@bufbuild/protobuf");
    const { ErrorDetailSchema } = await import("@transferops/kit/gen/transferops/common/v1/errors_pb");
    const reset = outcomeUnknown(new ConnectError("read ECONNRESET", Code.Aborted));
    expect([reset?.status, reset?.context.reason]).toEqual([503, "outcome_unknown"]);
    const detail = create(ErrorDetailSchema, { code: "conflict", detail: "taken" });
    const refusal = new ConnectError("taken", Code.Aborted, undefined, [{ desc: ErrorDetailSchema, value: detail }]);
    expect(outcomeUnknown(refusal)).toBeUndefined();
  });
});
