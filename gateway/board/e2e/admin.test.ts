import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { sendHeartbeat } from "../../../test/support/fleet-fixtures.ts";
import { startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { axeScan } from "./axe.ts";
import { buildBoardOnce, launchChromium, signIn } from "./browser.ts";
import {
  ADMIN_LOGIN,
  ADMIN_PASSWORD,
  orphanSms,
  RECIPIENTS,
  seedWorld,
  unprovenOperation,
  type BoardWorld,
} from "./world.ts";

// The admin's pages in a real browser against the whole system: each action through the
// page is checked again through the API, and the pages an agent or a supervisor may not
// use are neither in their menu nor reachable by a direct link.

let sys: TestSystem;
let world: BoardWorld;
let browser: Browser;
let admin: Page;

beforeAll(async () => {
  await buildBoardOnce(inject("testRun"));
  sys = await startTestSystem({ DEVICE_COOLDOWN_S: "0" });
  world = await seedWorld(sys.url);
  await sendHeartbeat(world.api, world.alice.device.token, {
    battery: 64,
    sims: [{ sim_id: world.alice.sim.simId, present: true }],
  });
  // A transfer of Alice's that no message proved, and two messages on her SIM whose balances
  // do not follow each other (a break in the day's balance chain).
  await unprovenOperation(world, RECIPIENTS[2]!, 8_000);
  await orphanSms(world, world.alice, RECIPIENTS[3]!, 7_301);
  await orphanSms(world, world.alice, RECIPIENTS[3]!, 9_999);
  browser = await launchChromium();
  admin = await signedIn(ADMIN_LOGIN, ADMIN_PASSWORD, "#/handsets");
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

const menu = (p: Page) => p.getByRole("navigation").getByRole("link");
const get = async (path: string) => (await world.api.get(path, { token: world.adminToken })).body;
const devices = async () => (await world.api.get("/v1/devices", { token: world.adminToken })).body as any[];

describe("the board's pages by role", () => {
  it("shows an agent the work pages only, and 'not allowed' on a direct link to the handsets", async () => {
    const alice = await signedIn(world.alice.login, world.alice.password, "#/handsets");
    await alice.getByRole("heading", { level: 2, name: "Accès non autorisé" }).waitFor();
    expect(await menu(alice).allTextContents()).toEqual([
      "Opérations",
      "Transactions",
      "Arbitrage",
      "Messages",
      "Opérations manuelles",
      "Analyses",
    ]);
    // The page is a courtesy: the server refuses Alice the route anyway.
    expect((await world.api.get("/v1/devices", { token: world.alice.token })).status).toBe(403);
    await axeScan(alice, "not allowed");
    for (const hash of ["#/money", "#/fleet", "#/audit", "#/wording"]) {
      await alice.evaluate((h) => (location.hash = h), hash);
      await alice.getByRole("heading", { level: 2, name: "Accès non autorisé" }).waitFor();
    }
    expect((await world.api.get("/v1/reconciliations/daily", { token: world.alice.token })).status).toBe(403);
    expect((await world.api.get("/v1/admin/limits", { token: world.alice.token })).status).toBe(403);
    expect((await world.api.get("/v1/audit", { token: world.alice.token })).status).toBe(403);
    expect((await world.api.get("/v1/admin/wording-rules", { token: world.alice.token })).status).toBe(403);
    await alice.context().close();
  });

  it("shows a supervisor the work pages without the admin's", async () => {
    await world.api.createAgent(world.adminToken, { login: "sabine", role: "supervisor", full_name: "Sabine Eyenga" });
    const sabine = await signedIn("sabine", "sabine-password-1");
    const items = await menu(sabine).allTextContents();
    expect(items).toEqual(expect.arrayContaining(["Analyses", "Contrôle de l'argent"]));
    expect(items).not.toContain("Téléphones");
    expect(items).not.toContain("Limites et disjoncteur");
    expect(items).not.toContain("Journal d'audit");
    expect(items).not.toContain("Règles de libellé");
    for (const hash of ["#/handsets", "#/fleet", "#/audit", "#/wording"]) {
      await sabine.evaluate((h) => (location.hash = h), hash);
      await sabine.getByRole("heading", { level: 2, name: "Accès non autorisé" }).waitFor();
    }
    const sabineToken = await world.api.login("sabine", "sabine-password-1");
    expect((await world.api.get("/v1/admin/health", { token: sabineToken })).status).toBe(403);
    expect((await world.api.get("/v1/admin/wording-rules", { token: sabineToken })).status).toBe(403);
    // The money checks are hers: the fleet's day, each SIM by its number where her grant names it,
    // else by its short id (the SIM list is the admin's; she has no grant here).
    await sabine.evaluate(() => (location.hash = "#/money"));
    await sabine.getByRole("heading", { level: 3, name: /^La flotte/ }).waitFor();
    await sabine.getByRole("rowheader", { name: world.alice.sim.simId.slice(0, 8), exact: true }).waitFor();
    await axeScan(sabine, "money checks (supervisor)");
    await sabine.context().close();
  });

  it("shows an admin every page, the handsets among them", async () => {
    expect(await menu(admin).allTextContents()).toEqual(expect.arrayContaining(["Téléphones", "Règles de libellé"]));
  });
});

describe("the handsets page", () => {
  it("lists every handset with its health, its SIMs and what it runs", async () => {
    await admin.getByRole("heading", { level: 2, name: "Téléphones" }).waitFor();
    const alice = admin
      .getByRole("row")
      .filter({ has: admin.getByRole("rowheader", { name: "Alice Mbarga's handset" }) });
    await alice.getByRole("cell", { name: "64 %" }).waitFor();
    await alice.getByRole("cell", { name: "4G" }).waitFor();
    await alice.getByRole("cell", { name: "1.2.0" }).waitFor();
    await alice.getByText(`SIM 1 : operator_b ${world.alice.sim.msisdn}`).waitFor();
    await alice.getByRole("cell", { name: "Rien" }).waitFor();
    // Bob's handset never sent a heartbeat: the fleet service calls it offline.
    const bob = admin.getByRole("row").filter({ has: admin.getByRole("rowheader", { name: "Bob Tchoupo's handset" }) });
    await bob.getByText("(offline)").waitFor();
    await axeScan(admin, "handsets");
  });

  it("registers a handset and shows its token once, a token the API then accepts", async () => {
    await admin.getByLabel("Nom du nouveau téléphone").fill("Caisse Akwa");
    await admin.getByRole("button", { name: "Enregistrer" }).click();
    await admin.getByText("Téléphone Caisse Akwa enregistré.").waitFor();
    const token = (await admin.locator(".once code").textContent())!;
    expect(token.length).toBeGreaterThan(20);
    expect((await devices()).map((d) => d.label)).toContain("Caisse Akwa");
    await sendHeartbeat(world.api, token);
    await admin.getByRole("button", { name: "Je l'ai saisi" }).click();
    expect(await admin.getByText(token).count()).toBe(0);
    await admin.reload();
    await admin.getByRole("rowheader", { name: "Caisse Akwa" }).waitFor();
    expect(await admin.getByText(token).count()).toBe(0);
  });

  it("renames a handset, then deletes it after saying what deleting does", async () => {
    await admin.getByRole("button", { name: "Renommer Caisse Akwa" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByLabel("Nom").fill("Caisse Bonanjo");
    await dialog.getByRole("button", { name: "Renommer" }).click();
    await admin.getByText("Téléphone renommé Caisse Bonanjo.").waitFor();
    await admin.getByRole("rowheader", { name: "Caisse Bonanjo" }).waitFor();
    expect((await devices()).map((d) => d.label)).toEqual(expect.arrayContaining(["Caisse Bonanjo"]));
    expect((await devices()).map((d) => d.label)).not.toContain("Caisse Akwa");

    await admin.getByRole("button", { name: "Supprimer Caisse Bonanjo" }).click();
    await admin
      .getByRole("dialog")
      .getByText(/retournent au stock non attribué/)
      .waitFor();
    await axeScan(admin, "the delete-handset dialog");
    await admin.getByRole("dialog").getByRole("button", { name: "Supprimer le téléphone" }).click();
    await admin.getByText("Téléphone Caisse Bonanjo supprimé.").waitFor();
    await expect.poll(() => admin.getByRole("rowheader", { name: "Caisse Bonanjo" }).count()).toBe(0);
    expect((await devices()).map((d) => d.label)).not.toContain("Caisse Bonanjo");
  });

  it("issues Bob's handset a new token, shown once: the old one stops working", async () => {
    await admin.getByRole("button", { name: "Nouveau jeton Bob Tchoupo's handset" }).click();
    await admin.getByRole("dialog").getByRole("button", { name: "Remplacer le jeton" }).click();
    const token = (await admin.locator(".once code").textContent())!;
    const old = await world.api.post("/v1/device/heartbeat", {
      token: world.bob.device.token,
      body: { app_version: "1.2.0", battery: 50, network: "4G", sims: [] },
    });
    expect(old.status).toBe(401);
    await sendHeartbeat(world.api, token);
    await admin.getByRole("button", { name: "Je l'ai saisi" }).click();
  });
});

describe("the SIMs page", () => {
  const sim = async (id: string) => (await world.api.get(`/v1/sims/${id}`, { token: world.adminToken })).body;
  const rowOf = (msisdn: string) =>
    admin.getByRole("row").filter({ has: admin.getByRole("rowheader", { name: msisdn, exact: true }) });

  it("lists each SIM with its handset, measured balance, time and source, and never a PIN", async () => {
    await admin.getByRole("link", { name: "SIM", exact: true }).click();
    await admin.getByRole("heading", { level: 2, name: "SIM" }).waitFor();
    const alice = rowOf(world.alice.sim.msisdn);
    await alice.getByRole("cell", { name: "Alice Mbarga's handset, SIM 1" }).waitFor();
    await alice.getByRole("cell", { name: "500 000 FCFA" }).waitFor();
    await alice.getByRole("cell", { name: /\(api\)$/ }).waitFor();
    await alice.getByRole("cell", { name: "active" }).waitFor();
    expect(await admin.content()).not.toContain(world.alice.sim.pin);
    await axeScan(admin, "SIMs");
  });

  it("freezes and unfreezes a SIM, as the API then says", async () => {
    const alice = rowOf(world.alice.sim.msisdn);
    await alice.getByRole("button", { name: `Geler ${world.alice.sim.msisdn}` }).click();
    await admin.getByText(`SIM ${world.alice.sim.msisdn} gelée`).waitFor();
    await alice.getByRole("cell", { name: "gelée" }).waitFor();
    expect((await sim(world.alice.sim.simId)).status).toBe("frozen");
    await alice.getByRole("button", { name: `Dégeler ${world.alice.sim.msisdn}` }).click();
    await alice.getByRole("cell", { name: "active" }).waitFor();
    expect((await sim(world.alice.sim.simId)).status).toBe("active");
  });

  it("takes a SIM out of its handset and puts it back in another slot", async () => {
    const bob = rowOf(world.bob.sim.msisdn);
    await bob.getByRole("button", { name: `Retirer ${world.bob.sim.msisdn}` }).click();
    await bob.getByRole("cell", { name: "Dans aucun téléphone" }).waitFor();
    expect(await sim(world.bob.sim.simId)).toMatchObject({ device_id: null, subscription_slot: null });
    await bob.getByRole("button", { name: `Mettre dans un téléphone ${world.bob.sim.msisdn}` }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByLabel("Téléphone").selectOption({ label: "Bob Tchoupo's handset" });
    await dialog.getByLabel("Emplacement").selectOption({ label: "SIM 2" });
    await axeScan(admin, "the assign-SIM dialog");
    await dialog.getByRole("button", { name: "Mettre dans un téléphone" }).click();
    await bob.getByRole("cell", { name: "Bob Tchoupo's handset, SIM 2" }).waitFor();
    expect(await sim(world.bob.sim.simId)).toMatchObject({
      device_id: world.bob.device.deviceId,
      subscription_slot: 1,
    });
  });

  it("sets a SIM's balance thresholds", async () => {
    await rowOf(world.alice.sim.msisdn)
      .getByRole("button", { name: `Seuils ${world.alice.sim.msisdn}` })
      .click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByLabel("Alerte de solde bas sous (FCFA)").fill("100000");
    await dialog.getByLabel("Alerte de solde haut au-dessus de (FCFA)").fill("2000000");
    await dialog.getByRole("button", { name: "Envoyer" }).click();
    await admin.getByText(`Seuils de ${world.alice.sim.msisdn} enregistrés.`).waitFor();
    expect(await sim(world.alice.sim.simId)).toMatchObject({
      low_balance_threshold: 100_000,
      high_balance_threshold: 2_000_000,
    });
  });
});

describe("a SIM's history", () => {
  it("shows what the SIM ran, as the history route gives it", async () => {
    const msisdn = world.alice.sim.msisdn;
    await admin
      .getByRole("row")
      .filter({ has: admin.getByRole("rowheader", { name: msisdn, exact: true }) })
      .getByRole("button", { name: `Historique ${msisdn}` })
      .click();
    const h = await get(`/v1/sims/${world.alice.sim.simId}/history`);
    expect(h.total_no_evidence).toBeGreaterThanOrEqual(1);
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(`${h.total_operations} opérations : ${h.total_confirmed} confirmées`).waitFor();
    expect(await dialog.locator("tbody tr").count()).toBe(h.operations.length);
    await axeScan(admin, "a SIM's history");
    await dialog.getByRole("button", { name: "Fermer" }).click();
  });
});

describe("the alerts page", () => {
  it("shows an alert as it is raised, without a reload, and acknowledges it", async () => {
    await admin.getByRole("link", { name: "Alertes" }).click();
    await admin.getByRole("heading", { level: 2, name: "Alertes" }).waitFor();
    await admin
      .getByText(/Mis à jour à/)
      .first()
      .waitFor();
    // Alice's handset reports her SIM missing: the fleet raises sim_absent.
    await sendHeartbeat(world.api, world.alice.device.token, {
      sims: [{ sim_id: world.alice.sim.simId, present: false }],
    });
    const message = `SIM ${world.alice.sim.msisdn} is reported absent from its handset`;
    // In the user's language, by the SIM's number; the server's English text stays beside it.
    const label = `SIM absente de son téléphone · ${world.alice.sim.msisdn}`;
    const ack = admin.getByRole("button", { name: `Prendre en compte ${label}` });
    const show = admin.getByRole("button", { name: /nouveautés — afficher/ }).first();
    await expect.poll(async () => (await show.isVisible()) || (await ack.isVisible()), { timeout: 20_000 }).toBe(true);
    if (await show.isVisible()) await show.click();
    await axeScan(admin, "alerts");
    const row = admin.getByRole("row").filter({ has: ack });
    await row.getByText("critique", { exact: true }).waitFor();
    await row.getByText(message).waitFor();
    await ack.click();
    await admin.getByText(`Prise en compte : ${label}`).waitFor();
    await expect.poll(() => ack.count()).toBe(0);
    const acknowledged = admin.getByRole("table", { name: "Prises en compte" });
    await acknowledged.getByText(message).waitFor();
    await acknowledged.getByText("SIM absente de son téléphone").first().waitFor();
    const stored = (await world.api.get("/v1/admin/notifications?acknowledged=true", { token: world.adminToken }))
      .body as { message: string; acknowledged_at: string | null }[];
    expect(stored.find((n) => n.message === message)?.acknowledged_at).toBeTruthy();
  });

  it("registers a webhook with its secret shown once, shows its deliveries, and removes it", async () => {
    const url = "https://hooks.example.test/transfers";
    const form = admin.getByRole("form", { name: "Webhooks" });
    await form.getByLabel("Adresse (https://…)").fill(url);
    await form.getByLabel("operation.failed").uncheck();
    await form.getByRole("button", { name: "Enregistrer" }).click();
    await admin.getByText(`Webhook ${url} enregistré.`).waitFor();
    const secret = (await admin.locator(".once code").textContent())!;
    const hooks = await get("/v1/admin/webhooks");
    expect(hooks).toEqual([expect.objectContaining({ url })]);
    expect([...hooks[0].events].sort()).toEqual(["alert.raised", "operation.confirmed"]);
    expect(JSON.stringify(hooks)).not.toContain(secret);
    await admin.getByRole("button", { name: "Je l'ai saisi" }).click();
    expect(await admin.getByText(secret).count()).toBe(0);
    const row = admin.getByRole("row").filter({ has: admin.getByRole("rowheader", { name: url }) });
    await row.getByRole("cell", { name: "Root Admin", exact: true }).waitFor();

    await admin.getByRole("button", { name: `Envois ${url}` }).click();
    await admin.getByRole("dialog").getByRole("table", { name: "Envois" }).waitFor();
    await axeScan(admin, "a webhook's deliveries");
    await admin.getByRole("dialog").getByRole("button", { name: "Fermer" }).click();

    await admin.getByRole("button", { name: `Retirer ${url}` }).click();
    await admin
      .getByRole("dialog")
      .getByText(/ne recevra plus rien/)
      .waitFor();
    await admin.getByRole("dialog").getByRole("button", { name: "Retirer le webhook" }).click();
    await admin.getByText(`Webhook ${url} retiré.`).waitFor();
    expect(await get("/v1/admin/webhooks")).toEqual([]);
  });
});

describe("the people page", () => {
  const agent = async (id: string) =>
    ((await world.api.get("/v1/agents/admin", { token: world.adminToken })).body as any[]).find(
      (a) => a.agent_id === id,
    );
  const bob = () => admin.getByRole("row").filter({ has: admin.getByRole("rowheader", { name: "Bob Tchoupo" }) });

  it("grants Bob a SIM, operation types and a maximum, as the API then says", async () => {
    await admin.getByRole("link", { name: "Personnes" }).click();
    await admin.getByRole("heading", { level: 2, name: "Personnes" }).waitFor();
    await bob().getByRole("button", { name: "Accès Bob Tchoupo" }).click();
    const dialog = admin.getByRole("dialog");
    // The current grant is shown: his own SIM.
    await expect.poll(() => dialog.getByLabel(`${world.bob.sim.msisdn} · operator_b`).isChecked()).toBe(true);
    await dialog.getByLabel(`${world.alice.sim.msisdn} · operator_b`).check();
    await dialog.getByLabel("withdrawal", { exact: true }).uncheck();
    await dialog.getByLabel("Montant maximal par opération (FCFA)").fill("150000");
    await axeScan(admin, "the access dialog");
    await dialog.getByRole("button", { name: "Envoyer" }).click();
    await admin.getByText("Accès de Bob Tchoupo enregistrés.").waitFor();
    const grant = (await world.api.get(`/v1/admin/agents/${world.bob.agentId}/access`, { token: world.adminToken }))
      .body;
    expect([...grant.allowed_sim_ids].sort()).toEqual([world.alice.sim.simId, world.bob.sim.simId].sort());
    expect(grant.allowed_op_types).not.toContain("withdrawal");
    expect(grant.allowed_op_types).toContain("deposit");
    expect(grant.max_amount).toBe(150_000);
  });

  it("issues Bob a temporary password shown once, which then signs him in to change it", async () => {
    await bob().getByRole("button", { name: "Mot de passe temporaire Bob Tchoupo" }).click();
    await admin.getByRole("dialog").getByRole("button", { name: "Donner un mot de passe temporaire" }).click();
    const password = (await admin.locator(".once code").textContent())!;
    const login = await world.api.post("/v1/agents/login", { body: { login: "bob", password } });
    expect(login.status).toBe(200);
    expect(login.body.must_change_password).toBe(true);
    await admin.getByRole("button", { name: "Je l'ai transmis" }).click();
    expect(await admin.getByText(password).count()).toBe(0);
    await axeScan(admin, "people");
  });

  it("creates a person with a temporary password shown once, which signs them in to change it", async () => {
    const form = admin.getByRole("form", { name: "Une nouvelle personne" });
    await form.getByLabel("Identifiant de la nouvelle personne").fill("carine");
    await form.getByLabel("Nom complet de la nouvelle personne").fill("Carine Ngo");
    await form.getByLabel("Rôle").selectOption("supervisor");
    await form.getByRole("button", { name: "Créer" }).click();
    await admin.getByText("Carine Ngo créé(e) ; voici un mot de passe temporaire.").waitFor();
    const password = (await admin.locator(".once code").textContent())!;
    const login = await world.api.post("/v1/agents/login", { body: { login: "carine", password } });
    expect(login.status).toBe(200);
    expect(login.body).toMatchObject({ role: "supervisor", must_change_password: true });
    await admin.getByRole("rowheader", { name: "Carine Ngo" }).waitFor();
    await admin.getByRole("button", { name: "Je l'ai transmis" }).click();
    expect(await admin.getByText(password).count()).toBe(0);
  });

  it("makes Bob a supervisor, then deactivates him", async () => {
    await bob().getByLabel("Rôle de Bob Tchoupo").selectOption("supervisor");
    await admin.getByRole("dialog").getByRole("button", { name: "Faire de Bob Tchoupo : superviseur" }).click();
    await admin.getByText("Bob Tchoupo est maintenant superviseur.").waitFor();
    expect((await agent(world.bob.agentId)).role).toBe("supervisor");
    await bob().getByRole("button", { name: "Désactiver Bob Tchoupo" }).click();
    await admin.getByRole("dialog").getByRole("button", { name: "Désactiver Bob Tchoupo" }).click();
    await bob()
      .getByRole("cell", { name: /désactivé/ })
      .waitFor();
    expect((await agent(world.bob.agentId)).is_active).toBe(false);
  });
});

describe("the money checks page", () => {
  it("shows each SIM's day as the reconciliation route gives it, and Alice's broken chain", async () => {
    await admin.getByRole("link", { name: "Contrôle de l'argent" }).click();
    await admin.getByRole("heading", { level: 2, name: "Contrôle de l'argent" }).waitFor();
    const day = (await get(`/v1/reconciliations/daily/${world.alice.sim.simId}`)).sims[0];
    expect(day.breaks.length).toBeGreaterThan(0);
    const msisdn = world.alice.sim.msisdn;
    const row = admin.getByRole("row").filter({ has: admin.getByRole("rowheader", { name: msisdn, exact: true }) });
    await row.getByRole("cell", { name: String(day.breaks.length), exact: true }).waitFor();
    const fleet = (await get("/v1/reconciliations/daily")).fleet;
    expect(fleet.sims_not_reconciled).toContain(world.alice.sim.simId);
    await admin
      .getByText(new RegExp(`^${msisdn}`))
      .first()
      .waitFor();
    await row.getByRole("button", { name: `Chaîne des soldes ${msisdn}` }).click();
    const chain = admin.getByRole("region", { name: /^Chaîne des soldes de/ });
    for (const b of day.breaks)
      await chain.getByText(new RegExp(`message ${b.message_id}, après ${b.previous_message_id}`)).waitFor();
    expect(await chain.locator("li.break").count()).toBe(day.breaks.length + (day.unexplained_xaf ? 1 : 0));
    // Every link of the day, as the chain route lists them, the broken ones highlighted.
    const links = await get(`/v1/reconciliations/daily/${world.alice.sim.simId}/chain`);
    expect(links.breaks).toBe(day.breaks.length);
    const table = chain.getByRole("table", { name: /^Chaque maillon, 1 à/ });
    await expect.poll(() => table.locator("tbody tr").count()).toBe(links.total);
    expect(await table.locator("tbody tr.flagged").count()).toBe(day.breaks.length);
    for (const b of day.breaks) {
      const link = table.getByRole("row").filter({ has: admin.getByRole("cell", { name: b.message_id }) });
      expect(await link.getAttribute("class")).toBe("flagged");
      await link.getByText(/^rompu : /).waitFor();
    }
    // Each link's outcome in French, never the API's word.
    const raw = /^(orphan|restated|movement|stored|not_correlated|unknown_sender|attached|ambiguous|divergent)$/;
    expect(await table.getByRole("cell", { name: raw }).count()).toBe(0);
    const outcomes = new Set((links.links as { outcome: string }[]).map((l) => l.outcome));
    expect(outcomes.has("orphan")).toBe(true);
    await table.getByRole("cell", { name: "non rapproché", exact: true }).first().waitFor();
    await axeScan(admin, "money checks");
  });

  it("lists the transfers no message proved, by handset, as the route gives them", async () => {
    const handsets = (await get("/v1/analytics/unproven-by-handset?days=7")).handsets;
    const alice = handsets.find((h: { label: string }) => h.label === "Alice Mbarga's handset");
    expect(alice.unproven).toBeGreaterThanOrEqual(1);
    const table = admin.getByRole("table", { name: "Transferts qu'aucun message n'a prouvés, par téléphone" });
    const row = table
      .getByRole("row")
      .filter({ has: admin.getByRole("rowheader", { name: "Alice Mbarga's handset" }) });
    await row.getByRole("cell", { name: String(alice.dialled), exact: true }).waitFor();
    await row.getByRole("cell", { name: `${Math.round(alice.unproven_rate * 100)} %` }).waitFor();
  });
});

describe("the analytics page", () => {
  it("draws each block beside the table of its figures, with the route's window and the one before", async () => {
    await admin.getByRole("link", { name: "Analyses" }).click();
    await admin.getByRole("heading", { level: 2, name: "Analyses" }).waitFor();
    await admin.getByText(/^Toute la flotte/).waitFor();
    const daily = admin.getByRole("table", { name: "Valeur envoyée chaque jour" });
    await expect.poll(() => daily.locator("tbody tr").count()).toBe(7);
    const charts = admin.locator(".chart");
    expect(await charts.count()).toBeGreaterThanOrEqual(6);
    for (const c of await charts.all()) expect(await c.getAttribute("aria-hidden")).toBe("true");
    // The figures are the route's (its projection trails the services by seconds: refresh until equal).
    const compare = admin.getByRole("table", { name: "Cette période face à la précédente" });
    await expect
      .poll(async () => {
        const r = await get("/v1/analytics?days=7");
        await admin.getByRole("button", { name: "Actualiser" }).click();
        const cells = await compare
          .getByRole("row")
          .filter({ has: admin.getByRole("rowheader", { name: "Transferts", exact: true }) })
          .getByRole("cell")
          .allTextContents();
        return cells.slice(0, 2).join("|") === `${r.money.transfers}|${r.previous.transfers}`;
      })
      .toBe(true);
    const r = await get("/v1/analytics?days=7");
    // The window in the user's language and in Douala: its first day and its last (today).
    const shortDay = (d: string | number) =>
      new Intl.DateTimeFormat("fr-CM", { timeZone: "Africa/Douala", dateStyle: "short" }).format(new Date(d));
    await admin
      .getByText(`du ${shortDay(r.since)} au ${shortDay(Date.now())}`)
      .first()
      .waitFor();
    const byStatus = admin.getByRole("table", { name: "Opérations par statut" });
    expect(await byStatus.locator("tbody tr").count()).toBe(Object.keys(r.reliability.by_status).length);
    const byAgent = admin.getByRole("table", { name: "Opérations par agent" });
    expect(await byAgent.locator("tbody tr").count()).toBe(r.activity.by_agent.length);
    await axeScan(admin, "analytics");

    await admin.getByRole("combobox", { name: "Période" }).selectOption("30");
    await admin.getByRole("button", { name: "Afficher" }).click();
    await expect.poll(() => daily.locator("tbody tr").count()).toBe(30);
  });

  it("shows an agent its own work, without the block by agent", async () => {
    const alice = await signedIn(world.alice.login, world.alice.password, "#/analytics");
    await alice.getByText(/^Votre propre travail/).waitFor();
    await alice.getByRole("table", { name: "Valeur envoyée chaque jour" }).waitFor();
    expect(await alice.getByRole("table", { name: "Opérations par agent" }).count()).toBe(0);
    await alice.context().close();
  });
});

describe("the limits and breaker page", () => {
  const health = () => get("/v1/admin/health");
  const statuses = async () => (await devices()).map((d) => d.status as string);

  it("trips the breaker after naming the handsets it will freeze", async () => {
    await admin.getByRole("link", { name: "Limites et disjoncteur" }).click();
    await admin.getByRole("heading", { level: 2, name: "Limites et disjoncteur" }).waitFor();
    await admin.getByText(/^Non déclenché/).waitFor();
    await admin.getByRole("button", { name: "Déclencher le disjoncteur" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(/les 2 téléphones actifs seront gelés.*Alice Mbarga's handset/).waitFor();
    await axeScan(admin, "the trip-breaker dialog");
    await dialog.getByRole("button", { name: "Déclencher maintenant" }).click();
    await admin.getByText(/^Disjoncteur déclenché\. Téléphones gelés : /).waitFor();
    expect((await health()).breaker_active).toBe(true);
    expect(await statuses()).toEqual(["frozen", "frozen"]);
    const refused = await world.api.post("/v1/operations", {
      token: world.adminToken,
      body: {
        request_id: crypto.randomUUID(),
        operator: "operator_b",
        client: { msisdn: "690222333", nom: "Paul" },
        montant: 1000,
      },
    });
    expect(refused.status).toBe(423);
  });

  it("resets the breaker only: operations open again, the handsets stay frozen", async () => {
    await admin.getByRole("button", { name: "Réarmer le disjoncteur seulement" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(/les 2 téléphones gelés le restent/).waitFor();
    await dialog.getByRole("button", { name: "Réarmer, les téléphones restent gelés" }).click();
    await admin.getByText(/^Disjoncteur réarmé\./).waitFor();
    expect((await health()).breaker_active).toBe(false);
    expect(await statuses()).toEqual(["frozen", "frozen"]);
    await admin.getByText(/^Téléphones gelés \(2\) :/).waitFor();
  });

  it("lifts the breaker and restores the handsets", async () => {
    await admin.getByRole("button", { name: "Lever le disjoncteur et rétablir les téléphones" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(/les 2 téléphones gelés redeviendront actifs/).waitFor();
    await dialog.getByRole("button", { name: "Lever et rétablir les téléphones" }).click();
    await admin.getByText(/^Disjoncteur levé\. Téléphones rétablis : /).waitFor();
    expect(await statuses()).toEqual(["active", "active"]);
    await admin.getByText("Téléphones gelés (0) : aucun").waitFor();
  });

  it("records a fleet limit after saying what it records", async () => {
    const form = admin.getByRole("form", { name: "Enregistrer une limite" });
    await form.getByLabel("Opérateur").selectOption("operator_b");
    await form.getByLabel("Type").selectOption("withdrawal");
    await form.getByLabel("Maximum par opération (FCFA)").fill("200000");
    await form.getByLabel("Maximum par jour et par agent (FCFA)").fill("1000000");
    await form.getByLabel("Maximum par jour et par SIM (FCFA)").fill("3000000");
    await form.getByRole("button", { name: "Enregistrer…" }).click();
    const dialog = admin.getByRole("dialog");
    await dialog
      .getByText(
        /^operator_b, withdrawal : au plus 200\s000\sFCFA par opération, 1\s000\s000\sFCFA par jour et par agent/,
      )
      .waitFor();
    await axeScan(admin, "the record-limit dialog");
    await dialog.getByRole("button", { name: "Enregistrer la limite" }).click();
    await admin.getByText("Limite enregistrée.").waitFor();
    expect((await get("/v1/admin/limits")).limits).toContainEqual(
      expect.objectContaining({
        operator: "operator_b",
        op_type: "withdrawal",
        max_amount: 200_000,
        max_daily_agent: 1_000_000,
        max_daily_sim: 3_000_000,
      }),
    );
    await admin
      .getByRole("table", { name: "Limites de la flotte" })
      .getByRole("cell", { name: "withdrawal" })
      .waitFor();
    await axeScan(admin, "limits and breaker");
  });
});

describe("the audit log page", () => {
  it("shows a SIM frozen through the board with who froze it, filtered by action", async () => {
    const msisdn = world.bob.sim.msisdn;
    await admin.evaluate(() => (location.hash = "#/sims"));
    const row = admin.getByRole("row").filter({ has: admin.getByRole("rowheader", { name: msisdn, exact: true }) });
    await row.getByRole("button", { name: `Geler ${msisdn}` }).click();
    await row.getByRole("button", { name: `Dégeler ${msisdn}` }).click();
    await row.getByRole("cell", { name: "active" }).waitFor();

    await admin.evaluate(() => (location.hash = "#/audit"));
    await admin.getByRole("heading", { level: 2, name: "Journal d'audit" }).waitFor();
    await admin.getByLabel(/^Action/).fill("sim.freeze");
    await admin.getByRole("button", { name: "Filtrer" }).click();
    const entry = admin.getByRole("row").filter({ has: admin.getByRole("cell", { name: world.bob.sim.simId }) });
    await entry.first().getByRole("cell", { name: "sim.freeze" }).waitFor();
    // The same entry through the API: the admin froze it.
    const api = (await get(`/v1/audit?action=sim.freeze&target=${world.bob.sim.simId}`)) as any[];
    expect(api[0]).toMatchObject({
      action: "sim.freeze",
      target_id: world.bob.sim.simId,
      actor_agent_id: (await get("/v1/agents/me")).agent_id,
    });
    expect(await admin.getByRole("cell", { name: "sim.unfreeze" }).count()).toBe(0);
    await axeScan(admin, "audit log");
  });
});

describe("the audit log page's paging", () => {
  it("pages back fifty entries at a time and returns to the newest, as the API pages them", async () => {
    // 60 limits recorded, each with its own maximum: each entry's details are its own.
    for (let i = 1; i <= 60; i++) {
      const r = await world.api.patch("/v1/admin/limits", {
        token: world.adminToken,
        body: {
          operator: null,
          op_type: "deposit",
          max_amount: 100_000 + i,
          max_daily_agent: 900_000,
          max_daily_sim: 990_000,
        },
      });
      expect(r.status).toBe(200);
    }
    const first = (await get("/v1/audit?action=limits.record&limit=50&days=30")) as any[];
    const second = (await get(
      `/v1/audit?action=limits.record&limit=50&days=30&before=${first.at(-1).entry_id}`,
    )) as any[];
    expect(first).toHaveLength(50);
    expect(second.length).toBeGreaterThanOrEqual(10);
    const details = (entries: any[]) => entries.map((e) => JSON.stringify(e.details));
    const shown = () => admin.getByRole("table", { name: "Journal d'audit" }).locator("tbody tr td:nth-child(5)");

    await admin.getByLabel(/^Action/).fill("limits.record");
    await admin.getByRole("button", { name: "Filtrer" }).click();
    await expect.poll(() => shown().allTextContents()).toEqual(details(first));
    expect(await admin.getByRole("button", { name: "Entrées les plus récentes" }).count()).toBe(0);
    await admin.getByRole("button", { name: "Entrées plus anciennes" }).click();
    await expect.poll(() => shown().allTextContents()).toEqual(details(second));
    // The last page is shorter than fifty: there is nothing older to ask for.
    expect(await admin.getByRole("button", { name: "Entrées plus anciennes" }).count()).toBe(0);
    await admin.getByRole("button", { name: "Entrées les plus récentes" }).click();
    await expect.poll(() => shown().allTextContents()).toEqual(details(first));
  });
});

describe("the wording rules page", () => {
  const TEMPLATE = "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.";
  const TEXT =
    "Operation KX7 terminee: 6421 FCFA credites au client 690888999. Code CI261126.0200.B06421. Reste 493579 FCFA.";
  let orphanId: string;
  let rule: any;
  let version = 1;
  const name = () => `DEP v${version} (operator_b, ${rule.rule_id.slice(0, 8)})`;
  const rules = async () => (await get("/v1/admin/wording-rules")).rules as any[];

  it("drafts a rule (an unsafe template refused with its reason), tries it, and shows the API's trial", async () => {
    // An operator text in a wording no rule reads: an orphan of no kind on Alice's SIM.
    const sent = await world.api.post("/v1/device/messages", {
      token: world.alice.device.token,
      body: {
        sim_id: world.alice.sim.simId,
        messages: [{ sender: "OrangeMoney", raw: TEXT, received_at: new Date().toISOString() }],
      },
    });
    expect([sent.body.results[0].outcome, sent.body.results[0].kind]).toEqual(["orphan", null]);
    orphanId = sent.body.results[0].message_id;

    await admin.getByRole("link", { name: "Règles de libellé" }).click();
    await admin.getByRole("heading", { level: 2, name: "Règles de libellé des lecteurs de SMS" }).waitFor();
    const form = admin.getByRole("form", { name: "Rédiger une règle" });
    await form.getByLabel("Modèle").fill("{amount} {ref}");
    await form.getByRole("button", { name: "Ajouter le brouillon" }).click();
    await admin.getByText("Le modèle doit contenir un mot de trois lettres hors des cases.").waitFor();
    await admin.getByText(/\(no_literal_text\)$/).waitFor();
    expect(await rules()).toEqual([]);

    await form.getByLabel("Modèle").fill(TEMPLATE);
    await form.getByRole("button", { name: "Ajouter le brouillon" }).click();
    await admin.getByText(/^Brouillon DEP v1 \(operator_b, .*\) ajouté/).waitFor();
    [rule] = await rules();
    expect(rule).toMatchObject({
      operator: "operator_b",
      kind: "DEP",
      direction: "out",
      template: TEMPLATE,
      state: "draft",
    });
    await admin.getByRole("row").filter({ hasText: TEMPLATE }).getByText("brouillon").waitFor();

    await admin.getByRole("button", { name: `Essayer ${name()}` }).click();
    const trialRegion = admin.getByRole("region", { name: /^Essai de DEP v1/ });
    await trialRegion.waitFor();
    // The trial changes nothing: the same call through the API answers the same counts.
    const trial = (await world.api.post(`/v1/admin/wording-rules/${rule.version_id}/try`, { token: world.adminToken }))
      .body;
    expect(trial.reads).toBeGreaterThanOrEqual(1);
    expect(trial.sample).toContainEqual(
      expect.objectContaining({
        message_id: orphanId,
        outcome: "orphan",
        kind: "DEP",
        amount: 6421,
        counterparty_msisdn: "690888999",
      }),
    );
    const fact = (label: string) => trialRegion.locator(`dt:text-is("${label}") + dd`).textContent();
    expect(await fact("Messages examinés")).toBe(String(trial.scanned));
    expect(await fact("Elle lirait autrement")).toBe(String(trial.reads));
    expect(await fact("dont lus aujourd'hui par une autre règle")).toBe(String(trial.read_otherwise));
    expect(await fact("dont argent reçu qu'elle lirait comme preuve (refusé)")).toBe(String(trial.money_received));
    expect(await fact("dont orphelins")).toBe(String(trial.orphans));
    expect(await fact("dont enregistrés")).toBe(String(trial.stored));
    expect(await fact("dont non corrélés")).toBe(String(trial.not_correlated));
    const byKind = trialRegion.getByRole("table", { name: "Lus, par genre" });
    for (const [kind, n] of Object.entries(trial.by_kind))
      await byKind
        .getByRole("row")
        .filter({ has: admin.getByRole("rowheader", { name: kind, exact: true }) })
        .getByRole("cell", { name: String(n), exact: true })
        .waitFor();
    expect(await byKind.locator("tbody tr").count()).toBe(Object.keys(trial.by_kind).length);
    const sample = trialRegion.getByRole("table", { name: /^Les messages qu'elle lirait autrement/ });
    expect(await sample.locator("tbody tr").count()).toBe(trial.sample.length);
    const read = sample.getByRole("row").filter({ hasText: TEXT });
    await read.getByRole("cell", { name: "690888999", exact: true }).waitFor();
    await read.getByRole("cell", { name: "DEP out", exact: true }).waitFor();
    await axeScan(admin, "wording rules with a trial");
  });

  it("leaves a DEP rule to another admin, activates one another admin drafted after saying it re-reads the unmatched texts, and the orphan is read with it", async () => {
    // A rule that can confirm is activated by another admin than its author: no button for the author.
    const row = admin.getByRole("row").filter({ hasText: TEMPLATE });
    await row.getByText("Un autre administrateur active cette règle : elle peut confirmer des opérations").waitFor();
    expect(await admin.getByRole("button", { name: `Activer ${name()}` }).count()).toBe(0);
    const own = await world.api.post(`/v1/admin/wording-rules/${rule.version_id}/activate`, {
      token: world.adminToken,
    });
    expect([own.status, own.body.context.reason]).toEqual([403, "wording_rule_needs_second_admin"]);
    // A second admin drafts version 2 of the same rule; the board's admin approves it.
    const second = await world.api.createAgent(world.adminToken, { login: "wr-second-admin", role: "admin" });
    const v2 = await world.api.post("/v1/admin/wording-rules", {
      token: second.token,
      body: {
        rule_id: rule.rule_id,
        operator: "operator_b",
        kind: "DEP",
        language: "fr",
        direction: "out",
        template: TEMPLATE,
      },
    });
    expect(v2.status).toBe(201);
    rule = v2.body;
    version = 2;
    await admin.reload();
    await admin.getByRole("heading", { level: 2, name: "Règles de libellé des lecteurs de SMS" }).waitFor();
    await admin.getByRole("button", { name: `Activer ${name()}` }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(/orphelins et textes inconnus de operator_b seront relus en arrière-plan/).waitFor();
    await axeScan(admin, "the activate dialog");
    await dialog.getByRole("button", { name: "Activer et relire" }).click();
    await admin
      .getByText(
        `${name()} est active : les nouveaux textes sont lus avec elle, et les non rattachés sont en relecture.`,
      )
      .waitFor();
    expect((await rules())[0]).toMatchObject({ version_id: rule.version_id, state: "active" });
    // The re-read runs in the background: the orphan gets the fields the rule reads.
    await expect
      .poll(
        async () => {
          const unmatched = (await get("/v1/evidences?unmatched=true")) as any[];
          const m = unmatched.find((e) => e.id === orphanId);
          return m && [m.kind, m.amount, m.counterparty_msisdn, m.outcome];
        },
        { timeout: 20_000 },
      )
      .toEqual(["DEP", 6421, "690888999", "orphan"]);
  });

  it("retires it after saying what that stops", async () => {
    await admin.getByRole("button", { name: `Retirer ${name()}` }).click();
    const dialog = admin.getByRole("dialog");
    await dialog.getByText(`${name()} ne lira plus aucun nouveau texte. Ce qu'elle a lu reste lu.`).waitFor();
    await dialog.getByRole("button", { name: "Retirer la version" }).click();
    await admin.getByText(`${name()} est retirée : elle ne lit plus aucun nouveau texte.`).waitFor();
    expect((await rules())[0]).toMatchObject({ version_id: rule.version_id, state: "retired" });
    await admin.getByRole("row").filter({ hasText: TEMPLATE }).getByText("retirée").waitFor();
    await axeScan(admin, "wording rules");
  });
});
