import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serviceClient } from "./client.ts";
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
