// The image's HEALTHCHECK: asks the running component whether it serves.
// The gateway: GET /v1/health on PORT. A service: grpc.health.v1.Health/Check on GRPC_PORT
// (raw HTTP/2, no dependencies, so the check starts in a few milliseconds).
// The component is read from PID 1's command line (the image's ENTRYPOINT and CMD).
import { readFileSync } from "node:fs";
import http from "node:http";
import http2 from "node:http2";

const DEFAULT_PORTS = {
  fleet: 50051,
  dispatch: 50052,
  evidence: 50053,
  intake: 50054,
  analytics: 50055,
  messaging: 50056,
};
const TIMEOUT_MS = 3000;

const argv = readFileSync("/proc/1/cmdline", "utf8").split("\0");
const component = argv.find((a) => a === "gateway" || a === "migrate" || a in DEFAULT_PORTS) ?? "gateway";
const done = (ok, why) => {
  if (!ok) console.error(`unhealthy: ${component}: ${why}`);
  process.exit(ok ? 0 : 1);
};
setTimeout(() => done(false, "timeout"), TIMEOUT_MS).unref();

if (component === "migrate") {
  done(true);
} else if (component === "gateway") {
  const port = Number(process.env.PORT ?? 8080);
  http
    .get({ host: "127.0.0.1", port, path: "/v1/health" }, (res) => {
      res.resume();
      done(res.statusCode === 200, `HTTP ${res.statusCode}`);
    })
    .on("error", (err) => done(false, err.message));
} else {
  const port = Number(process.env.GRPC_PORT ?? DEFAULT_PORTS[component]);
  const session = http2.connect(`http://127.0.0.1:${port}`);
  session.on("error", (err) => done(false, err.message));
  const req = session.request({
    ":method": "POST",
    ":path": "/grpc.health.v1.Health/Check",
    "content-type": "application/grpc",
    te: "trailers",
  });
  const chunks = [];
  req.on("data", (c) => chunks.push(c));
  req.on("error", (err) => done(false, err.message));
  req.on("end", () => {
    // One gRPC frame: flag, length, then HealthCheckResponse { status = 1 (SERVING) } = 08 01.
    const body = Buffer.concat(chunks);
    done(body.length >= 7 && body[5] === 0x08 && body[6] === 0x01, `response ${body.toString("hex")}`);
  });
  req.end(Buffer.alloc(5)); // an empty HealthCheckRequest: service "" (the whole server)
}
