import { existsSync } from "node:fs";
import path from "node:path";
import express, { type Router } from "express";

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
  router.use(
    "/assets",
    express.static(path.join(dir, "assets"), {
      index: false,
      etag: false,
      setHeaders: (res) => res.setHeader("Cache-Control", `public, max-age=${YEAR_S}, immutable`),
    }),
  );
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
