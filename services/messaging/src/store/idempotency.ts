import { one, type EntityManager } from "@transferops/kit";

export interface KeyRow {
  request_hash: string;
  operation: string;
  response: Buffer | null;
  error: { status: string; detail: string; reason?: string; context?: Record<string, unknown> } | null;
}

const S = "messaging";

/**
 * Claims `key` for this request inside the caller's transaction, or returns the row
 * of the request that claimed it first. The unique insert waits for a concurrent
 * claimer's transaction: if that one commits, this one finds its stored response; if it
 * rolls back, this one claims the key. Keys older than the retention are forgotten.
 */
export async function claimKey(
  em: EntityManager,
  key: string,
  operation: string,
  hash: string,
  retentionH: number,
): Promise<KeyRow | undefined> {
  await em.execute(
    `delete from ${S}.idempotency_keys where key = ? and created_at < now() - make_interval(hours => ?)`,
    [key, retentionH],
  );
  const claimed = await em.execute(
    `insert into ${S}.idempotency_keys (key, request_hash, operation) values (?, ?, ?)
     on conflict do nothing returning key`,
    [key, hash, operation],
  );
  if ((claimed as unknown[]).length) return undefined;
  return one<KeyRow>(
    em,
    `select request_hash, operation, response, error from ${S}.idempotency_keys where key = ? for update`,
    [key],
  );
}

export async function storeOutcome(
  em: EntityManager,
  key: string,
  outcome: { response: Uint8Array } | { error: NonNullable<KeyRow["error"]> },
): Promise<void> {
  await em.execute(`update ${S}.idempotency_keys set response = ?, error = ? where key = ?`, [
    "response" in outcome ? Buffer.from(outcome.response) : null,
    "error" in outcome ? JSON.stringify(outcome.error) : null,
    key,
  ]);
}

/** Forgets keys past the retention; returns how many. */
export async function purgeKeys(em: EntityManager, retentionH: number): Promise<number> {
  const r = await em.execute(
    `delete from ${S}.idempotency_keys where created_at < now() - make_interval(hours => ?) returning key`,
    [retentionH],
  );
  return (r as unknown[]).length;
}
