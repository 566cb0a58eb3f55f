import { randomBytes } from "node:crypto";
import { LOCAL_WEBHOOKS } from "../../../../test/support/constants.ts";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openDatabase, type Database } from "@transferops/kit";
import { startTestSystem, type TestSystem } from "../../../../test/support/system.ts";
import { createSim } from "../../../../test/support/fleet-fixtures.ts";
import { open, parseKeyring, pinAad, webhookSecretAad } from "../domain/pin-crypto.ts";
import { migrations } from "../store/migrations/index.ts";
import { reencryptSecrets } from "./reencrypt.ts";

// Rotating the PIN key: stored PINs and webhook secrets sealed under the old key are re-sealed
// under the new first key, readable without the old key afterwards, and a second run changes
// nothing.

const OLD = `old:${randomBytes(32).toString("base64")}`;
const NEW = `new:${randomBytes(32).toString("base64")}`;
const PIN = "61830427";
const SECRET = "webhook-secret-0123456789abcdef";

let sys: TestSystem;
let db: Database;
let admin: { token: string };
let simId: string;
let webhookId: string;

beforeAll(async () => {
  // The webhook targets this machine: http and loopback allowed explicitly, as an operator would.
  sys = await startTestSystem({ PIN_ENCRYPTION_KEYS: OLD, ...LOCAL_WEBHOOKS });
  admin = await sys.api.bootstrapAdmin();
  simId = (await createSim(sys.api, admin.token, { pin: PIN })).simId;
  await createSim(sys.api, admin.token);
  const hook = await sys.api.post("/v1/admin/webhooks", {
    token: admin.token,
    body: { url: "http://127.0.0.1:9/hook", secret: SECRET },
  });
  expect(hook.status).toBe(201);
  webhookId = hook.body.webhook_id;
  db = await openDatabase({ url: sys.db.url, schema: "fleet", migrations });
});
afterAll(async () => {
  await db?.close();
  await sys?.stop();
});

describe("re-encryption of stored secrets under a new PIN key", () => {
  it("re-seals every PIN and webhook secret under the new key; the old key is no longer needed", async () => {
    const before = await sys.db.query("select pin_key_id from fleet.sims");
    expect(before.map((r) => r.pin_key_id)).toEqual(["old", "old"]);

    const result = await reencryptSecrets(db, parseKeyring(`${NEW},${OLD}`));
    expect(result).toEqual({ sim_pins: 2, webhook_secrets: 1, current_key_id: "new" });

    const onlyNew = parseKeyring(NEW);
    const [sim] = await sys.db.query("select pin_key_id, pin_ciphertext from fleet.sims where id = $1", [simId]);
    expect(sim.pin_key_id).toBe("new");
    expect(open(onlyNew, { keyId: sim.pin_key_id, ciphertext: sim.pin_ciphertext }, pinAad(simId))).toBe(PIN);
    const [hook] = await sys.db.query("select secret_key_id, secret_ciphertext from fleet.webhooks where id = $1", [
      webhookId,
    ]);
    expect(
      open(onlyNew, { keyId: hook.secret_key_id, ciphertext: hook.secret_ciphertext }, webhookSecretAad(webhookId)),
    ).toBe(SECRET);
  });

  it("a second run finds nothing left under the old key", async () => {
    expect(await reencryptSecrets(db, parseKeyring(`${NEW},${OLD}`))).toEqual({
      sim_pins: 0,
      webhook_secrets: 0,
      current_key_id: "new",
    });
  });

  it("refuses, changing nothing, when a stored value's key is not configured", async () => {
    const other = `other:${randomBytes(32).toString("base64")}`;
    await expect(reencryptSecrets(db, parseKeyring(other))).rejects.toThrow(/no configured key has id new/);
    const rows = await sys.db.query("select distinct pin_key_id from fleet.sims");
    expect(rows).toEqual([{ pin_key_id: "new" }]);
  });
});
