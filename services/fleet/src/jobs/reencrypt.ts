import type { Database, EntityManager } from "@transferops/kit";
import { open, pinAad, seal, webhookSecretAad, type Keyring } from "../domain/pin-crypto.ts";
import { lockSealedUnder, SEALED_TABLES, writeSealed, type SealedTable } from "../store/sealed.ts";

/** The associated data each kind of sealed secret is bound to. */
const AAD: Record<SealedTable["what"], (id: string) => string> = {
  sim_pins: pinAad,
  webhook_secrets: webhookSecretAad,
};

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
): Promise<Record<SealedTable["what"], number> & { current_key_id: string }> {
  const counts = { sim_pins: 0, webhook_secrets: 0 };
  for (const s of SEALED_TABLES) {
    for (;;) {
      const done = await db.tx((em) => reencryptBatch(em, keyring, s));
      counts[s.what] += done;
      if (done === 0) break;
    }
  }
  return { ...counts, current_key_id: keyring.currentKeyId };
}

async function reencryptBatch(em: EntityManager, keyring: Keyring, s: SealedTable): Promise<number> {
  const batch = await lockSealedUnder(em, s, keyring.currentKeyId, BATCH);
  for (const r of batch) {
    const plain = open(keyring, { keyId: r.key_id, ciphertext: r.data }, AAD[s.what](r.id));
    await writeSealed(em, s, r.id, seal(keyring, plain, AAD[s.what](r.id)));
  }
  return batch.length;
}
