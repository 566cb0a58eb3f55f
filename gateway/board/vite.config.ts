import { defineConfig } from "vite";

// Served by the gateway at /board (gateway/src/http/board.ts): hashed file names under
// assets/ are cached for a year, index.html never. No inline script or style, so that the
// page runs under a Content-Security-Policy of the same origin only.
export default defineConfig({
  base: "/board/",
  root: import.meta.dirname,
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
