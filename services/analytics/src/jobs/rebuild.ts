import { openDatabase, type KafkaBus } from "@transferops/kit";
import { CONSUMERS } from "../events/index.ts";
import { migrations } from "../store/migrations/index.ts";
import { dropReadModel } from "../store/schema.ts";

/**
 * Empties analytics' read model and rewinds its consumer groups to the beginning of the
 * topics, so the next start of analytics replays every event into the empty schema.
 * Analytics must be stopped: Kafka refuses to rewind a group with running members, and
 * that refusal comes first, before anything is dropped.
 */
export async function rebuildReadModel(databaseUrl: string, bus: KafkaBus): Promise<void> {
  for (const c of CONSUMERS) await bus.rewind(c.group, c.topics);
  const db = await openDatabase({ url: databaseUrl, schema: "analytics", migrations });
  try {
    await dropReadModel(db.em());
  } finally {
    await db.close();
  }
  await (await openDatabase({ url: databaseUrl, schema: "analytics", migrations })).close();
}
