import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import { createGatewayApp } from "../app.ts";
import type { Services } from "../services.ts";
import { BOARD_CSP } from "./board.ts";

// The board's files through the real gateway app (no service is called to serve them): a
// built board of two files stands in for gateway/board/dist.
let server: Server;
let url: string;

beforeAll(async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), "board-"));
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(
    path.join(dir, "index.html"),
    '<!doctype html><script type="module" src="/board/assets/index-AbC123.js"></script>',
  );
  writeFileSync(path.join(dir, "assets", "index-AbC123.js"), "console.log(1);");
  const app = createGatewayApp({
    services: {} as Services,
    log: createLogger("gateway", { level: "silent" }),
    // One request per credential or address, then 429: the board must not spend it.
    rateLimit: { ratePerS: 0.001, burst: 1 },
    requestTimeoutMs: 1000,
    boardDir: dir,
  });
  server = await new Promise((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the board at /board", () => {
  it("serves index.html never cached, under a same-origin CSP that forbids framing and inline script", async () => {
    for (const p of ["/board", "/board/", "/board/index.html"]) {
      const res = await fetch(url + p);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(await res.text()).toContain("/board/assets/index-AbC123.js");
      const csp = res.headers.get("content-security-policy")!;
      expect(csp).toBe(BOARD_CSP);
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("connect-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
    }
  });

  it("caches hashed assets for a year, immutable", async () => {
    const res = await fetch(url + "/board/assets/index-AbC123.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/javascript/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await res.text()).toBe("console.log(1);");
  });

  it("answers 404 for a file it does not have, without falling through to the API", async () => {
    const res = await fetch(url + "/board/assets/missing.js");
    expect(res.status).toBe(404);
    expect(res.headers.get("cache-control")).toBeNull();
  });

  it("is served before the rate limiter: page loads do not spend the caller's requests", async () => {
    for (let i = 0; i < 5; i++) expect((await fetch(url + "/board/")).status).toBe(200);
    const first = await fetch(url + "/v1/no-such-route");
    const second = await fetch(url + "/v1/no-such-route");
    expect([first.status, second.status]).toEqual([404, 429]);
  });
});
