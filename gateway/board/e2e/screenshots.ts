// `npm run board:screenshots`: a screenshot of every page of the board into docs/board/*.png,
// and the board's figures: the page and the app on the wire (brotli and gzip, as the gateway
// sends them), and the time to the first usable page on Chrome's "Slow 3G" profile (emulated
// over the DevTools protocol; e2e/first-load.test.ts measures it beside a reference).
//
// It runs the whole system in this process on a fresh database of the PostgreSQL at
// DATABASE_ADMIN_URL (default postgres://postgres@127.0.0.1:5432/postgres), with the
// in-process bus, seeds a small day of work through the API and the handset simulator,
// and drops the database at the end. Chromium: /usr/bin/chromium (CHROMIUM_PATH).
import { mkdirSync, readdirSync, statSync } from "node:fs";
import path from "node:path";
import type { Page } from "playwright-core";
import { startSystem } from "../../../test/support/launcher.ts";
import { createDatabase } from "../../../test/infra/postgres.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "../../../test/support/credentials.ts";
import { sendHeartbeat } from "../../../test/support/fleet-fixtures.ts";
import { buildBoard, launchChromium, signIn } from "./browser.ts";
import {
  ADMIN_LOGIN,
  ADMIN_PASSWORD,
  createOperation,
  dial,
  intakeTransaction,
  orphanSms,
  RECIPIENTS,
  seedWorld,
  unprovenOperation,
  type BoardWorld,
} from "./world.ts";

const ROOT = path.resolve(import.meta.dirname, "../../..");
const OUT = path.join(ROOT, "docs/board");
const DIST = path.join(ROOT, "gateway/board/dist");

/** Chrome DevTools' "Slow 3G": 400 kbit/s each way, 2 s of latency. */
const SLOW_3G = { offline: false, latency: 2000, downloadThroughput: 50_000, uploadThroughput: 50_000 };

async function seed(w: BoardWorld): Promise<void> {
  const done = await intakeTransaction(w, RECIPIENTS[0]!, 12_500);
  await w.api.post(`/v1/transactions/${done}/payment-confirmation`, { token: w.alice.token });
  const launched = await w.api.post(`/v1/transactions/${done}/launch`, { token: w.alice.token });
  await dial(w, launched.body.operation_id);
  await intakeTransaction(w, RECIPIENTS[1]!, 25_000);
  await intakeTransaction(w, ["690321654", "Brice Kamga"], 40_000);
  await unprovenOperation(w, RECIPIENTS[2]!, 8_000);
  const settled = await unprovenOperation(w, ["690147258", "Odile Nana"], 15_000);
  await w.api.post(`/v1/operations/${settled}/settle`, {
    token: w.alice.token,
    body: { outcome: "arrived", note: "Confirmed by the receiver on the phone." },
  });
  await unprovenOperation(w, RECIPIENTS[3]!, 7_300);
  await orphanSms(w, w.alice, RECIPIENTS[3]!, 7_301);
  await orphanSms(w, w.alice, RECIPIENTS[0]!, 9_999);
  await createOperation(w, w.alice, ["690258369", "Samuel Eto"], 5_000);
  // A heartbeat from Alice's handset; the next one reports Bob's handset without its SIM (an alert).
  await sendHeartbeat(w.api, w.alice.device.token, {
    battery: 64,
    sims: [{ sim_id: w.alice.sim.simId, present: true }],
  });
  await sendHeartbeat(w.api, w.bob.device.token, { battery: 22, sims: [{ sim_id: w.bob.sim.simId, present: false }] });
  await w.api.post("/v1/admin/webhooks", {
    token: w.adminToken,
    body: { url: "https://hooks.example.test/transfers", events: ["alert.raised"] },
  });
  await w.api.patch("/v1/admin/limits", {
    token: w.adminToken,
    body: {
      operator: null,
      op_type: "deposit",
      max_amount: 500_000,
      max_daily_agent: 2_000_000,
      max_daily_sim: 5_000_000,
    },
  });
  // A text in a wording no rule reads (an orphan of no kind), and a draft rule that reads it.
  await w.api.post("/v1/device/messages", {
    token: w.alice.device.token,
    body: {
      sim_id: w.alice.sim.simId,
      messages: [
        {
          sender: "OrangeMoney",
          raw: "Operation KX7 terminee: 6421 FCFA credites au client 690888999. Code CI261126.0200.B06421. Reste 493579 FCFA.",
          received_at: new Date().toISOString(),
        },
      ],
    },
  });
  // Drafted by a second admin: the one who drafts a rule may not activate it.
  const drafter = await w.api.createAgent(w.adminToken, { login: "wording-drafter", role: "admin" });
  await w.api.post("/v1/admin/wording-rules", {
    token: drafter.token,
    body: {
      operator: "operator_b",
      kind: "DEP",
      language: "fr",
      direction: "out",
      template: "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.",
    },
  });
  await w.api.post("/v1/operations/matching", {
    token: w.alice.token,
    body: { beneficiary_msisdn: "690963852", montant: 3_000 },
  });
}

async function shoot(page: Page, hash: string, heading: string, file: string): Promise<void> {
  await page.evaluate((h) => (location.hash = h), hash);
  await page.getByRole("heading", { level: 2, name: heading }).waitFor();
  await page
    .getByText(/Mis à jour à|Updated/)
    .first()
    .waitFor();
  await page.screenshot({ path: path.join(OUT, file), fullPage: true });
  console.log(`docs/board/${file}`);
}

/** ms from a navigation to the element being visible, under Slow 3G. */
async function timeToUsable(
  page: Page,
  navigate: () => Promise<unknown>,
  usable: () => Promise<void>,
): Promise<number> {
  const cdp = await page.context().newCDPSession(page);
  await cdp.send("Network.enable");
  await cdp.send("Network.emulateNetworkConditions", SLOW_3G);
  const started = Date.now();
  await navigate();
  await usable();
  const ms = Date.now() - started;
  await cdp.send("Network.emulateNetworkConditions", {
    ...SLOW_3G,
    latency: 0,
    downloadThroughput: -1,
    uploadThroughput: -1,
  });
  return ms;
}

async function main(): Promise<void> {
  mkdirSync(OUT, { recursive: true });
  await buildBoard();
  const db = await createDatabase(process.env.DATABASE_ADMIN_URL ?? "postgres://postgres@127.0.0.1:5432/postgres");
  const system = await startSystem({
    env: {
      DATABASE_URL: db.url,
      API_KEYS: TEST_API_KEY,
      BOOTSTRAP_TOKEN: TEST_BOOTSTRAP_TOKEN,
      DEVICE_COOLDOWN_S: "0",
      LOG_LEVEL: "warn",
    },
    randomPorts: true,
    logDestination: { write: () => undefined },
  });
  const browser = await launchChromium();
  try {
    const w = await seedWorld(system.gatewayUrl);
    await seed(w);
    const context = await browser.newContext({ locale: "fr-FR", viewport: { width: 1280, height: 800 } });
    const page = await context.newPage();
    await page.goto(`${system.gatewayUrl}/board/`);
    await page.getByRole("heading", { name: "Connexion" }).waitFor();
    await page.screenshot({ path: path.join(OUT, "sign-in.png") });
    console.log("docs/board/sign-in.png");
    await signIn(page, w.alice.login, w.alice.password);
    await shoot(page, "#/transactions", "Transactions", "transactions.png");
    await page.getByRole("button", { name: /^Détails Awa Ndiaye/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Lancer" }).waitFor();
    await page.screenshot({ path: path.join(OUT, "transaction-detail.png") });
    console.log("docs/board/transaction-detail.png");
    await page.getByRole("dialog").getByRole("button", { name: "Fermer" }).click();
    await shoot(page, "#/operations", "Opérations", "operations.png");
    await shoot(page, "#/arbitration", "Arbitrage", "arbitration.png");
    await shoot(page, "#/messages", "Messages", "messages.png");
    await page.getByRole("button", { name: /^Détails 7 301/ }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Rattacher" }).first().waitFor();
    await page.screenshot({ path: path.join(OUT, "message-detail.png") });
    console.log("docs/board/message-detail.png");
    await page.getByRole("dialog").getByRole("button", { name: "Fermer" }).click();
    await shoot(page, "#/matching", "Opérations manuelles", "matching.png");
    const adminPage = await (
      await browser.newContext({ locale: "fr-FR", viewport: { width: 1280, height: 800 } })
    ).newPage();
    await adminPage.goto(`${system.gatewayUrl}/board/`);
    await signIn(adminPage, ADMIN_LOGIN, ADMIN_PASSWORD);
    await shoot(adminPage, "#/handsets", "Téléphones", "handsets.png");
    await shoot(adminPage, "#/sims", "SIM", "sims.png");
    await shoot(adminPage, "#/alerts", "Alertes", "alerts.png");
    await shoot(adminPage, "#/people", "Personnes", "people.png");
    await shoot(adminPage, "#/audit", "Journal d'audit", "audit.png");
    await shoot(adminPage, "#/fleet", "Limites et disjoncteur", "fleet.png");
    await adminPage.getByRole("button", { name: "Déclencher le disjoncteur" }).click();
    await adminPage.getByRole("dialog").getByRole("button", { name: "Déclencher maintenant" }).waitFor();
    await adminPage.screenshot({ path: path.join(OUT, "fleet-confirm.png") });
    console.log("docs/board/fleet-confirm.png");
    await adminPage.getByRole("dialog").getByRole("button", { name: "Fermer" }).click();
    await shoot(adminPage, "#/money", "Contrôle de l'argent", "money.png");
    await adminPage.getByRole("button", { name: `Chaîne des soldes ${w.alice.sim.msisdn}` }).click();
    await adminPage
      .getByRole("region", { name: /^Chaîne des soldes de/ })
      .locator("li")
      .first()
      .waitFor();
    await adminPage.screenshot({ path: path.join(OUT, "money-chain.png"), fullPage: true });
    console.log("docs/board/money-chain.png");
    await shoot(adminPage, "#/analytics", "Analyses", "analytics.png");
    await shoot(adminPage, "#/wording", "Règles de libellé des lecteurs de SMS", "wording.png");
    await adminPage.getByRole("button", { name: /^Essayer DEP v1/ }).click();
    await adminPage.getByRole("region", { name: /^Essai de DEP v1/ }).waitFor();
    await adminPage.screenshot({ path: path.join(OUT, "wording-trial.png"), fullPage: true });
    console.log("docs/board/wording-trial.png");
    await adminPage.getByRole("button", { name: /^Activer DEP v1/ }).click();
    await adminPage.getByRole("dialog").getByRole("button", { name: "Activer et relire" }).waitFor();
    await adminPage.screenshot({ path: path.join(OUT, "wording-confirm.png") });
    console.log("docs/board/wording-confirm.png");
    await adminPage.getByRole("dialog").getByRole("button", { name: "Fermer" }).click();
    const phone = await browser.newContext({ locale: "en-GB", viewport: { width: 390, height: 844 }, isMobile: true });
    const phonePage = await phone.newPage();
    await phonePage.goto(`${system.gatewayUrl}/board/`);
    await signIn(phonePage, w.alice.login, w.alice.password);
    await phonePage.getByRole("heading", { level: 2, name: "Transactions" }).waitFor();
    await phonePage
      .getByText(/Updated/)
      .first()
      .waitFor();
    await phonePage.screenshot({ path: path.join(OUT, "phone-transactions-en.png"), fullPage: true });
    console.log("docs/board/phone-transactions-en.png");

    // Figures: the page (its script and style sheet inline) and the app, as the gateway sends them.
    const wire = (file: string) =>
      `${(statSync(`${file}.br`).size / 1000).toFixed(1)} kB brotli, ${(statSync(`${file}.gz`).size / 1000).toFixed(1)} kB gzip (${(statSync(file).size / 1000).toFixed(1)} kB plain)`;
    console.log(`Page (index.html, sign-in script and style sheet inline): ${wire(path.join(DIST, "index.html"))}`);
    for (const f of readdirSync(path.join(DIST, "assets")).filter((n) => /\.(js|css)$/.test(n)))
      console.log(`${f}: ${wire(path.join(DIST, "assets", f))}`);
    const cold = await browser.newContext({ locale: "fr-FR" });
    const coldPage = await cold.newPage();
    const signInMs = await timeToUsable(
      coldPage,
      () => coldPage.goto(`${system.gatewayUrl}/board/`, { waitUntil: "commit", timeout: 120_000 }),
      () => coldPage.getByLabel("Identifiant").waitFor({ timeout: 120_000 }),
    );
    console.log(`Slow 3G, empty cache: sign-in usable after ${signInMs} ms`);
    await signIn(coldPage, w.alice.login, w.alice.password);
    const warmMs = await timeToUsable(
      coldPage,
      () => coldPage.reload({ waitUntil: "commit", timeout: 120_000 }),
      () => coldPage.getByRole("button", { name: /^Détails Brice Kamga/ }).waitFor({ timeout: 120_000 }),
    );
    console.log(`Slow 3G, signed in, assets cached: transactions board listed after ${warmMs} ms`);
  } finally {
    await browser.close();
    await system.stop();
    await db.drop();
  }
}

await main();
process.exit(0);
