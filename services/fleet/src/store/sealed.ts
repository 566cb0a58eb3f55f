import { rows, type EntityManager } from "@transferops/kit";

/** Where one kind of sealed secret is stored: its table and the columns of its key id and ciphertext. */
export interface SealedTable {
  what: "sim_pins" | "webhook_secrets";
  table: string;
  keyColumn: string;
  dataColumn: string;
}

export const SEALED_TABLES: readonly SealedTable[] = [
  { what: "sim_pins", table: "fleet.sims", keyColumn: "pin_key_id", dataColumn: "pin_ciphertext" },
  { what: "webhook_secrets", table: "fleet.webhooks", keyColumn: "secret_key_id", dataColumn: "secret_ciphertext" },
];

export interface SealedRow {
  id: string;
  key_id: string;
  data: Buffer;
}

/** Up to `limit` rows sealed under another key than `currentKeyId`, locked (rows others hold are skipped). */
export async function lockSealedUnder(
  em: EntityManager,
  s: SealedTable,
  currentKeyId: string,
  limit: number,
): Promise<SealedRow[]> {
  return rows<SealedRow>(
    em,
    `select id, ${s.keyColumn} as key_id, ${s.dataColumn} as data from ${s.table}
      where ${s.keyColumn} <> ? order by id limit ? for update skip locked`,
    [currentKeyId, limit],
  );
}

export async function writeSealed(
  em: EntityManager,
  s: SealedTable,
  id: string,
  sealed: { keyId: string; ciphertext: Buffer },
): Promise<void> {
  await em.execute(`update ${s.table} set ${s.keyColumn} = ?, ${s.dataColumn} = ? where id = ?`, [
    sealed.keyId,
    sealed.ciphertext,
    id,
  ]);
}
