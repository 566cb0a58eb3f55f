import type { EntityManager } from "@transferops/kit";

/** Drops analytics' whole schema: the read model, the inbox and the migrations' record. */
export async function dropReadModel(em: EntityManager): Promise<void> {
  await em.execute(`drop schema analytics cascade`);
}
