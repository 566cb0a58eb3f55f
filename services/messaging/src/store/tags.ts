import { randomUUID } from "node:crypto";
import { one, rows, type EntityManager } from "@transferops/kit";
import { pgArray } from "./arrays.ts";

export interface TagRow {
  tag_id: string;
  name: string;
}

const S = "messaging";

/** The catalogue's tags of these names, creating those not yet known (case-insensitive). */
export async function ensureTags(em: EntityManager, names: string[]): Promise<TagRow[]> {
  // The first spelling of a name wins, as in the catalogue.
  const byKey = new Map<string, string>();
  for (const n of names) if (!byKey.has(n.toLowerCase())) byKey.set(n.toLowerCase(), n);
  const unique = [...byKey.values()];
  if (!unique.length) return [];
  await em.execute(
    `insert into ${S}.tags (tag_id, name) select * from unnest(?::uuid[], ?::text[]) on conflict do nothing`,
    [pgArray(unique.map(() => randomUUID())), pgArray(unique)],
  );
  return rows<TagRow>(em, `select tag_id, name from ${S}.tags where lower(name) = any(?::text[])`, [
    pgArray(unique.map((n) => n.toLowerCase())),
  ]);
}

export async function findTag(em: EntityManager, tagId: string): Promise<TagRow | undefined> {
  return one<TagRow>(em, `select tag_id, name from ${S}.tags where tag_id = ?`, [tagId]);
}
