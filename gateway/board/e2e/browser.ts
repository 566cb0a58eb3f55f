// Chromium for the board's end-to-end tests and screenshots: Debian's `chromium` package
// (installed by .ci/run when missing) driven by playwright-core; Playwright's own browser
// download is not used.
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

/** Signs in through the page, in whichever language it shows. */
export async function signIn(page: Page, login: string, password: string): Promise<void> {
  await page.getByLabel(/^(Identifiant|Login)$/).fill(login);
  await page.getByLabel(/^(Mot de passe|Password)$/).fill(password);
  await page.getByRole("button", { name: /^(Se connecter|Sign in)$/ }).click();
  await page.getByRole("navigation").waitFor();
}
