import { rows, type EntityManager } from "@transferops/kit";

/** When the newest event reached the read model, or null before the first. */
export async function lastEventAt(em: EntityManager): Promise<Date | null> {
  const [last] = await rows<{ at: Date | null }>(em, `select max(received_at) as at from analytics.inbox`);
  return last?.at ?? null;
}
