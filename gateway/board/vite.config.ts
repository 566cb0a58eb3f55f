import { createHash } from "node:crypto";
import { readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { build, defineConfig, type Plugin, type Rollup, type UserConfig } from "vite";

// Served by the gateway at /board (gateway/src/http/board.ts): index.html never cached,
// hashed file names under assets/ cached for a year.
//
// Two parts, so that on a slow network the sign-in form is usable after one response:
// - the page (index.html, its script src/shell.tsx and the style sheet), built with its
//   script and style inline: the page draws the sign-in form with nothing more to fetch;
// - the app (src/main.tsx, every page of the board), a file of its own built first, that the
//   page preloads and imports once there is a session.
// They are two builds, so that no code is shared between them by a chunk the page would
// have to fetch. The inline script and style are allowed by their hashes, which the build
// writes to csp.json; the gateway adds them to the page's Content-Security-Policy.

const ROOT = import.meta.dirname;
const BASE = "/board/";
const VIRTUAL_APP = "virtual:board-app";

/** The file the CSP hashes of index.html's inline script and style are written to. */
export const CSP_FILE = "csp.json";

/** What the board's build shares between its two parts. */
function common(outDir: string): UserConfig {
  return {
    base: BASE,
    root: ROOT,
    esbuild: { jsx: "automatic", jsxImportSource: "preact" },
    build: {
      outDir,
      target: "es2022",
      // A module preload polyfill would be inline script; modern browsers need none.
      modulePreload: { polyfill: false },
      assetsInlineLimit: 0,
    },
  };
}

/** Builds the app (src/main.tsx) into outDir/assets; answers its URL. */
async function buildApp(outDir: string): Promise<string> {
  const c = common(outDir);
  const out = (await build({
    ...c,
    configFile: false,
    logLevel: "warn",
    build: {
      ...c.build,
      emptyOutDir: false,
      copyPublicDir: false,
      rollupOptions: {
        input: path.join(ROOT, "src/main.tsx"),
        output: { entryFileNames: "assets/app-[hash].js", chunkFileNames: "assets/app-[hash].js" },
      },
    },
  })) as Rollup.RollupOutput;
  const files = out.output.map((o) => o.fileName);
  // The page carries the one style sheet: an app style sheet would be a file nothing loads.
  if (files.some((f) => f.endsWith(".css"))) throw new Error(`the app must import no CSS (${files.join(", ")})`);
  const entry = out.output.find((o) => o.type === "chunk" && o.isEntry)!;
  return BASE + entry.fileName;
}

/**
 * The app as a module the page imports by URL (`virtual:board-app`): built before the page
 * (into an emptied outDir), or its source under the dev server.
 */
function appPart(outDir: string): Plugin {
  let url = `${BASE}src/main.tsx`;
  let building = false;
  return {
    name: "board-app",
    configResolved(c) {
      building = c.command === "build";
    },
    async buildStart() {
      if (!building) return;
      rmSync(outDir, { recursive: true, force: true });
      url = await buildApp(outDir);
    },
    resolveId: (id) => (id === VIRTUAL_APP ? `\0${VIRTUAL_APP}` : undefined),
    // `separate`: the app has modules of its own (built), not the page's (dev server).
    load: (id) =>
      id === `\0${VIRTUAL_APP}`
        ? `export default ${JSON.stringify(url)};\nexport const separate = ${building};`
        : undefined,
    transformIndexHtml: {
      order: "post",
      // Fetched while the HTML is still read: ready when the sign-in answers.
      handler: () => (building ? [{ tag: "link", attrs: { rel: "modulepreload", href: url }, injectTo: "head" }] : []),
    },
  };
}

/**
 * The texts the page can show, by key prefix: its frame, the sign-in form, and every refusal
 * (an answer to sign-in is shown in the user's language). The app has them all.
 */
const PAGE_TEXTS = /^(app|lang|signIn|common|live|err|code|r|f|v|send)\./;

/**
 * Keeps in the page's copies of the catalogues (src/catalogue/*.ts, both languages) only the
 * entries of PAGE_TEXTS: the catalogues are most of the page's bytes. Each entry is `"key": "text",` on its line,
 * or its text on the next lines. The page's script must then name no key it dropped: the
 * build fails if it does (a key built from data, as a refusal's, is looked up with `known`).
 */
function pageTexts(): Plugin {
  const dropped = new Set<string>();
  return {
    name: "board-page-texts",
    apply: "build",
    enforce: "pre",
    transform(code, id) {
      if (!/\/src\/catalogue\/[\w-]+\.ts$/.test(id)) return undefined;
      let keep = true;
      let inCatalogue = false;
      const end = /^\}( as const)?( satisfies \w+)?;$/;
      const lines = code.split("\n").filter((line) => {
        if (/^export const (en|fr)\b.* = \{$/.test(line)) inCatalogue = true;
        else if (end.test(line)) inCatalogue = keep = true;
        const key = inCatalogue ? /^ {2}"([\w.]+)":/.exec(line)?.[1] : undefined;
        if (key !== undefined) {
          keep = PAGE_TEXTS.test(key);
          if (!keep) dropped.add(key);
        }
        if (end.test(line)) inCatalogue = false;
        return keep;
      });
      return { code: lines.join("\n"), map: null };
    },
    buildEnd() {
      if (dropped.size === 0) throw new Error("src/catalogue/: no catalogue entry found to leave out of the page");
    },
    generateBundle(_options, bundle) {
      for (const chunk of Object.values(bundle)) {
        if (chunk.type !== "chunk") continue;
        const named = [...chunk.code.matchAll(/"([\w.]+)"/g)].map((m) => m[1]!).filter((k) => dropped.has(k));
        if (named.length) throw new Error(`the page names texts it leaves out (PAGE_TEXTS): ${named.join(", ")}`);
      }
    },
  };
}

const sha256 = (text: string) => `'sha256-${createHash("sha256").update(text, "utf8").digest("base64")}'`;

/** Text that would end or confuse an inline element of the HTML parser. */
function checkInlinable(text: string, file: string, tag: string): string {
  if (new RegExp(`</${tag}|<!--|<${tag}`, "i").test(text)) throw new Error(`${file} cannot be inlined in <${tag}>`);
  return text;
}

/**
 * Puts the page's script and style sheet inside index.html (and drops their files), and
 * writes their CSP hashes to csp.json. The script must import nothing (a chunk it imported
 * would be one more round trip before the form is usable).
 */
function inlinePage(outDir: string): Plugin {
  const hashes = { "script-src": [] as string[], "style-src": [] as string[] };
  return {
    name: "board-inline-page",
    apply: "build",
    transformIndexHtml: {
      order: "post",
      handler(html, ctx) {
        const bundle = ctx.bundle!;
        for (const chunk of Object.values(bundle)) {
          if (chunk.type !== "chunk" || !chunk.isEntry) continue;
          if (chunk.imports.length || chunk.dynamicImports.length)
            throw new Error(`the page's script imports ${[...chunk.imports, ...chunk.dynamicImports].join(", ")}`);
          const tag = new RegExp(`<script type="module" crossorigin src="${BASE}${chunk.fileName}"></script>`);
          const code = checkInlinable(chunk.code, chunk.fileName, "script");
          if (!tag.test(html)) throw new Error(`index.html does not load ${chunk.fileName}`);
          html = html.replace(tag, () => `<script type="module">${code}</script>`);
          hashes["script-src"].push(sha256(code));
          delete bundle[chunk.fileName];
        }
        for (const asset of Object.values(bundle)) {
          if (asset.type !== "asset" || !asset.fileName.endsWith(".css")) continue;
          const tag = new RegExp(`<link rel="stylesheet" crossorigin href="${BASE}${asset.fileName}">`);
          const css = checkInlinable(String(asset.source), asset.fileName, "style");
          if (!tag.test(html)) throw new Error(`index.html does not link ${asset.fileName}`);
          html = html.replace(tag, () => `<style>${css}</style>`);
          hashes["style-src"].push(sha256(css));
          delete bundle[asset.fileName];
        }
        return html;
      },
    },
    closeBundle() {
      writeFileSync(path.join(outDir, CSP_FILE), `${JSON.stringify(hashes, null, 2)}\n`);
    },
  };
}

/**
 * Writes a brotli (.br) and a gzip (.gz) copy beside index.html and each script, style sheet
 * and icon of the build, at the highest levels (once per build, not per request): the
 * gateway serves the one the browser accepts (gateway/src/http/board.ts).
 */
function precompress(outDir: string): Plugin {
  const write = (file: string) => {
    const body = readFileSync(file);
    writeFileSync(
      `${file}.br`,
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    );
    writeFileSync(`${file}.gz`, gzipSync(body, { level: 9 }));
  };
  return {
    name: "board-precompress",
    apply: "build",
    closeBundle() {
      write(path.join(outDir, "index.html"));
      const dir = path.join(outDir, "assets");
      for (const name of readdirSync(dir)) if (/\.(js|css|svg)$/.test(name)) write(path.join(dir, name));
    },
  };
}

/**
 * The board's build into `outDir`; `inline: false` leaves the page's script and style as
 * files (the reference the first-load test compares against).
 */
export function boardConfig({ outDir = path.join(ROOT, "dist"), inline = true } = {}): UserConfig {
  const c = common(outDir);
  return {
    ...c,
    plugins: [appPart(outDir), pageTexts(), ...(inline ? [inlinePage(outDir)] : []), precompress(outDir)],
    build: { ...c.build, emptyOutDir: false },
  };
}

export default defineConfig(boardConfig());
