import { readdirSync, readFileSync, statSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { brotliDecompressSync } from "node:zlib";
import type { Browser, Page, Route } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openApiDocument } from "../../src/http/openapi.ts";
import { BOARD_DIR } from "../../src/http/board.ts";
import { allRoutes } from "../../src/routes/v1/index.ts";
import { startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { buildBoardOnce, launchChromium, signIn } from "./browser.ts";
import {
  ADMIN_LOGIN,
  ADMIN_PASSWORD,
  intakeTransaction,
  orphanSms,
  RECIPIENTS,
  seedWorld,
  unprovenOperation,
  type BoardWorld,
} from "./world.ts";

// What a day's work must not break, in Chromium against the whole system: a create whose
// outcome is unknown is sent again under the same request id (one transfer, not two); a
// list whose refetch failed says so and heals; refusals and validation read as sentences;
// actions on people and handsets say what they do first; the page's files go compressed.

let sys: TestSystem;
let world: BoardWorld;
let browser: Browser;

beforeAll(async () => {
  await buildBoardOnce(inject("testRun"));
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  world = await seedWorld(sys.url);
  browser = await launchChromium();
}, 240_000);

afterAll(async () => {
  await browser?.close();
  await sys?.stop();
});

async function signedIn(login: string, password: string, hash = ""): Promise<Page> {
  const page = await (await browser.newContext({ locale: "fr-FR" })).newPage();
  await page.goto(`${sys.url}/board/${hash}`);
  await signIn(page, login, password);
  return page;
}

const go = async (page: Page, hash: string, heading: string | RegExp) => {
  await page.evaluate((h) => (location.hash = h), hash);
  await page.getByRole("heading", { level: 2, name: heading }).waitFor();
};

/** The answer the gateway gives when a service call's outcome is unknown. */
const OUTCOME_UNKNOWN = {
  status: 503,
  contentType: "application/json",
  headers: { "retry-after": "2" },
  body: JSON.stringify({
    detail: "The request did not finish in time; it may or may not have taken effect.",
    code: "server_error",
    context: { reason: "outcome_unknown", retry_after_s: 2 },
  }),
};

const isCreate = (route: Route) =>
  route.request().method() === "POST" && new URL(route.request().url()).pathname === "/v1/operations";

async function operationsTo(name: string): Promise<{ operation_id: string; request_id: string }[]> {
  const r = await world.api.get("/v1/operations?limit=250", { token: world.alice.token });
  expect(r.status).toBe(200);
  return (r.body as { dest_name: string; operation_id: string; request_id: string }[]).filter(
    (o) => o.dest_name === name,
  );
}

async function fillCreate(page: Page, msisdn: string, name: string, amount: string) {
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Numéro").fill(msisdn);
  await dialog.getByLabel("Nom du bénéficiaire").fill(name);
  await dialog.getByLabel("Montant").fill(amount);
}

describe("a create whose outcome is unknown", () => {
  it("is sent again under the same request id after a 503 that did create it: one operation, and the page says so", async () => {
    const page = await signedIn(world.alice.login, world.alice.password, "#/operations");
    const sent: string[] = [];
    let first = true;
    await page.route("**/v1/operations", async (route) => {
      if (!isCreate(route)) return route.continue();
      sent.push(JSON.parse(route.request().postData()!).request_id);
      if (!first) return route.continue();
      first = false;
      // The server does create it; the answer is lost and replaced by the gateway's 503.
      const real = await route.fetch();
      expect(real.status()).toBe(202);
      await route.fulfill(OUTCOME_UNKNOWN);
    });
    await page.getByRole("button", { name: "Nouvelle opération" }).click();
    await fillCreate(page, "690700001", "Marie Deuxfois", "3100");
    await page.getByRole("dialog").getByRole("button", { name: "Envoyer" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Pas de réponse sûre du serveur : le transfert a peut-être été fait.").waitFor();
    await dialog
      .getByText(/Renvoyer est sans risque : c'est la même demande, qui n'est jamais faite deux fois/)
      .waitFor();
    expect(await operationsTo("Marie Deuxfois")).toHaveLength(1);

    // Closed and opened again (as a person would, to look): the form comes back as sent.
    await dialog.getByRole("button", { name: "Fermer" }).click();
    await page.getByRole("button", { name: "Nouvelle opération" }).click();
    expect(await page.getByRole("dialog").getByLabel("Nom du bénéficiaire").inputValue()).toBe("Marie Deuxfois");
    await page
      .getByRole("dialog")
      .getByText(/le transfert a peut-être été fait/)
      .waitFor();
    await page.getByRole("dialog").getByRole("button", { name: "Renvoyer" }).click();

    const made = await operationsTo("Marie Deuxfois");
    await page.getByText(`Le premier envoi avait été fait : opération ${made[0]!.operation_id}`).waitFor();
    expect(sent).toHaveLength(2);
    expect(sent[1]).toBe(sent[0]);
    expect(made).toEqual([expect.objectContaining({ request_id: sent[0] })]);
    await page.context().close();
  });

  it("is sent again under the same id after the network failed, in English too, and the next create gets a new id", async () => {
    const page = await signedIn(world.alice.login, world.alice.password, "#/operations");
    await page.getByLabel("Langue").selectOption("en");
    const sent: string[] = [];
    let failures = 1;
    await page.route("**/v1/operations", async (route) => {
      if (!isCreate(route)) return route.continue();
      sent.push(JSON.parse(route.request().postData()!).request_id);
      if (failures-- > 0) return route.abort("connectionreset");
      return route.continue();
    });
    await page.getByRole("button", { name: "New operation" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByLabel("Number").fill("690700002");
    await dialog.getByLabel("Recipient name").fill("Joel Reseau");
    await dialog.getByLabel("Amount").fill("3200");
    await dialog.getByRole("button", { name: "Send" }).click();
    await dialog.getByText("No definite answer from the server: the transfer may have been made.").waitFor();
    await dialog.getByText(/Sending again is safe: it is the same request, which is never made twice/).waitFor();
    await dialog.getByRole("button", { name: "Send again" }).click();
    await page.getByText(/^Operation [0-9a-f-]{36} queued\.$/).waitFor();
    expect(sent).toEqual([sent[0], sent[0]]);
    expect(await operationsTo("Joel Reseau")).toEqual([expect.objectContaining({ request_id: sent[0] })]);

    // A definite answer ended that request: another transfer is another request.
    await page.getByRole("button", { name: "New operation" }).click();
    await fillCreateEn(page, "690700003", "Joel Reseau", "3300");
    await page.getByRole("dialog").getByRole("button", { name: "Send" }).click();
    await expect.poll(async () => (await operationsTo("Joel Reseau")).length).toBe(2);
    expect(sent).toHaveLength(3);
    expect(sent[2]).not.toBe(sent[0]);
    await page.getByLabel("Language").selectOption("fr");
    await page.context().close();
  });
});

describe("a retry whose outcome is unknown", () => {
  it("is sent again under the same request id: one retry, said made", async () => {
    const to: [string, string] = ["690700030", "Remi Relance"];
    const parent = await unprovenOperation(world, to, 3_400);
    const page = await signedIn(world.alice.login, world.alice.password, "#/operations");
    const sent: string[] = [];
    let first = true;
    await page.route("**/v1/operations", async (route) => {
      if (!isCreate(route)) return route.continue();
      sent.push(JSON.parse(route.request().postData()!).request_id);
      if (!first) return route.continue();
      first = false;
      const real = await route.fetch();
      expect(real.status()).toBe(202);
      await route.fulfill(OUTCOME_UNKNOWN);
    });
    await page.getByRole("button", { name: `Détails ${to[1]} 3 400 FCFA` }).click({ timeout: 20_000 });
    const dialog = page.getByRole("dialog");
    await dialog.getByRole("button", { name: "Relancer" }).click();
    // No proof came for it: the retry asks first, then goes.
    await dialog.getByRole("alertdialog").getByRole("button", { name: "Relancer" }).click();
    await dialog.getByText("Pas de réponse sûre du serveur : le transfert a peut-être été fait.").waitFor();
    await dialog.getByRole("button", { name: "Renvoyer" }).click();
    const children = (await operationsTo(to[1])).filter((o) => o.operation_id !== parent);
    expect(children).toEqual([expect.objectContaining({ request_id: sent[0] })]);
    await dialog.getByText(`Le premier envoi avait été fait : relance ${children[0]!.operation_id}`).waitFor();
    expect(sent).toEqual([sent[0], sent[0]]);
    await page.context().close();
  });
});

async function fillCreateEn(page: Page, msisdn: string, name: string, amount: string) {
  const dialog = page.getByRole("dialog");
  await dialog.getByLabel("Number").fill(msisdn);
  await dialog.getByLabel("Recipient name").fill(name);
  await dialog.getByLabel("Amount").fill(amount);
}

describe("a list whose refetch fails", () => {
  it("says it is stale, tries again with back-off and shows the new transaction once a refetch succeeds", async () => {
    const page = await signedIn(world.alice.login, world.alice.password, "#/transactions");
    await page.getByText(/^En direct · Mis à jour à/).waitFor({ timeout: 20_000 });
    let failing = 0;
    const answered: number[] = [];
    await page.route(/\/v1\/transactions(\?|$)/, async (route) => {
      if (route.request().method() !== "GET") return route.continue();
      if (failing > 0) {
        failing--;
        answered.push(503);
        return route.fulfill(OUTCOME_UNKNOWN);
      }
      answered.push(200);
      return route.continue();
    });
    failing = 2;
    const receiver: [string, string] = ["690700010", "Lucie Perimee"];
    await intakeTransaction(world, receiver, 5_500);
    // The hint's refetch answers 503: the page does not claim to be live.
    await page
      .getByText(/^Pas à jour : la dernière mise à jour réussie date de \d\d:\d\d:\d\d\. Nouvel essai…$/)
      .waitFor({
        timeout: 20_000,
      });
    expect(await page.getByText(/^En direct · Mis à jour à/).count()).toBe(0);
    // Tried again (1 s, then 2 s) until a refetch succeeds, with no click.
    const show = page.getByRole("button", { name: /nouveautés — afficher/ });
    const details = page.getByRole("button", { name: `Détails ${receiver[1]} 5 500 FCFA` });
    await expect
      .poll(async () => (await show.isVisible()) || (await details.isVisible()), { timeout: 20_000 })
      .toBe(true);
    // Two refetches answered 503 before the one that showed it (none was given up on).
    expect(answered.indexOf(200)).toBe(2);
    await page.getByText(/^En direct · Mis à jour à/).waitFor();
    await page.context().close();
  });

  it("refetches what is on screen on every reconnect of the event stream", async () => {
    const context = await browser.newContext({ locale: "fr-FR" });
    const page = await context.newPage();
    let connections = 0;
    const fetchesAfter: number[] = [];
    // Each connection of the stream is answered and then ends: the board reconnects.
    await page.route("**/v1/events", async (route) => {
      connections++;
      fetchesAfter[connections] = 0;
      await route.fulfill({ status: 200, contentType: "text/event-stream", body: ": connected\n\n" });
    });
    page.on("request", (r) => {
      if (r.method() === "GET" && /\/v1\/transactions(\?|$)/.test(new URL(r.url()).pathname + "?"))
        fetchesAfter[connections] = (fetchesAfter[connections] ?? 0) + 1;
    });
    await page.goto(`${sys.url}/board/#/transactions`);
    await signIn(page, world.alice.login, world.alice.password);
    await expect.poll(() => connections, { timeout: 20_000 }).toBeGreaterThanOrEqual(3);
    // No live hint ever reaches this page: a transaction written now shows by a reconnect's refetch.
    const receiver: [string, string] = ["690700011", "Paul Reconnecte"];
    await intakeTransaction(world, receiver, 5_600);
    const show = page.getByRole("button", { name: /nouveautés — afficher/ });
    const details = page.getByRole("button", { name: `Détails ${receiver[1]} 5 600 FCFA` });
    await expect
      .poll(async () => (await show.isVisible()) || (await details.isVisible()), { timeout: 20_000 })
      .toBe(true);
    // Every connection but the one still open was followed by a refetch of the list.
    const done = connections - 1;
    expect(fetchesAfter.slice(1, done + 1).every((n) => n >= 1)).toBe(true);
    await context.close();
  });
});

describe("refusals and validation, as a person reads them", () => {
  it("says 'wrong login or password' for a wrong password, in French and in English", async () => {
    const page = await (await browser.newContext({ locale: "fr-FR" })).newPage();
    await page.goto(`${sys.url}/board/`);
    await page.getByLabel("Identifiant").fill(world.alice.login);
    await page.getByLabel("Mot de passe").fill("not-her-password");
    await page.getByRole("button", { name: "Se connecter" }).click();
    await page.getByText("Identifiant ou mot de passe incorrect.").waitFor();
    expect(await page.getByText("Vous n'êtes pas connecté.").count()).toBe(0);
    await page.getByLabel("Langue").selectOption("en");
    await page.getByLabel("Login").fill(world.alice.login);
    await page.getByLabel("Password").fill("still-not-hers");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByText("Wrong login or password.").waitFor();
    await page.context().close();
  });

  it("has a text in both languages for every refusal reason of every route the board calls", () => {
    const source = (dir: string): string =>
      readdirSync(dir)
        .map((f) => path.join(dir, f))
        .map((f) => (statSync(f).isDirectory() ? source(f) : /\.tsx?$/.test(f) ? readFileSync(f, "utf8") : ""))
        .join("\n");
    const board = source(path.resolve(import.meta.dirname, "../src"));
    const calls = [...board.matchAll(/api\.(GET|POST|PUT|PATCH|DELETE)\(\s*"([^"]+)"/g)].map(
      ([, method, p]) => [method!.toLowerCase(), p!] as const,
    );
    expect(calls.length).toBeGreaterThan(40);
    const doc = openApiDocument(allRoutes()) as {
      paths: Record<string, Record<string, { responses: Record<string, { description?: string }> }>>;
    };
    const reasons = new Set<string>();
    for (const [method, p] of calls) {
      const op = doc.paths[p]?.[method];
      expect(op, `${method} ${p} in the OpenAPI document`).toBeDefined();
      for (const r of Object.values(op!.responses))
        for (const m of (r.description ?? "").matchAll(/Reasons \(context\.reason\): ([\w, ]+)/g))
          for (const reason of m[1]!.split(",")) reasons.add(reason.trim());
    }
    expect(reasons.size).toBeGreaterThan(50);
    // The reasons' catalogue (tsc also holds it against every service's reasons).
    const i18n = readFileSync(path.resolve(import.meta.dirname, "../src/catalogue/reasons.ts"), "utf8");
    const frAt = i18n.indexOf("export const fr");
    const keys = (text: string) => new Set([...text.matchAll(/^ {2}"r\.(\w+)":/gm)].map((m) => m[1]!));
    const en = keys(i18n.slice(0, frAt));
    const fr = keys(i18n.slice(frAt));
    expect([...reasons].filter((r) => !en.has(r)).sort(), "reasons without an English text").toEqual([]);
    expect([...reasons].filter((r) => !fr.has(r)).sort(), "reasons without a French text").toEqual([]);
  });
});

describe("a new agent's access, and actions on people and handsets", () => {
  let admin: Page;
  let nadia: { agentId: string; token: string };
  const access = async () =>
    (await world.api.get(`/v1/admin/agents/${nadia.agentId}/access`, { token: world.adminToken })).body;
  const person = async () =>
    ((await world.api.get("/v1/agents/admin", { token: world.adminToken })).body as any[]).find(
      (a) => a.agent_id === nadia.agentId,
    );

  beforeAll(async () => {
    nadia = await world.api.createAgent(world.adminToken, { login: "nadia", full_name: "Nadia Ekotto" });
    admin = await signedIn(ADMIN_LOGIN, ADMIN_PASSWORD, "#/people");
  });
  afterAll(() => admin?.context().close());

  it("starts a new agent's access from the contract's defaults, and never shows a schema message", async () => {
    await admin.getByRole("heading", { level: 2, name: "Personnes" }).waitFor();
    await admin.getByRole("button", { name: "Accès Nadia Ekotto" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByRole("checkbox", { name: world.alice.sim.msisdn, exact: false }).waitFor();
    expect(await dialog.getByRole("checkbox", { name: "deposit", exact: true }).isChecked()).toBe(true);
    expect(await dialog.getByRole("checkbox", { name: "balance", exact: true }).isChecked()).toBe(true);
    expect(await dialog.getByRole("checkbox", { name: "float_deposit", exact: true }).isChecked()).toBe(false);
    expect(await dialog.getByLabel(/Montant maximal par opération/).inputValue()).toBe("500000");
    // Sent as shown, with no SIM: said before sending, in words.
    await dialog.getByRole("button", { name: "Envoyer" }).click();
    await dialog.getByText("Choisissez au moins une SIM.").waitFor();
    // The server's own validation (a body the form would not send): fields by their names.
    await dialog.getByRole("checkbox", { name: world.alice.sim.msisdn, exact: false }).check();
    let altered = false;
    await admin.route("**/v1/admin/agents/*/access", async (route) => {
      if (route.request().method() !== "PATCH" || altered) return route.continue();
      altered = true;
      const body = JSON.parse(route.request().postData()!);
      return route.continue({ postData: JSON.stringify({ ...body, allowed_op_types: [] }) });
    });
    await dialog.getByRole("button", { name: "Envoyer" }).click();
    await dialog.getByText("Certains champs sont invalides.").waitFor();
    await dialog.getByText(/Vérifiez : les types d'opération\./).waitFor();
    expect(await dialog.getByText(/body\.|Too small|Array must/).count()).toBe(0);
    // Sent as shown with a SIM: the contract's defaults are what is granted.
    await dialog.getByRole("button", { name: "Envoyer" }).click();
    await admin.getByText("Accès de Nadia Ekotto enregistrés.").waitFor();
    expect(await access()).toMatchObject({
      allowed_sim_ids: [world.alice.sim.simId],
      allowed_op_types: expect.arrayContaining(["deposit", "balance"]),
      max_amount: 500_000,
    });
    expect((await access()).allowed_op_types).toHaveLength(2);
  });

  it("asks before making someone an admin: picking in the menu does nothing until confirmed", async () => {
    const menu = admin.getByRole("combobox", { name: "Rôle de Nadia Ekotto" });
    await menu.selectOption("admin");
    let dialog = admin.getByRole("dialog");
    await dialog.getByText(/Nadia Ekotto deviendra administrateur : il verra et changera tout/).waitFor();
    expect((await person()).role).toBe("agent");
    await dialog.getByRole("button", { name: "Fermer" }).click();
    expect(await menu.inputValue()).toBe("agent");
    expect((await person()).role).toBe("agent");
    await menu.selectOption("admin");
    dialog = admin.getByRole("dialog");
    await dialog.getByRole("button", { name: "Faire de Nadia Ekotto : administrateur" }).click();
    await admin.getByText("Nadia Ekotto est maintenant administrateur.").waitFor();
    expect((await person()).role).toBe("admin");
    await expect.poll(() => menu.inputValue()).toBe("admin");
  });

  it("says what a temporary password and a deactivation do before doing them", async () => {
    await admin.getByRole("button", { name: "Mot de passe temporaire Nadia Ekotto" }).click();
    let dialog = admin.getByRole("dialog");
    await dialog.getByText(/toutes ses sessions se terminent, son mot de passe actuel ne fonctionne plus/).waitFor();
    expect((await person()).must_change_password).toBe(false);
    await dialog.getByRole("button", { name: "Donner un mot de passe temporaire" }).click();
    await admin.getByText(/Mot de passe temporaire donné à Nadia Ekotto/).waitFor();
    await admin.getByRole("alert").locator("code").waitFor();
    expect((await person()).must_change_password).toBe(true);
    await admin.getByRole("button", { name: "Je l'ai transmis" }).click();

    await admin.getByRole("button", { name: "Désactiver Nadia Ekotto" }).click();
    dialog = admin.getByRole("dialog");
    await dialog.getByText(/Nadia Ekotto ne pourra plus se connecter/).waitFor();
    expect((await person()).is_active).toBe(true);
    await dialog.getByRole("button", { name: "Désactiver Nadia Ekotto" }).click();
    await admin.getByText(/Nadia Ekotto désactivé/).waitFor();
    expect((await person()).is_active).toBe(false);
  });

  it("says that a new token cuts the handset off before replacing it", async () => {
    await go(admin, "#/handsets", "Téléphones");
    const bobs = world.bob.device.token;
    const deviceCall = () => world.api.get("/v1/device/me", { token: bobs });
    expect((await deviceCall()).status).toBe(200);
    await admin.getByRole("button", { name: "Nouveau jeton Bob Tchoupo's handset" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(/le téléphone est coupé/).waitFor();
    expect((await deviceCall()).status).toBe(200);
    await dialog.getByRole("button", { name: "Remplacer le jeton" }).click();
    await admin.getByRole("alert").locator("code").waitFor();
    expect((await deviceCall()).status).toBe(401);
  });
});

describe("the SIMs page", () => {
  it("registers a SIM with its operator, number, PIN and handset slot, the contract's checks and refusals in words", async () => {
    const admin = await signedIn(ADMIN_LOGIN, ADMIN_PASSWORD, "#/sims");
    await admin.getByRole("heading", { level: 2, name: "SIM" }).waitFor();
    const form = admin.getByRole("form", { name: "Enregistrer une SIM" });
    await form.getByLabel("Numéro de la nouvelle SIM").fill("690799001");
    await form.getByLabel("Code PIN").fill("12");
    await form.getByRole("button", { name: "Enregistrer la SIM" }).click();
    await form.getByText("Un code PIN de 4 à 8 chiffres.").waitFor();
    await form.getByLabel("Code PIN").fill("4321");
    await form.getByLabel("Téléphone").selectOption({ label: "Bob Tchoupo's handset" });
    await form.getByLabel("Emplacement").selectOption({ label: "SIM 2" });
    await form.getByRole("button", { name: "Enregistrer la SIM" }).click();
    await admin.getByText("SIM 690799001 enregistrée.").waitFor();
    await admin.getByRole("rowheader", { name: "690799001" }).waitFor();
    const sims = (await world.api.get("/v1/sims", { token: world.adminToken })).body as any[];
    expect(sims.find((s) => s.msisdn === "690799001")).toMatchObject({
      operator: "operator_b",
      device_id: world.bob.device.deviceId,
      subscription_slot: 1,
    });
    // The PIN is not kept by the page; the same number again is refused in words.
    expect(await form.getByLabel("Code PIN").inputValue()).toBe("");
    await form.getByLabel("Numéro de la nouvelle SIM").fill("690799001");
    await form.getByLabel("Code PIN").fill("4321");
    await form.getByLabel("Téléphone").selectOption({ label: "Dans aucun téléphone" });
    await form.getByRole("button", { name: "Enregistrer la SIM" }).click();
    await admin.getByText("Une SIM avec ce numéro existe déjà.").waitFor();
    await admin.context().close();
  });
});

describe("the page's files, the skip link and the attach buttons", () => {
  it("sends the page (its script and style inline) and the app compressed, has an icon, and no request of a page load fails", async () => {
    const page = await (await browser.newContext({ locale: "fr-FR" })).newPage();
    const failed: string[] = [];
    const wire: { url: string; file: string; encoding?: string; bytes: number }[] = [];
    page.on("console", (m) => {
      if (m.type() === "error") failed.push(m.text());
    });
    page.on("response", async (r) => {
      if (r.status() >= 400) failed.push(`${r.status()} ${r.url()}`);
      const p = new URL(r.url()).pathname;
      const file =
        p === "/board/" ? "index.html" : /^\/board\/assets\/.*\.(js|css)$/.test(p) ? `assets/${path.basename(p)}` : "";
      if (file)
        wire.push({
          url: r.url(),
          file,
          encoding: await r.headerValue("content-encoding").then((v) => v ?? undefined),
          bytes: (await r.request().sizes()).responseBodySize,
        });
    });
    await page.goto(`${sys.url}/board/`);
    await page.getByRole("heading", { name: "Connexion" }).waitFor();
    // The page, and the app it preloads (every page after sign-in): nothing else.
    await expect
      .poll(() => wire.map((w) => w.file.replace(/-[\w-]+\.js$/, ".js")).sort())
      .toEqual(["assets/app.js", "index.html"]);
    await page.waitForLoadState("networkidle");
    expect(failed).toEqual([]);
    for (const w of wire) {
      expect(["br", "gzip"]).toContain(w.encoding);
      const file = path.join(BOARD_DIR, w.file);
      expect(w.bytes).toBe(statSync(`${file}${w.encoding === "br" ? ".br" : ".gz"}`).size);
      expect(w.bytes).toBeLessThan(statSync(file).size / 3);
    }
    console.log(`board files on the wire: ${wire.map((w) => `${w.file} ${w.encoding} ${w.bytes} B`).join(", ")}`);
    const iconHref = await page.locator('link[rel="icon"]').getAttribute("href");
    expect(iconHref).toBe("/board/favicon.svg");
    const icon = await page.request.get(`${sys.url}${iconHref}`);
    expect([icon.status(), icon.headers()["content-type"]]).toEqual([200, "image/svg+xml"]);
    await page.context().close();
  });

  it("answers brotli to a client that asks for it, the same bytes once decoded", async () => {
    const js = readdirSync(path.join(BOARD_DIR, "assets")).find((f) => f.endsWith(".js"))!;
    const res = await new Promise<{ headers: Record<string, unknown>; body: Buffer }>((resolve, reject) => {
      const req = request(
        `${sys.url}/board/assets/${js}`,
        { headers: { "accept-encoding": "gzip;q=0.5, br" } },
        (r) => {
          const chunks: Buffer[] = [];
          r.on("data", (c: Buffer) => chunks.push(c));
          r.on("end", () => resolve({ headers: r.headers, body: Buffer.concat(chunks) }));
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(res.headers["content-encoding"]).toBe("br");
    expect(res.headers["content-type"]).toMatch(/^text\/javascript/);
    expect(res.headers["vary"]).toBe("Accept-Encoding");
    expect(brotliDecompressSync(res.body).equals(readFileSync(path.join(BOARD_DIR, "assets", js)))).toBe(true);
  });

  it("leads the skip link to the page's content, and names each attach button's operation", async () => {
    const to = RECIPIENTS[2]!;
    await unprovenOperation(world, to, 7_400);
    await orphanSms(world, world.alice, to, 7_401);
    const page = await signedIn(world.alice.login, world.alice.password, "#/messages");
    await page.getByRole("heading", { level: 2, name: "Messages" }).waitFor();
    await page.getByRole("link", { name: "Aller au contenu" }).focus();
    await page.keyboard.press("Enter");
    expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");
    expect(await page.getByText("Cette page n'existe pas").count()).toBe(0);
    await page.getByRole("heading", { level: 2, name: "Messages" }).waitFor();

    await page.getByRole("button", { name: "Détails 7 401 FCFA" }).click({ timeout: 20_000 });
    const attach = page
      .getByRole("dialog")
      .getByRole("button", { name: new RegExp(`^Rattacher à l'opération ${to[1]} · ${to[0]} · 7 400 FCFA · `) });
    await attach.waitFor({ timeout: 20_000 });
    expect(await attach.textContent()).toBe("Rattacher");
    await page.context().close();
  });
});

describe("the menu", () => {
  it("shows beside each page how many things wait there, and follows them live", async () => {
    const page = await signedIn(world.alice.login, world.alice.password, "#/operations");
    const count = async (path: string) =>
      ((await world.api.get(path, { token: world.alice.token })).body as unknown[]).length;
    const expected = {
      Transactions: await count("/v1/transactions?state=pending&limit=250"),
      Arbitrage: await count("/v1/operations/unproven?limit=250&all=true"),
      Messages: await count("/v1/evidences?unmatched=true&all=true&limit=250"),
    };
    expect(Math.min(...Object.values(expected))).toBeGreaterThan(0);
    const shown = (name: string) =>
      page
        .getByRole("navigation")
        .getByRole("listitem")
        .filter({ has: page.getByRole("link", { name, exact: true }) })
        .locator(".count");
    for (const [name, n] of Object.entries(expected)) {
      await expect.poll(() => shown(name).textContent(), { timeout: 20_000 }).toBe(`${n} en attente`);
      const link = page.getByRole("navigation").getByRole("link", { name, exact: true });
      expect(await link.getAttribute("aria-describedby")).toBe(await shown(name).getAttribute("id"));
    }
    // Operations: nothing counted (the arbitration queue is where waiting operations are).
    expect(await shown("Opérations").count()).toBe(0);
    await intakeTransaction(world, ["690700020", "Nina Compte"], 5_700);
    await expect
      .poll(() => shown("Transactions").textContent(), { timeout: 20_000 })
      .toBe(`${expected.Transactions + 1} en attente`);
    await page.context().close();
  });
});
