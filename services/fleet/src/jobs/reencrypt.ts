import { rows, type Database, type EntityManager } from "@transferops/kit";
import { open, pinAad, seal, webhookSecretAad, type Keyring } from "../domain/pin-crypto.ts";

/** What one kind of sealed secret is: its table, columns and associated data. */
interface SealedColumn {
  what: "sim_pins" | "webhook_secrets";
  table: string;
  keyColumn: string;
  dataColumn: string;
  aad: (id: string) => string;
}

const SEALED: SealedColumn[] = [
  { what: "sim_pins", table: "fleet.sims", keyColumn: "pin_key_id", dataColumn: "pin_ciphertext", aad: pinAad },
  {
    what: "webhook_secrets",
    table: "fleet.webhooks",
    keyColumn: "secret_key_id",
    dataColumn: "secret_ciphertext",
    aad: webhookSecretAad,
  },
];

const BATCH = 200;

/**
 * Re-seals every SIM PIN and webhook secret that is not under the keyring's current key
 * (the first of PIN_ENCRYPTION_KEYS), in batches of locked rows, one transaction each. Run
 * after putting a new key first while the old one is still configured; once it reports
 * nothing left, the old key can be removed. Idempotent; safe while fleet serves (a row a
 * request holds is skipped and taken in the next batch). Never logs or returns a secret.
 */
export async function reencryptSecrets(
  db: Database,
  keyring: Keyring,
): Promise<Record<SealedColumn["what"], number> & { current_key_id: string }> {
  const counts = { sim_pins: 0, webhook_secrets: 0 };
  for (const s of SEALED) {
    for (;;) {
      const done = await db.tx((em) => reencryptBatch(em, keyring, s));
      counts[s.what] += done;
      if (done === 0) break;
    }
  }
  return { ...counts, current_key_id: keyring.currentKeyId };
}

async function reencryptBatch(em: EntityManager, keyring: Keyring, s: SealedColumn): Promise<number> {
  const batch = await rows<{ id: string; key_id: string; data: Buffer }>(
    em,
    `select id, ${s.keyColumn} as key_id, ${s.dataColumn} as data from ${s.table}
      where ${s.keyColumn} <> ? order by id limit ? for update skip locked`,
    [keyring.currentKeyId, BATCH],
  );
  for (const r of batch) {
    const plain = open(keyring, { keyId: r.key_id, ciphertext: r.data }, s.aad(r.id));
    const sealed = seal(keyring, plain, s.aad(r.id));
    await em.execute(`update ${s.table} set ${s.keyColumn} = ?, ${s.dataColumn} = ? where id = ?`, [
      sealed.keyId,
      sealed.ciphertext,
      r.id,
    ]);
  }
  return batch.length;
}
