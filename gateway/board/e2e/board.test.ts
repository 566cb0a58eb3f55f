import type { Browser, BrowserContext, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { axeScan } from "./axe.ts";
import { buildBoardOnce, launchChromium, signIn } from "./browser.ts";
import {
  createOperation,
  dial,
  intakeTransaction,
  orphanSms,
  RECIPIENTS,
  seedWorld,
  unprovenOperation,
  type BoardWorld,
} from "./world.ts";

// The board in a real browser (Debian's Chromium, driven by playwright-core) against the
// whole system on a fresh database, Alice's handset and its operator simulated. Assertions
// are on roles and text, as a person (or a screen reader) finds them.

let sys: TestSystem;
let world: BoardWorld;
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** Full page loads of `page` (a reload would add one), and what the browser refused by CSP. */
let loads = 0;
const cspViolations: string[] = [];

beforeAll(async () => {
  await buildBoardOnce(inject("testRun"));
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  world = await seedWorld(sys.url);
  browser = await launchChromium();
  // A browser far from Douala: the board still shows Douala's time.
  context = await browser.newContext({ locale: "fr-FR", timezoneId: "America/New_York" });
  page = await context.newPage();
  page.on("load", () => loads++);
  page.on("console", (m) => {
    if (/Content.Security.Policy/i.test(m.text())) cspViolations.push(m.text());
  });
  await page.goto(`${sys.url}/board/`);
  await signIn(page, world.alice.login, world.alice.password);
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await sys?.stop();
});

const go = async (hash: string, heading: string | RegExp) => {
  await page.evaluate((h) => (location.hash = h), hash);
  await page.getByRole("heading", { level: 2, name: heading }).waitFor();
};

describe("the board in Chromium", () => {
  it("signs Alice in (French by default here), shows her session's countdown and the transactions board", async () => {
    await page.getByRole("heading", { level: 2, name: "Transactions" }).waitFor();
    await expect.poll(() => page.getByRole("timer").textContent()).toMatch(/^Session terminée dans 4 h 5\d min$/);
    expect(await page.getByRole("link", { name: "Arbitrage" }).isVisible()).toBe(true);
    const fresh = await page
      .getByText(/Mis à jour à/)
      .first()
      .textContent();
    const shown = /Mis à jour à (\d\d):\d\d:\d\d/.exec(fresh!)![1];
    const doualaHour = (ms: number) =>
      new Intl.DateTimeFormat("fr-CM", { timeZone: "Africa/Douala", hour: "2-digit" }).format(ms).slice(0, 2);
    expect([doualaHour(Date.now()), doualaHour(Date.now() - 60_000)]).toContain(shown);
  });

  it("launches a paid transaction and follows it to done as the handset dials and the SMS proves it, without a reload", async () => {
    const receiver = RECIPIENTS[0]!;
    await intakeTransaction(world, receiver, 12_500);
    const loadsBefore = loads;
    // The new transaction arrives by the live stream (held, or on an empty board shown at once).
    const show = page.getByRole("button", { name: /nouveautés — afficher/ });
    const details = page.getByRole("button", { name: `Détails ${receiver[1]} 12 500 FCFA` });
    await expect
      .poll(async () => (await show.isVisible()) || (await details.isVisible()), { timeout: 20_000 })
      .toBe(true);
    if (await show.isVisible()) await show.click();
    await details.click();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Confirmer le paiement" }).click();
    await dialog.getByText("Transaction mise à jour.").waitFor();
    await dialog.getByRole("button", { name: "Annuler le paiement" }).waitFor();
    await dialog.getByRole("button", { name: "Lancer" }).click();
    await dialog.getByText(/^Lancée : opération [0-9a-f-]{36}\.$/).waitFor();
    const operationId = /opération ([0-9a-f-]{36})/.exec((await dialog.getByText(/^Lancée/).textContent())!)![1]!;
    await dialog.getByText(`Opération ${operationId.slice(0, 8)} : en file`).waitFor({ timeout: 20_000 });

    await dial(world, operationId);
    // The handset has reported and forwarded the operator's SMS (answered by the API) here.
    const smsSent = Date.now();

    await dialog.getByText(`Opération ${operationId.slice(0, 8)} : confirmée`).waitFor({ timeout: 30_000 });
    await dialog.getByText("terminée", { exact: true }).waitFor({ timeout: 30_000 });
    console.log(`SMS to "terminée" on screen: ${Date.now() - smsSent} ms (no reload)`);
    expect(loads).toBe(loadsBefore);
    await dialog.getByRole("button", { name: "Fermer" }).click();
    const row = page.getByRole("row").filter({ hasText: receiver[1] });
    await expect.poll(() => row.getByText("terminée").count(), { timeout: 20_000 }).toBe(1);
  });

  it("corrects a receiver, cancels a transaction with a reason and closes another by receipt, each answer shown", async () => {
    const rose = await intakeTransaction(world, ["690111000", "Rose Ekambi"], 6_000);
    await intakeTransaction(world, ["690111001", "Yves Mballa"], 6_500);
    await page.getByRole("link", { name: "Transactions" }).click();
    await page.getByRole("button", { name: "Actualiser" }).click();
    await page.getByRole("button", { name: "Détails Rose Ekambi 6 000 FCFA" }).click();
    let dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Corriger le bénéficiaire" }).click();
    await dialog.getByLabel("Nom").fill("Rose Ekambi Ndongo");
    await dialog.locator("form").getByRole("button", { name: "Envoyer" }).click();
    await dialog.getByText("Transaction mise à jour.").waitFor();
    await dialog.getByRole("heading", { name: "Rose Ekambi Ndongo · 6 000 FCFA" }).waitFor();
    await dialog.getByRole("button", { name: "Annuler la transaction" }).click();
    await dialog.getByLabel("Motif").fill("Le client a renoncé.");
    await dialog.locator("form").getByRole("button", { name: "Annuler la transaction" }).click();
    await dialog.getByText("annulée", { exact: true }).waitFor();
    await dialog.getByText("Le client a renoncé.").waitFor();
    expect(await dialog.getByRole("button", { name: "Lancer" }).count()).toBe(0);
    await dialog.getByRole("button", { name: "Fermer" }).click();
    // A cancelled transaction leaves an agent's view (pending ones and its launches only).
    const stored = await sys.api.get(`/v1/transactions/${rose}`, { token: world.adminToken });
    expect(stored.body).toMatchObject({
      state: "cancelled",
      receiver_name: "Rose Ekambi Ndongo",
      cancelled_reason: "Le client a renoncé.",
    });

    await page.getByRole("button", { name: "Détails Yves Mballa 6 500 FCFA" }).click();
    dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Clôturer sur reçu" }).click();
    await dialog.getByText("clôturée", { exact: true }).waitFor();
    await dialog.getByRole("button", { name: "Fermer" }).click();
    // Both left the intake board, without a reload.
    await expect
      .poll(() =>
        page
          .getByRole("row")
          .filter({ hasText: /Yves Mballa|Rose Ekambi/ })
          .count(),
      )
      .toBe(0);
  });

  it("settles an unproven operation with a note: it leaves the queue for the settled-on-word list", async () => {
    const to = RECIPIENTS[1]!;
    await unprovenOperation(world, to, 8_000);
    await go("#/arbitration", "Arbitrage");
    const settle = page.getByRole("button", { name: `Régler ${to[1]} 8 000 FCFA` });
    await settle.waitFor({ timeout: 20_000 });
    await settle.click();
    const dialog = page.getByRole("dialog");
    // What the handset last saw, to decide on: its outcome and its last USSD screen (none here).
    const screen = dialog.getByRole("region", { name: "Dernier écran USSD du téléphone" });
    await screen.getByText(/^Le téléphone a signalé : \S+\.$/).waitFor();
    await screen.getByText(/Aucun écran n'est revenu/).waitFor();
    await dialog.getByRole("radio", { name: "L'argent est arrivé" }).check();
    await dialog.getByLabel("Note").fill("Le client a confirmé par téléphone.");
    await dialog.getByRole("button", { name: "Régler", exact: true }).click();
    await page.getByText("Opération réglée : confirmée.").waitFor();
    await expect.poll(() => settle.count()).toBe(0);
    const settled = page.getByRole("table", { name: "Réglées sur parole" });
    await settled.getByRole("cell", { name: "Le client a confirmé par téléphone." }).waitFor({ timeout: 20_000 });
    expect(await settled.getByRole("cell", { name: "Alice Mbarga" }).count()).toBe(1);
  });

  it("attaches an orphan SMS to the operation it proves, chosen among its candidates", async () => {
    const to = RECIPIENTS[2]!;
    // The operator's SMS arrived before the operation was recorded: correlation keeps it as an orphan.
    await orphanSms(world, world.alice, to, 7_300);
    const operationId = await unprovenOperation(world, to, 7_300);
    // Another unproven operation to the same person, 500 FCFA more: offered, its difference named.
    await unprovenOperation(world, to, 7_800);
    await go("#/messages", "Messages");
    const details = page.getByRole("button", { name: "Détails 7 300 FCFA" });
    await details.waitFor({ timeout: 20_000 });
    await details.click();
    const dialog = page.getByRole("dialog");
    // Its parsed fields: the amount, the counterparty as the operator wrote it, the text.
    await dialog.getByText(`${to[1].toUpperCase()} ${to[0]}`).waitFor();
    await dialog.getByRole("heading", { name: "Opérations qu'il pourrait prouver" }).waitFor();
    // The SIM by its number and handset (the agent's grant names them), never its internal id.
    const simFact = dialog.locator("dt", { hasText: /^SIM$/ }).locator("xpath=following-sibling::dd[1]");
    await expect.poll(() => simFact.textContent()).toContain(world.alice.sim.msisdn);
    expect(await dialog.textContent()).not.toContain(world.alice.sim.simId);
    const candidate = dialog.getByRole("listitem").filter({ hasText: `${to[1]} · ${to[0]} · 7 300 FCFA` });
    await candidate.waitFor({ timeout: 20_000 });
    await candidate.getByText("même montant et même numéro").waitFor();
    const further = dialog.getByRole("listitem").filter({ hasText: `${to[1]} · ${to[0]} · 7 800 FCFA` });
    await further.getByText(/^le SMS porte 500\sFCFA de moins$/).waitFor();
    await candidate.getByRole("button", { name: "Rattacher" }).click();
    await page.getByText("SMS rattaché : opération confirmée.").waitFor();
    await expect.poll(() => details.count()).toBe(0);
    const op = await sys.api.get(`/v1/operations/${operationId}`, { token: world.alice.token });
    expect(op.body).toMatchObject({ status: "confirmed", evidence: { amount: 7_300 } });
  });

  it("shows who sent each unmatched SMS, and offers an unknown sender's text to no operation", async () => {
    const to = RECIPIENTS[2]!;
    await unprovenOperation(world, to, 6_400);
    // The operator's wording, exact amount and number, from an ordinary phone number.
    await orphanSms(world, world.alice, to, 6_400, "+237670000000");
    await go("#/messages", "Messages");
    const details = page.getByRole("button", { name: "Détails 6 400 FCFA" });
    await details.waitFor({ timeout: 20_000 });
    const row = page.getByRole("row").filter({ has: details });
    await row.getByRole("cell", { name: "Expéditeur inconnu" }).waitFor();
    await row.getByRole("cell", { name: "non", exact: true }).waitFor();
    await details.click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Expéditeur inconnu (+237670000000)").waitFor();
    await dialog
      .getByText("Pas envoyé par l'opérateur : ce SMS ne prouve rien et n'est proposé à aucune opération.")
      .waitFor();
    expect(await dialog.getByRole("button", { name: "Rattacher" }).count()).toBe(0);
    await dialog.getByRole("button", { name: "Fermer" }).click();
  });

  it("never shows Bob's operations or SMS to Alice, while Bob sees his own", async () => {
    const bobsRecipient: [string, string] = ["690123456", "Hortense Bobine"];
    await createOperation(world, world.bob, bobsRecipient, 4_200);
    await orphanSms(world, world.bob, ["690987654", "Gaston Bobo"], 9_999);
    // Bob's board shows both.
    const bobContext = await browser.newContext({ locale: "fr-FR" });
    const bobPage = await bobContext.newPage();
    await bobPage.goto(`${sys.url}/board/#/operations`);
    await signIn(bobPage, world.bob.login, world.bob.password);
    await bobPage.getByRole("cell", { name: bobsRecipient[1], exact: true }).waitFor({ timeout: 20_000 });
    await bobPage.evaluate(() => (location.hash = "#/messages"));
    await bobPage.getByRole("button", { name: "Détails 9 999 FCFA" }).waitFor({ timeout: 20_000 });
    await bobContext.close();
    // Alice's does not, after a refresh of each list and a few live reads.
    await go("#/operations", "Opérations");
    await page.getByRole("button", { name: "Actualiser" }).click();
    await page.getByRole("cell", { name: RECIPIENTS[0]![1], exact: true }).waitFor();
    expect(await page.getByText(bobsRecipient[1]).count()).toBe(0);
    await go("#/messages", "Messages");
    await page.getByRole("button", { name: "Actualiser" }).first().click();
    await new Promise((r) => setTimeout(r, 4000));
    expect(await page.getByText("9 999 FCFA").count()).toBe(0);
  });

  it("opens an operation and a transaction at a URL of their own: a sent link shows them, Back closes them", async () => {
    const to = RECIPIENTS[3]!;
    const operationId = await createOperation(world, world.alice, to, 5_100);
    await dial(world, operationId);
    await expect
      .poll(
        async () => (await sys.api.get(`/v1/operations/${operationId}`, { token: world.alice.token })).body.status,
        {
          timeout: 20_000,
        },
      )
      .toBe("confirmed");
    // A colleague's link, opened in a fresh page load.
    await page.evaluate((h) => (location.hash = h), `#/operations/${operationId}`);
    await page.reload();
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("heading", { name: `${to[1]} · 5 100 FCFA` }).waitFor();
    await dialog.getByText("confirmée", { exact: true }).waitFor();
    // Its proof, and no "failure" on a confirmed operation.
    await dialog.getByRole("heading", { name: "Preuve" }).waitFor();
    expect(await dialog.getByText("Échec").count()).toBe(0);
    await dialog.getByRole("button", { name: "Fermer" }).click();
    await expect.poll(() => page.evaluate(() => location.hash)).toBe("#/operations");
    // Back reopens it; the list stays behind.
    await page.goBack();
    await dialog.getByRole("heading", { name: `${to[1]} · 5 100 FCFA` }).waitFor();
    expect(await page.evaluate(() => location.hash)).toBe(`#/operations/${operationId}`);
    // Closed and another page chosen in the same moment (the dialog's close event comes a task
    // after the click): the page chosen stays.
    await page.evaluate(() => {
      document.querySelector<HTMLButtonElement>("dialog[open] .dialog-head button")!.click();
      location.hash = "#/transactions";
    });
    await page.getByRole("heading", { level: 2, name: "Transactions" }).waitFor();
    expect(await page.evaluate(() => location.hash)).toBe("#/transactions");

    const txId = await intakeTransaction(world, ["690111002", "Paul Nkoulou"], 4_400);
    await go("#/transactions", "Transactions");
    await page.getByRole("button", { name: "Actualiser" }).click();
    await page.getByRole("button", { name: "Détails Paul Nkoulou 4 400 FCFA" }).click();
    await dialog.getByRole("heading", { name: "Paul Nkoulou · 4 400 FCFA" }).waitFor();
    await expect.poll(() => page.evaluate(() => location.hash)).toBe(`#/transactions/${txId}`);
    await page.reload();
    await dialog.getByRole("heading", { name: "Paul Nkoulou · 4 400 FCFA" }).waitFor();
    await page.goBack();
    await expect.poll(() => dialog.count()).toBe(0);
  });

  it("keeps each row's action in view on a 390-px-wide phone, and the page never scrolls sideways", async () => {
    const phone = await browser.newContext({ locale: "fr-FR", viewport: { width: 390, height: 844 } });
    const p = await phone.newPage();
    await p.goto(`${sys.url}/board/#/operations`);
    await signIn(p, world.alice.login, world.alice.password);
    for (const [hash, action] of [
      ["#/operations", /^Détails /],
      ["#/transactions", /^Détails /],
      ["#/arbitration", /^Régler /],
      ["#/messages", /^Détails /],
    ] as const) {
      await p.evaluate((h) => (location.hash = h), hash);
      const button = p.getByRole("button", { name: action }).first();
      await button.waitFor({ timeout: 20_000 });
      const box = (await button.boundingBox())!;
      expect([hash, box.x >= 0 && box.x + box.width <= 390]).toEqual([hash, true]);
      expect([hash, await p.evaluate(() => document.documentElement.scrollWidth)]).toEqual([hash, 390]);
    }
    await phone.close();
  });

  it("speaks English when chosen, remembers it across a reload, and shows amounts and refusals in it", async () => {
    await page.getByLabel("Langue").selectOption("en");
    await page.getByRole("link", { name: "Matching operations" }).click();
    await page.getByRole("heading", { level: 2, name: "Matching operations" }).waitFor();
    await page.reload();
    await page.getByRole("heading", { level: 2, name: "Matching operations" }).waitFor();
    expect(await page.getByLabel("Language").inputValue()).toBe("en");
    // The contract's checks show before sending…
    await page.getByLabel("Number").fill("660000000");
    await page.getByLabel("Amount").fill("0");
    await page.getByRole("button", { name: "Record" }).click();
    await page.getByText("This number belongs to no operator.").waitFor();
    await page.getByText("A whole amount above 0.").waitFor();
    // …and the server's refusal shows from its reason, the detail beside it.
    await page.getByLabel("Number").fill("690555444");
    await page.getByLabel("Amount").fill("900000");
    await page.getByRole("button", { name: "Record" }).click();
    await page.getByText("Above your maximum amount per operation.").waitFor();
    await page.getByText(/Access profile limits an operation to 500000 FCFA; requested 900000/).waitFor();
    await page.getByLabel("Amount").fill("3000");
    await page.getByRole("button", { name: "Record" }).click();
    // The confirmation and the table say which SIM to dial from, by its number (not its id).
    await page.getByText(/^Recorded: dial FCFA\s3,000 to 690555444 from SIM 6\d{8}( · .+)?\.$/).waitFor();
    await page.getByRole("cell", { name: "to dial by hand" }).waitFor();
    await page.getByRole("columnheader", { name: "Dial from SIM" }).waitFor();
    expect(await page.getByRole("cell", { name: /^6\d{8}( · .+)?$/ }).count()).toBeGreaterThan(0);
    await page.getByLabel("Language").selectOption("fr");
    await page.getByRole("heading", { level: 2, name: "Opérations manuelles" }).waitFor();
    await page.getByRole("cell", { name: "3 000 FCFA" }).waitFor();
  });

  it("has no serious or critical axe violation on any page, nor on sign-in, and the CSP refused nothing", async () => {
    for (const [hash, heading] of [
      ["#/operations", "Opérations"],
      ["#/transactions", "Transactions"],
      ["#/arbitration", "Arbitrage"],
      ["#/messages", "Messages"],
      ["#/matching", "Opérations manuelles"],
    ] as const) {
      await go(hash, heading);
      await page
        .getByText(/Mis à jour à/)
        .first()
        .waitFor();
      await axeScan(page, hash);
    }
    await go("#/operations", "Opérations");
    await page.getByRole("button", { name: "Nouvelle opération" }).click();
    await axeScan(page, "the create-operation dialog");
    await page.getByRole("dialog").getByRole("button", { name: "Fermer" }).click();
    const signInPage = await context.newPage();
    await signInPage.goto(`${sys.url}/board/`);
    // The other tab's session is shared: sign out here to see the sign-in page.
    await signInPage.getByRole("button", { name: "Se déconnecter" }).click();
    await signInPage.getByRole("heading", { name: "Connexion" }).waitFor();
    await axeScan(signInPage, "sign-in");
    expect(cspViolations).toEqual([]);
  });

  it("sends every tab back to sign-in once the session is gone", async () => {
    // The sign-out in the other tab reached this one.
    await page.getByRole("heading", { name: "Connexion" }).waitFor();
    await signIn(page, world.alice.login, world.alice.password);
    await world.api.post("/v1/agents/logout", { token: (await currentToken(page))! });
    // The next call (here: opening another page) is refused 401: back to sign-in, saying why.
    await page.evaluate(() => (location.hash = "#/matching"));
    await page.getByText("Votre session est terminée. Reconnectez-vous.").waitFor();
    await page.getByRole("heading", { name: "Connexion" }).waitFor();
  });
});

async function currentToken(p: Page): Promise<string | undefined> {
  return p.evaluate(() => JSON.parse(sessionStorage.getItem("board.session") ?? "null")?.token);
}
