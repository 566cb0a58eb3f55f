import { existsSync } from "node:fs";
import path from "node:path";
import express, { type Request, type Response, type Router } from "express";

/** Where the built board is (gateway/board/dist: `npm run build -w @transferops/board`). */
export const BOARD_DIR = path.resolve(import.meta.dirname, "../../board/dist");

/**
 * Same origin only for scripts, styles and calls (the API and its event stream); no inline
 * script or style, no framing, no plugins. The board is built to need nothing more.
 */
export const BOARD_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "connect-src 'self'",
  "img-src 'self' data:",
  "font-src 'self'",
  "manifest-src 'self'",
  "base-uri 'none'",
  "form-action 'self'",
  "frame-ancestors 'none'",
].join("; ");

const YEAR_S = 365 * 24 * 3600;

/** Types of the files the build precompresses (vite.config.ts), by extension. */
const COMPRESSED_TYPES: Record<string, string> = {
  ".js": "text/javascript; charset=utf-8",
  ".css": "text/css; charset=utf-8",
  ".svg": "image/svg+xml",
};
/** The encodings the build writes beside each file, best first, with their file suffix. */
const ENCODINGS = [
  { name: "br", suffix: ".br" },
  { name: "gzip", suffix: ".gz" },
] as const;

/** Whether Accept-Encoding accepts `name` (a q of 0 refuses it; `*` accepts it). */
export function accepts(header: string | undefined, name: string): boolean {
  let star = false;
  for (const part of (header ?? "").split(",")) {
    const [coding = "", ...params] = part.trim().toLowerCase().split(";");
    const q = params.map((p) => /^\s*q=([\d.]+)\s*$/.exec(p)?.[1]).find((v) => v !== undefined);
    const ok = q === undefined || Number(q) > 0;
    if (coding === name) return ok;
    if (coding === "*") star = ok;
  }
  return star;
}

/**
 * Serves a precompressed copy of a file (`name.js.br`, `name.js.gz`, written by the build)
 * when the browser accepts its encoding: the request is pointed at that file, and the
 * headers (set by `compressedHeaders`) say what it is. Any other request goes on unchanged.
 */
function precompressed(dir: string) {
  return (req: Request, res: Response, next: () => void) => {
    const type = COMPRESSED_TYPES[path.extname(req.path)];
    if ((req.method !== "GET" && req.method !== "HEAD") || !type || req.path.includes("..")) return next();
    res.setHeader("Vary", "Accept-Encoding");
    for (const e of ENCODINGS) {
      if (!accepts(req.headers["accept-encoding"], e.name)) continue;
      if (!existsSync(path.join(dir, req.path + e.suffix))) continue;
      res.locals.boardEncoding = { name: e.name, type };
      req.url = req.path + e.suffix;
      break;
    }
    next();
  };
}

function compressedHeaders(res: Response): void {
  const e = res.locals.boardEncoding as { name: string; type: string } | undefined;
  if (!e) return;
  res.setHeader("Content-Encoding", e.name);
  res.setHeader("Content-Type", e.type);
}

/**
 * The board's static files at /board. Mounted before the rate limiter: a page load is a
 * handful of files the browser caches, not API calls. Files under assets/ have a content
 * hash in their name, so they are cached for a year; index.html names the current ones, so
 * it is never cached. Without a build, /board answers 404 saying how to build it.
 */
export function boardRouter(dir = BOARD_DIR): Router {
  const router = express.Router();
  router.use((_req, res, next) => {
    res.setHeader("Content-Security-Policy", BOARD_CSP);
    res.setHeader("X-Content-Type-Options", "nosniff");
    res.setHeader("Referrer-Policy", "no-referrer");
    next();
  });
  router.use("/assets", precompressed(path.join(dir, "assets")));
  router.use(
    "/assets",
    express.static(path.join(dir, "assets"), {
      index: false,
      etag: false,
      setHeaders: (res) => {
        res.setHeader("Cache-Control", `public, max-age=${YEAR_S}, immutable`);
        compressedHeaders(res as unknown as Response);
      },
    }),
  );
  // The icon (no hash in its name: cached a day), so that no page load ends in a 404.
  router.get("/favicon.svg", (_req, res) => {
    const file = path.join(dir, "favicon.svg");
    if (!existsSync(file)) {
      res.status(404).type("text/plain").send("Not found\n");
      return;
    }
    res.setHeader("Cache-Control", "public, max-age=86400");
    res.sendFile(file);
  });
  router.get(["/", "/index.html"], (_req, res) => {
    const index = path.join(dir, "index.html");
    res.setHeader("Cache-Control", "no-cache");
    if (!existsSync(index)) {
      res.status(404).type("text/plain").send("The board is not built: run `npm run build -w @transferops/board`.\n");
      return;
    }
    res.sendFile(index);
  });
  router.use((_req, res) => {
    res.status(404).type("text/plain").send("Not found\n");
  });
  return router;
}
