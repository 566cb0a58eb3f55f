// The poll benchmark's what-if: the gateway as gateway/src/main.ts runs it, except that
// fleet's Authenticate answers are cached for BENCH_AUTH_CACHE_TTL_MS (keyed by the
// credential kind and the SHA-256 of the secret; refusals are not cached). It measures the
// gateway-side cache proposed in docs/decisions/dispatch.md; the gateway itself is unchanged.
import { createHash } from "node:crypto";
import type { AddressInfo } from "node:net";
import { createLogger } from "@transferops/kit";
import { createGatewayApp } from "../../gateway/src/app.ts";
import { loadGatewayConfig, serviceUrlsOf } from "../../gateway/src/config.ts";
import { connectServices, type Services } from "../../gateway/src/services.ts";

const ttlMs = Number(process.env.BENCH_AUTH_CACHE_TTL_MS ?? 5000);
const config = loadGatewayConfig();
const log = createLogger("gateway", { level: config.LOG_LEVEL });
const services = connectServices(serviceUrlsOf(config));
const cache = new Map<string, { at: number; answer: Awaited<ReturnType<Services["fleet"]["authenticate"]>> }>();
const authenticate = services.fleet.authenticate.bind(services.fleet);
const cachedFleet = new Proxy(services.fleet, {
  get(target, prop, receiver) {
    if (prop !== "authenticate") return Reflect.get(target, prop, receiver);
    return async (req: Parameters<Services["fleet"]["authenticate"]>[0]) => {
      const key = `${req.credentialKind}:${createHash("sha256")
        .update(req.secret ?? "")
        .digest("base64url")}`;
      const hit = cache.get(key);
      const now = Date.now();
      if (hit && now - hit.at < ttlMs) return hit.answer;
      const answer = await authenticate(req);
      cache.set(key, { at: now, answer });
      return answer;
    };
  },
});
const app = createGatewayApp({
  services: { ...services, fleet: cachedFleet },
  log,
  rateLimit: { ratePerS: config.RATE_LIMIT_RPS, burst: config.RATE_LIMIT_BURST },
  requestTimeoutMs: config.REQUEST_TIMEOUT_MS,
});
const server = app.listen(config.PORT, process.env.HOST ?? "127.0.0.1", () => {
  log.info({ port: (server.address() as AddressInfo).port, ttlMs }, "gateway (bench: authentication cache) listening");
});
server.keepAliveTimeout = 65_000;
process.on("SIGTERM", () => server.close(() => process.exit(0)));
