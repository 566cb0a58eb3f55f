// Chromium for the board's end-to-end tests and screenshots: Debian's `chromium` package
// (installed by .ci/run when missing) driven by playwright-core; Playwright's own browser
// download is not used.
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import path from "node:path";
import { chromium, type Browser, type Page } from "playwright-core";
import { build } from "vite";
import { boardConfig } from "../vite.config.ts";

export const CHROMIUM_PATH = process.env.CHROMIUM_PATH ?? "/usr/bin/chromium";

export function launchChromium(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM_PATH,
    args: [
      "--disable-gpu",
      "--disable-background-networking",
      "--disable-component-update",
      "--no-first-run",
      "--disable-sync",
    ],
  });
}

/**
 * Builds the board into gateway/board/dist, which the gateway serves at /board (or into
 * `outDir`; `inline: false`: the page's script and style sheet as files, a reference).
 */
export async function buildBoard(options: { outDir?: string; inline?: boolean } = {}): Promise<void> {
  await build({ ...boardConfig(options), configFile: false, logLevel: "warn" });
}

const BOARD = path.resolve(import.meta.dirname, "..");
/** Held by the file building gateway/board/dist (a directory: its creation is atomic). */
const LOCK = path.join(BOARD, ".build-lock");
/** The test run whose build gateway/board/dist holds. */
const BUILT_FOR = path.join(BOARD, ".built-for-run");

/**
 * Builds the board into gateway/board/dist once in a test run (`run`: its id, from the global
 * setup), by the first file that asks; the others wait for that build and reuse it. Test files
 * run in parallel (vitest.config.ts), and a second build empties the folder under a page another
 * file is loading: its reload found no script and stayed blank (seen with two forks).
 */
export async function buildBoardOnce(run: string): Promise<void> {
  const deadline = Date.now() + 300_000;
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      // A lock left by a run that died mid-build (older than any build takes) is taken over.
      if (Date.now() - statSync(LOCK).mtimeMs > 120_000) rmSync(LOCK, { recursive: true, force: true });
      if (Date.now() > deadline) throw new Error(`the board's build lock ${LOCK} held for 5 minutes`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
  try {
    if (existsSync(BUILT_FOR) && readFileSync(BUILT_FOR, "utf8") === run) return;
    await buildBoard();
    writeFileSync(BUILT_FOR, run);
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
}

/** Signs in through the page, in whichever language it shows. */
export async function signIn(page: Page, login: string, password: string): Promise<void> {
  await page.getByLabel(/^(Identifiant|Login)$/).fill(login);
  await page.getByLabel(/^(Mot de passe|Password)$/).fill(password);
  await page.getByRole("button", { name: /^(Se connecter|Sign in)$/ }).click();
  await page.getByRole("navigation").waitFor();
}
