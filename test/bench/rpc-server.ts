// Child of the RPC benchmark (rpc.ts): one server answering grpc.health.v1 `Check`, in the
// shape named by argv[2], printing its URL as a JSON line, then its CPU use (process.cpuUsage,
// µs) each time a line arrives on stdin.
//
//   kit        the kit's server (startGrpcServer: h2c; gRPC, Connect, gRPC-web; its interceptor)
//   h2         connect-node's adapter alone on h2c (no interceptor)
//   h1         connect-node's adapter alone on HTTP/1.1 (node:http, keep-alive)
//   hello-h1   node:http answering 200 "ok" (the reference)
//   hello-h2   node:http2 answering 200 "ok" (the reference over HTTP/2)
import http from "node:http";
import http2 from "node:http2";
import type { AddressInfo } from "node:net";
import readline from "node:readline";
import type { ConnectRouter } from "@connectrpc/connect";
import { connectNodeAdapter } from "@connectrpc/connect-node";
import { createLogger, startGrpcServer } from "@transferops/kit";
import { Health, HealthCheckResponse_ServingStatus as Status } from "@transferops/kit/gen/grpc/health/v1/health_pb";

const mode = process.argv[2];
const routes = (router: ConnectRouter) => router.service(Health, { check: () => ({ status: Status.SERVING }) });

async function listen(server: http.Server | http2.Http2Server): Promise<string> {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

async function start(): Promise<string> {
  switch (mode) {
    case "kit":
      return (
        await startGrpcServer({ name: "bench", port: 0, services: [], log: createLogger("bench", { level: "warn" }) })
      ).url;
    case "h2":
      return listen(http2.createServer(connectNodeAdapter({ routes })));
    case "h1": {
      const server = http.createServer(connectNodeAdapter({ routes }));
      server.keepAliveTimeout = 65_000;
      return listen(server);
    }
    case "hello-h1": {
      const server = http.createServer((_req, res) => res.writeHead(200, { "content-type": "text/plain" }).end("ok"));
      server.keepAliveTimeout = 65_000;
      return listen(server);
    }
    case "hello-h2":
      return listen(
        http2.createServer((_req, res) => {
          res.writeHead(200, { "content-type": "text/plain" }).end("ok");
        }),
      );
    default:
      throw new Error(`unknown server ${mode}`);
  }
}

const url = await start();
process.stdout.write(`${JSON.stringify({ url })}\n`);
readline.createInterface({ input: process.stdin }).on("line", () => {
  process.stdout.write(`${JSON.stringify(process.cpuUsage())}\n`);
});
process.stdin.on("end", () => process.exit(0));
