import { mkdtempSync, mkdirSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import type { AddressInfo } from "node:net";
import { request, type Server } from "node:http";
import { brotliCompressSync, brotliDecompressSync, gunzipSync, gzipSync } from "node:zlib";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@transferops/kit";
import { createGatewayApp } from "../app.ts";
import type { Services } from "../services.ts";
import { BOARD_CSP, boardCsp } from "./board.ts";

// The board's files through the real gateway app (no service is called to serve them): a
// built board of two files stands in for gateway/board/dist.
let server: Server;
let url: string;
let dir: string;
const JS = "console.log(1);";
const INDEX = '<!doctype html><script type="module" src="/board/assets/index-AbC123.js"></script>';
// The hashes a build writes for index.html's inline script and style (vite.config.ts).
const SCRIPT_HASH = "'sha256-YlG6XrQk6VkjQ0BzDVjQwTkFW0+N0vJJbfTRSAxP8/c='";
const STYLE_HASH = "'sha256-YH8TfecEn/EhZ8DsO3Npeugc1bbk5VJUflJ/Nh5A0Ys='";

/** A raw GET (fetch would decode the body and hide the encoding). */
function get(p: string, acceptEncoding?: string): Promise<{ headers: Record<string, unknown>; body: Buffer }> {
  return new Promise((resolve, reject) => {
    const req = request(url + p, { headers: acceptEncoding ? { "accept-encoding": acceptEncoding } : {} }, (r) => {
      const chunks: Buffer[] = [];
      r.on("data", (c: Buffer) => chunks.push(c));
      r.on("end", () => resolve({ headers: { ...r.headers, status: r.statusCode }, body: Buffer.concat(chunks) }));
    });
    req.on("error", reject);
    req.end();
  });
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(os.tmpdir(), "board-"));
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(path.join(dir, "index.html"), INDEX);
  writeFileSync(path.join(dir, "index.html.br"), brotliCompressSync(INDEX));
  writeFileSync(path.join(dir, "index.html.gz"), gzipSync(INDEX));
  writeFileSync(path.join(dir, "csp.json"), JSON.stringify({ "script-src": [SCRIPT_HASH], "style-src": [STYLE_HASH] }));
  writeFileSync(path.join(dir, "assets", "index-AbC123.js"), "console.log(1);");
  // A build's precompressed copies (vite.config.ts writes them), and the icon.
  writeFileSync(path.join(dir, "assets", "index-AbC123.js.br"), brotliCompressSync(JS));
  writeFileSync(path.join(dir, "assets", "index-AbC123.js.gz"), gzipSync(JS));
  writeFileSync(path.join(dir, "assets", "only-gz.css"), "a{}");
  writeFileSync(path.join(dir, "assets", "only-gz.css.gz"), gzipSync("a{}"));
  mkdirSync(path.join(dir, "csp-test"));
  writeFileSync(path.join(dir, "favicon.svg"), '<svg xmlns="http://www.w3.org/2000/svg"/>');
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
  it("serves index.html never cached, under a same-origin CSP that allows its inline script and style by hash only", async () => {
    for (const p of ["/board", "/board/", "/board/index.html"]) {
      const res = await fetch(url + p);
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control")).toBe("no-cache");
      expect(await res.text()).toBe(INDEX);
      const csp = res.headers.get("content-security-policy")!;
      expect(csp.split("; ")).toEqual(
        expect.arrayContaining([
          `script-src 'self' ${SCRIPT_HASH}`,
          `style-src 'self' ${STYLE_HASH}`,
          "connect-src 'self'",
          "default-src 'none'",
          "frame-ancestors 'none'",
        ]),
      );
      expect(csp).not.toContain("unsafe-inline");
    }
  });

  it("sends index.html precompressed as the browser accepts it, and plain to one that accepts neither", async () => {
    const br = await get("/board/", "gzip, br");
    expect([br.headers["content-encoding"], br.headers["content-type"], br.headers["vary"]]).toEqual([
      "br",
      "text/html; charset=utf-8",
      "Accept-Encoding",
    ]);
    expect(br.headers["cache-control"]).toBe("no-cache");
    expect(brotliDecompressSync(br.body).toString()).toBe(INDEX);
    const gz = await get("/board/index.html", "gzip");
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).toString()).toBe(INDEX);
    const plain = await get("/board/", "identity");
    expect([plain.headers["content-encoding"], plain.body.toString()]).toEqual([undefined, INDEX]);
  });

  it("adds to the policy only sha256 hashes from the build's csp.json, and none without it", () => {
    writeFileSync(
      path.join(dir, "csp-test", "csp.json"),
      JSON.stringify({ "script-src": ["'unsafe-inline'", SCRIPT_HASH, "*"], "style-src": "'unsafe-inline'" }),
    );
    const csp = boardCsp(path.join(dir, "csp-test"));
    expect(csp).toContain(`script-src 'self' ${SCRIPT_HASH};`);
    expect(csp).toContain("style-src 'self';");
    expect(csp).not.toContain("unsafe-inline");
    expect(boardCsp(path.join(dir, "assets"))).toBe(BOARD_CSP);
    expect(BOARD_CSP).not.toContain("sha256");
  });

  it("caches hashed assets for a year, immutable", async () => {
    const res = await fetch(url + "/board/assets/index-AbC123.js");
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/javascript/);
    expect(res.headers.get("cache-control")).toBe("public, max-age=31536000, immutable");
    expect(await res.text()).toBe("console.log(1);");
  });

  it("sends the precompressed copy the browser accepts, brotli first, typed as the file and varying by encoding", async () => {
    const br = await get("/board/assets/index-AbC123.js", "gzip, deflate, br");
    expect([br.headers["content-encoding"], br.headers["content-type"], br.headers["vary"]]).toEqual([
      "br",
      "text/javascript; charset=utf-8",
      "Accept-Encoding",
    ]);
    expect(br.headers["cache-control"]).toBe("public, max-age=31536000, immutable");
    expect(brotliDecompressSync(br.body).toString()).toBe(JS);
    const gz = await get("/board/assets/index-AbC123.js", "gzip, br;q=0");
    expect(gz.headers["content-encoding"]).toBe("gzip");
    expect(gunzipSync(gz.body).toString()).toBe(JS);
    const css = await get("/board/assets/only-gz.css", "br, gzip");
    expect([css.headers["content-encoding"], css.headers["content-type"]]).toEqual(["gzip", "text/css; charset=utf-8"]);
    for (const none of [undefined, "identity", "br;q=0, gzip;q=0"]) {
      const plain = await get("/board/assets/index-AbC123.js", none);
      expect(plain.headers["content-encoding"]).toBeUndefined();
      expect(plain.body.toString()).toBe(JS);
    }
  });

  it("serves its icon", async () => {
    const res = await get("/board/favicon.svg");
    expect([res.headers.status, res.headers["content-type"]]).toEqual([200, "image/svg+xml"]);
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
