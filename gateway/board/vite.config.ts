import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { defineConfig, type Plugin } from "vite";

/**
 * Writes a brotli (.br) and a gzip (.gz) copy beside each script, style sheet and icon of
 * the build, at the highest levels (once per build, not per request): the gateway serves
 * the one the browser accepts (gateway/src/http/board.ts).
 */
function precompress(): Plugin {
  let outDir = "";
  return {
    name: "board-precompress",
    apply: "build",
    configResolved(c) {
      outDir = path.resolve(c.root, c.build.outDir);
    },
    closeBundle() {
      const dir = path.join(outDir, "assets");
      for (const name of readdirSync(dir)) {
        if (!/\.(js|css|svg)$/.test(name)) continue;
        const body = readFileSync(path.join(dir, name));
        writeFileSync(
          path.join(dir, `${name}.br`),
          brotliCompressSync(body, {
            params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
          }),
        );
        writeFileSync(path.join(dir, `${name}.gz`), gzipSync(body, { level: 9 }));
      }
    },
  };
}

// Served by the gateway at /board (gateway/src/http/board.ts): hashed file names under
// assets/ are cached for a year, index.html never. No inline script or style, so that the
// page runs under a Content-Security-Policy of the same origin only.
export default defineConfig({
  base: "/board/",
  root: import.meta.dirname,
  plugins: [precompress()],
  esbuild: { jsx: "automatic", jsxImportSource: "preact" },
  build: {
    outDir: "dist",
    emptyOutDir: true,
    target: "es2022",
    // A module preload polyfill is inline-free, but modern browsers need none.
    modulePreload: { polyfill: false },
    assetsInlineLimit: 0,
  },
});
