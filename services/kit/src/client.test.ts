import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceClient, SessionManager } from "./client.ts";
import { Health, HealthCheckResponse_ServingStatus as Status } from "./gen/grpc/health/v1/health_pb.ts";

// A server that refuses the first `refuse` streams it gets (as a replica past its GOAWAY
// does), then serves grpc.health.v1.
let server: http2.Http2Server;
let url: string;
let refuse = 0;
let served = 0;
let seen: http2.IncomingHttpHeaders = {};

beforeAll(async () => {
  const handler = connectNodeAdapter({
    routes: (router) =>
      router.service(Health, {
        check: () => {
          served += 1;
          return { status: Status.SERVING };
        },
      }),
    grpcWeb: false,
    connect: true,
  });
  server = http2.createServer((req, res) => {
    seen = req.headers;
    if (refuse > 0) {
      refuse -= 1;
      req.stream.close(http2.constants.NGHTTP2_REFUSED_STREAM);
      return;
    }
    handler(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await new Promise((resolve) => server?.close(resolve));
});

describe("a call whose stream the server refused", () => {
  it("is sent again (it was never processed) and answers", async () => {
    refuse = 2;
    served = 0;
    const res = await serviceClient(Health, url).check({});
    expect(res.status).toBe(Status.SERVING);
    expect(refuse).toBe(0);
    expect(served).toBe(1);
  });

  it("fails once the server keeps refusing", async () => {
    refuse = 10;
    await expect(serviceClient(Health, url).check({})).rejects.toThrow(/REFUSED_STREAM/);
    refuse = 0;
  });
});

describe("a call to another service", () => {
  it("goes out in gRPC over HTTP/2 (the services' one h2c port), as the design names it", async () => {
    refuse = 0;
    await serviceClient(Health, url).check({});
    expect(seen["content-type"]).toMatch(/^application\/grpc/);
  });

  it("asks for no compressed answer (gzip costs more CPU than it saves inside the cluster)", async () => {
    refuse = 0;
    await serviceClient(Health, url).check({});
    expect(`${seen["accept-encoding"] ?? ""} ${seen["grpc-accept-encoding"] ?? ""}`).not.toMatch(/gzip|br/);
  });
});

describe("a peer's GOAWAY on an idle session", () => {
  it("leaves no error without a listener when a call opens the next session before the old one has closed", async () => {
    // A peer that answers every stream at once, and sends GOAWAY when told.
    const sessions: http2.ServerHttp2Session[] = [];
    const peer = http2.createServer();
    peer.on("session", (s) => sessions.push(s));
    peer.on("stream", (stream) =>
      stream.respond({ ":status": 200, "content-type": "application/grpc", "grpc-status": "12" }, { endStream: true }),
    );
    await new Promise<void>((resolve) => peer.listen(0, "127.0.0.1", resolve));
    // The old session's end: its close, or the error nobody listened to.
    let ended = () => undefined as void;
    const end = new Promise<void>((resolve) => (ended = resolve));
    const uncaught: unknown[] = [];
    const onUncaught = (err: unknown) => {
      uncaught.push(err);
      ended();
    };
    process.on("uncaughtException", onUncaught);
    try {
      const manager = new SessionManager(`http://127.0.0.1:${(peer.address() as AddressInfo).port}`);
      const call = async () => {
        const stream = await manager.request("POST", "/x", {}, {});
        const session = stream.session!;
        stream.resume();
        await new Promise((resolve) => stream.once("close", resolve));
        return session;
      };
      const old = await call();
      // The manager handles the GOAWAY first (it destroys the idle session); a call in the
      // same turn then finds it destroyed and opens the next session.
      let next: Promise<unknown> = Promise.resolve();
      old.once("goaway", () => void (next = call()));
      sessions[0].goaway(http2.constants.NGHTTP2_NO_ERROR);
      old.once("close", ended);
      await end;
      await next;
      await new Promise((resolve) => setTimeout(resolve, 50));
      expect(old.destroyed).toBe(true);
      expect(sessions.length).toBe(2);
      expect(uncaught).toEqual([]);
      manager.abort();
    } finally {
      process.off("uncaughtException", onUncaught);
      await new Promise((resolve) => peer.close(resolve));
    }
  });
});
