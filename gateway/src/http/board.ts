import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import express, { type Request, type Response, type Router } from "express";

/** Where the built board is (gateway/board/dist: `npm run build -w @transferops/board`). */
export const BOARD_DIR = path.resolve(import.meta.dirname, "../../board/dist");

/**
 * Same origin only for scripts, styles and calls (the API and its event stream); no framing,
 * no plugins. The board is built to need nothing more, but for index.html's own script and
 * style sheet, inline so that sign-in needs one response: those are allowed by their hashes
 * only (`boardCsp`), never 'unsafe-inline'.
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

/** Where the build writes the hashes of index.html's inline script and style (vite.config.ts). */
const CSP_FILE = "csp.json";

/**
 * The page's policy: BOARD_CSP with the hashes the build wrote for index.html's inline
 * script and style (read with index.html, so that a new build is served with its own).
 * Without the file, or with one that cannot be read, the policy allows no inline code.
 */
export function boardCsp(dir: string): string {
  let hashes: Record<string, unknown> = {};
  try {
    hashes = JSON.parse(readFileSync(path.join(dir, CSP_FILE), "utf8")) as Record<string, unknown>;
  } catch {
    return BOARD_CSP;
  }
  const valid = (v: unknown) =>
    (Array.isArray(v) ? v : []).filter(
      (h): h is string => typeof h === "string" && /^'sha256-[A-Za-z0-9+/=]+'$/.test(h),
    );
  return BOARD_CSP.split("; ")
    .map((d) => {
      const [name = ""] = d.split(" ");
      const extra = valid(hashes[name]);
      return extra.length ? [d, ...extra].join(" ") : d;
    })
    .join("; ");
}

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
  router.get(["/", "/index.html"], (req, res) => {
    const index = path.join(dir, "index.html");
    res.setHeader("Cache-Control", "no-cache");
    if (!existsSync(index)) {
      res.status(404).type("text/plain").send("The board is not built: run `npm run build -w @transferops/board`.\n");
      return;
    }
    res.setHeader("Content-Security-Policy", boardCsp(dir));
    // The page carries its script and style sheet: sent precompressed as the assets are.
    res.setHeader("Vary", "Accept-Encoding");
    const e = ENCODINGS.find((c) => accepts(req.headers["accept-encoding"], c.name) && existsSync(index + c.suffix));
    if (!e) {
      res.sendFile(index);
      return;
    }
    res.setHeader("Content-Encoding", e.name);
    res.setHeader("Content-Type", "text/html; charset=utf-8");
    res.sendFile(index + e.suffix);
  });
  router.use((_req, res) => {
    res.status(404).type("text/plain").send("Not found\n");
  });
  return router;
}
