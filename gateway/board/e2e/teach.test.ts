import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { startTestSystem, type TestSystem } from "../../../test/support/system.ts";
import { axeScan } from "./axe.ts";
import { buildBoardOnce, launchChromium, signIn } from "./browser.ts";
import { ADMIN_LOGIN, ADMIN_PASSWORD, createOperation, RECIPIENTS, seedWorld, type BoardWorld } from "./world.ts";

// Teaching a new wording through the board, in a real browser against the whole system: a
// wording no rule reads arrives on Alice's SIM while her operation waits; the admin finds its
// group, proposes a rule from it (slots highlighted), chooses the kind and the direction,
// tries it and adds the draft; a second admin activates it on the wording rules page; the
// waiting operation is confirmed by the text already stored. Prints the time to teach: the
// person's actions and the seconds from the first text to the operation confirmed.

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

/** A wording of the operator no rule reads (written for this test, in Orange's family). */
const newWording = (amount: number, msisdn: string, ref: string, balance: number) =>
  `Operation QZ4 terminee: ${amount} FCFA credites au ${msisdn}. Code ${ref}. Solde ${balance} FCFA.`;

describe("teaching a new wording through the board", () => {
  it("groups it, proposes a rule with its slots highlighted, and once a second admin activates it the waiting operation is confirmed", async () => {
    const [msisdn] = RECIPIENTS[0]!;
    const amount = 15_137;
    const operationId = await createOperation(world, world.alice, RECIPIENTS[0]!, amount);
    const second = await world.api.createAgent(world.adminToken, { login: "teach-approver", role: "admin" });
    const admin = await signedIn(ADMIN_LOGIN, ADMIN_PASSWORD);

    // The new wording arrives: the operation's text and another one, neither read by any rule.
    const startedAt = Date.now();
    const texts = [
      newWording(9_990, "690004321", "CI261128.0901.B09990", 490_010),
      newWording(amount, msisdn, "CI261128.0902.B15137", 500_000 - amount),
    ];
    const ids: string[] = [];
    for (const raw of texts) {
      const sent = await world.api.post("/v1/device/messages", {
        token: world.alice.device.token,
        body: {
          sim_id: world.alice.sim.simId,
          messages: [{ sender: "OrangeMoney", raw, received_at: new Date().toISOString() }],
        },
      });
      expect([sent.body.results[0].outcome, sent.body.results[0].kind]).toEqual(["orphan", null]);
      ids.push(sent.body.results[0].message_id);
    }

    let actions = 0;
    const act = async (step: () => Promise<unknown>) => {
      actions += 1;
      await step();
    };
    await act(() => admin.getByRole("link", { name: "Apprendre les libellés" }).click());
    await admin.getByRole("heading", { level: 2, name: "Textes qu'aucune règle ne lit" }).waitFor();
    const row = admin.getByRole("row").filter({ hasText: texts[1]! });
    await row.getByRole("cell", { name: "lu par aucune règle", exact: true }).waitFor();
    // The group: two texts, one SIM, the operation waiting and its amount.
    await row.getByText("(1 SIM)").waitFor();
    expect(await row.locator("td.num").allTextContents()).toEqual([
      "2 (1 SIM)",
      "1",
      expect.stringMatching(/^15\s?137/),
    ]);
    await axeScan(admin, "unknown wordings");

    await act(() => row.getByRole("button", { name: `Proposer une règle ${ids[1]}` }).click());
    const form = admin.getByRole("form", { name: "Règle proposée" });
    await form.waitFor();
    const marks = form.locator("mark");
    expect(await marks.evaluateAll((ms) => ms.map((m) => [m.getAttribute("data-slot"), m.textContent]))).toEqual([
      ["amount", `${amount} FCFA`],
      ["phone", msisdn],
      ["ref", "CI261128.0902.B15137"],
      ["balance", `${500_000 - amount} FCFA`],
    ]);
    expect(await form.getByLabel("Modèle").inputValue()).toBe(
      "Operation QZ4 terminee: {amount} credites au {phone}. Code {ref}. Solde {balance}.",
    );
    // A DEP going out: chosen, then tried.
    await act(() => form.getByLabel("Genre").selectOption("DEP"));
    await act(() => form.getByLabel("Sens").selectOption("out"));
    await act(() => form.getByRole("button", { name: "Essayer" }).click());
    await admin.getByText("Règle proposée : elle lit 2 texte(s) stocké(s) autrement qu'aujourd'hui.").waitFor();
    const tried = admin.getByRole("form", { name: "Règle proposée" });
    await tried.getByRole("table").getByRole("row").filter({ hasText: texts[1]! }).getByText("DEP out").waitFor();
    await axeScan(admin, "a proposed rule");
    await act(() => tried.getByRole("button", { name: "Ajouter le brouillon" }).click());
    await admin.getByText("Brouillon DEP ajouté.").waitFor();
    await tried.getByText("Un autre administrateur active cette règle : elle peut confirmer des opérations").waitFor();
    const [draft] = (await world.api.get("/v1/admin/wording-rules", { token: world.adminToken })).body.rules;
    expect(draft).toMatchObject({ kind: "DEP", direction: "out", state: "draft" });

    // The second admin activates it.
    const approver = await signedIn("teach-approver", second.password, "#/wording");
    const name = `DEP v1 (operator_b, ${draft.rule_id.slice(0, 8)})`;
    await act(() => approver.getByRole("button", { name: `Activer ${name}` }).click());
    await act(() => approver.getByRole("dialog").getByRole("button", { name: "Activer et relire" }).click());
    await expect
      .poll(
        async () => (await world.api.get(`/v1/operations/${operationId}`, { token: world.adminToken })).body.status,
        { timeout: 60_000, interval: 250 },
      )
      .toBe("confirmed");
    const seconds = (Date.now() - startedAt) / 1000;
    const op = (await world.api.get(`/v1/operations/${operationId}`, { token: world.adminToken })).body;
    expect(op.evidence).toMatchObject({ amount, kind: "DEP", raw_text: texts[1] });
    console.log(
      `time to teach: ${actions} actions, ${seconds.toFixed(1)} s from the first text to the operation confirmed`,
    );
    expect(actions).toBeLessThanOrEqual(10);
    expect(seconds).toBeLessThan(120);
    // Read now, the wording's texts are no longer listed.
    await admin.reload();
    await admin.getByRole("heading", { level: 2, name: "Textes qu'aucune règle ne lit" }).waitFor();
    expect(await admin.getByRole("row").filter({ hasText: texts[1]! }).count()).toBe(0);
  });

  it("links the wording-change alert to its wording: the rule proposed from the alert's text opens", async () => {
    // Five texts of another new wording in an hour on a SIM whose texts were read: the evidence
    // service raises evidence_wording_changed with the text that tipped it.
    const wording = (n: number) =>
      `Operation ZR7 validee: ${7_000 + n} FCFA vers 69000${4400 + n}. Code CI261129.1${n}. Solde ${300_000 - n} FCFA.`;
    for (let n = 1; n <= 5; n++) {
      const sent = await world.api.post("/v1/device/messages", {
        token: world.alice.device.token,
        body: {
          sim_id: world.alice.sim.simId,
          messages: [{ sender: "OrangeMoney", raw: wording(n), received_at: new Date().toISOString() }],
        },
      });
      expect(sent.body.results[0].kind ?? null).toBe(null);
    }
    const admin = await signedIn(ADMIN_LOGIN, ADMIN_PASSWORD, "#/alerts");
    const row = admin.getByRole("row").filter({ hasText: "La formulation de l'opérateur a changé" });
    await expect
      .poll(
        async () => {
          await admin.getByRole("button", { name: "Actualiser" }).first().click();
          return row.count();
        },
        { timeout: 30_000 },
      )
      .toBeGreaterThan(0);
    await row.first().getByRole("link", { name: "Apprendre ce libellé" }).click();
    await admin.getByRole("heading", { level: 2, name: "Textes qu'aucune règle ne lit" }).waitFor();
    const form = admin.getByRole("form", { name: "Règle proposée" });
    await expect
      .poll(() => form.getByLabel("Modèle").inputValue(), { timeout: 20_000 })
      .toMatch(/^Operation ZR7 validee: \{amount\}/);
  });
});
