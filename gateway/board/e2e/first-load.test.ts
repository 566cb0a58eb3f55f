import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import type { Server } from "node:http";
import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createLogger } from "@transferops/kit";
import { createGatewayApp } from "../../src/app.ts";
import { BOARD_DIR } from "../../src/http/board.ts";
import type { Services } from "../../src/services.ts";
import { buildBoard, buildBoardOnce, launchChromium } from "./browser.ts";

// The first usable page on Chrome's "Slow 3G" profile (2 s of latency a request, 400 kbit/s
// each way, emulated over the DevTools protocol): the sign-in form of a fresh browser. The
// board as built (its page's script and style inline) is measured beside a reference built
// from the same code with that script and style as files, in the same run: the figures are
// printed, the test asserts what makes the difference (what the form waits for), not a time.
// Only the gateway's static files are needed to sign-in being usable: no service is called.

const SLOW_3G = { offline: false, latency: 2000, downloadThroughput: 50_000, uploadThroughput: 50_000 };

let browser: Browser;
let referenceDir: string;
const servers: Server[] = [];

async function serve(boardDir: string): Promise<string> {
  const app = createGatewayApp({
    services: {} as Services,
    log: createLogger("gateway", { level: "silent" }),
    rateLimit: { ratePerS: 100, burst: 100 },
    requestTimeoutMs: 60_000,
    boardDir,
  });
  const server = await new Promise<Server>((resolve) => {
    const s = app.listen(0, "127.0.0.1", () => resolve(s));
  });
  servers.push(server);
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

interface FirstLoad {
  /** ms from the navigation's start to the sign-in form in the page (the page's own clock). */
  usableMs: number;
  /** ms from asking for the page to seeing the form (the test's clock, with its overheads). */
  wallMs: number;
  /** The responses that had ended when the form was there, the page's own one aside. */
  waitedOn: string[];
  /** The page's response: its encoding and its bytes on the wire. */
  document: { encoding?: string; bytes: number };
  cspViolations: string[];
}

/** Opens the board in a fresh browser context on Slow 3G and times its sign-in form. */
async function firstLoad(url: string): Promise<FirstLoad> {
  const context = await browser.newContext({ locale: "fr-FR" });
  const page = await context.newPage();
  const cspViolations: string[] = [];
  page.on("console", (m) => {
    if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  // The moment the login field exists, on the page's clock (0 = the navigation's start).
  await page.addInitScript(() => {
    const w = window as unknown as { usableAt?: number };
    const check = () => {
      if (w.usableAt === undefined && document.querySelector('input[autocomplete="username"]'))
        w.usableAt = performance.now();
      return w.usableAt !== undefined;
    };
    if (!check()) {
      const observer = new MutationObserver(() => check() && observer.disconnect());
      observer.observe(document, { childList: true, subtree: true });
    }
  });
  const cdp = await context.newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", SLOW_3G);
  const started = Date.now();
  const response = await page.goto(`${url}/board/`, { waitUntil: "commit", timeout: 120_000 });
  await page.getByLabel("Identifiant").waitFor({ timeout: 120_000 });
  const wallMs = Date.now() - started;
  const { usableMs, waitedOn } = await page.evaluate(() => {
    const usable = (window as unknown as { usableAt: number }).usableAt;
    const resources = performance.getEntriesByType("resource") as PerformanceResourceTiming[];
    return {
      usableMs: usable,
      waitedOn: resources.filter((r) => r.responseEnd > 0 && r.responseEnd <= usable).map((r) => r.name),
    };
  });
  const sizes = await response!.request().sizes();
  const encoding = (await response!.headerValue("content-encoding")) ?? undefined;
  await context.close();
  return { usableMs, wallMs, waitedOn, document: { encoding, bytes: sizes.responseBodySize }, cspViolations };
}

const figure = (l: FirstLoad) =>
  `${Math.round(l.usableMs)} ms from the navigation's start (${l.wallMs} ms on the test's clock), ` +
  `page ${l.document.bytes} B ${l.document.encoding ?? "plain"}, waited on ${l.waitedOn.length} file(s)`;

beforeAll(async () => {
  referenceDir = mkdtempSync(path.join(os.tmpdir(), "board-reference-"));
  await buildBoardOnce(inject("testRun"));
  await buildBoard({ outDir: referenceDir, inline: false });
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  for (const s of servers) await new Promise((resolve) => s.close(resolve));
  rmSync(referenceDir, { recursive: true, force: true });
});

describe("the first usable page on Slow 3G", () => {
  it("is the page's one response: its script and style inline, allowed by hash, sent brotli", async () => {
    const html = readFileSync(path.join(BOARD_DIR, "index.html"), "utf8");
    expect(html).toMatch(/<script type="module">/);
    expect(html).toMatch(/<style>/);
    expect(html).not.toMatch(/<script[^>]* src=/);
    expect(html).not.toMatch(/<link rel="stylesheet"/);
    // The app is preloaded, not waited for.
    expect(html).toMatch(/<link rel="modulepreload" href="\/board\/assets\/app-[\w-]+\.js">/);

    const board = await serve(BOARD_DIR);
    const reference = await serve(referenceDir);
    const runs: { board: FirstLoad; reference: FirstLoad }[] = [];
    // Alternated, twice: a busy machine slows both alike.
    for (let i = 0; i < 2; i++) runs.push({ reference: await firstLoad(reference), board: await firstLoad(board) });
    for (const [i, r] of runs.entries()) {
      console.log(`Slow 3G, empty cache, sign-in usable (run ${i + 1}):`);
      console.log(`  the board as built (inline page): ${figure(r.board)}`);
      console.log(`  reference (page's script and style as files): ${figure(r.reference)}`);
    }
    for (const { board: b, reference: ref } of runs) {
      expect(b.waitedOn).toEqual([]);
      expect(b.document).toEqual({ encoding: "br", bytes: statSync(path.join(BOARD_DIR, "index.html.br")).size });
      expect(b.cspViolations).toEqual([]);
      // The reference waits for its script and its style sheet: what the measure would catch.
      expect(ref.waitedOn.map((n) => path.extname(n)).sort()).toEqual([".css", ".js"]);
      expect(ref.cspViolations).toEqual([]);
    }
  }, 240_000);
});
