import { rows, type EntityManager } from "@transferops/kit";
import type { Known } from "../domain/import-plan.ts";
import { pgArray } from "./arrays.ts";

const S = "messaging";

/**
 * Plans the rest of this transaction's statements for their parameters every time
 * (`plan_cache_mode`, this transaction only). The kit prepares each statement once per
 * connection, and after five executions PostgreSQL may keep a generic plan chosen for the
 * table as it was then: an import starting on an empty contacts table kept the plan of an
 * empty table (read every live contact to find a batch's phones, so a row cost grew with the
 * table: 7,008 -> 1,692 rows/s at 20,000 rows, 341 rows/s at 100,000). Autovacuum's analyse
 * would replace it, when it runs; a batch's few statements cost about a millisecond to plan
 * for its 1,000 rows.
 */
export async function planForTheseRows(em: EntityManager): Promise<void> {
  await em.execute(`set local plan_cache_mode = force_custom_plan`);
}

/** Live contacts holding any of these phones or e-mails, with their tag names. */
export async function findKnown(em: EntityManager, phones: string[], emails: string[]): Promise<Known[]> {
  if (!phones.length && !emails.length) return [];
  const found = await rows<Omit<Known, "isNew">>(
    em,
    `select c.customer_id, c.first_name, c.last_name, c.phone, c.email, c.language, c.custom_fields, c.lifecycle,
            coalesce((select array_agg(t.name order by lower(t.name)) from ${S}.tags t where t.tag_id = any(c.tag_ids)),
              '{}') as tag_names
       from ${S}.contacts c
      where c.deleted_at is null and (c.phone = any(?::text[]) or c.email = any(?::text[]))
      for update of c`,
    [pgArray(phones), pgArray(emails)],
  );
  return found.map((k) => ({ ...k, isNew: false }));
}

const RECORD = `x(customer_id uuid, first_name text, last_name text, phone text, email text, language text,
  custom_fields jsonb, tag_names text[], lifecycle text)`;

const recordsJson = (contacts: Known[]) =>
  JSON.stringify(
    contacts.map((c) => ({
      customer_id: c.customer_id,
      first_name: c.first_name,
      last_name: c.last_name,
      phone: c.phone,
      email: c.email,
      language: c.language,
      custom_fields: c.custom_fields,
      tag_names: c.tag_names,
      lifecycle: c.lifecycle,
    })),
  );

/** Tag ids of names (the catalogue's, created by the caller first). */
const TAG_IDS = `coalesce((select array_agg(t.tag_id) from ${S}.tags t
  where lower(t.name) in (select lower(n) from unnest(x.tag_names) n)), '{}')`;

export async function insertContacts(em: EntityManager, contacts: Known[]): Promise<void> {
  if (!contacts.length) return;
  await em.execute(
    `insert into ${S}.contacts (customer_id, first_name, last_name, phone, email, language, custom_fields, tag_ids,
       lifecycle)
     select x.customer_id, x.first_name, x.last_name, x.phone, x.email, x.language, x.custom_fields, ${TAG_IDS},
            x.lifecycle
       from jsonb_to_recordset(?::jsonb) as ${RECORD}`,
    [recordsJson(contacts)],
  );
}

export async function updateContacts(em: EntityManager, contacts: Known[]): Promise<void> {
  if (!contacts.length) return;
  await em.execute(
    `update ${S}.contacts c set first_name = x.first_name, last_name = x.last_name, phone = x.phone, email = x.email,
       language = x.language, custom_fields = x.custom_fields, tag_ids = ${TAG_IDS}, lifecycle = x.lifecycle,
       updated_at = now()
      from jsonb_to_recordset(?::jsonb) as ${RECORD}
     where c.customer_id = x.customer_id`,
    [recordsJson(contacts)],
  );
}
