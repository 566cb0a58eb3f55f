import { randomUUID } from "node:crypto";
import { one, rows, type EntityManager } from "@transferops/kit";
import type { CleanFields } from "../domain/contact-rules.ts";
import { pgArray } from "./arrays.ts";

export interface ContactRow {
  customer_id: string;
  seq: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  email: string | null;
  language: string | null;
  custom_fields: Record<string, string>;
  tags: { tag_id: string; name: string }[];
  lifecycle: string | null;
  collaborators: string[];
  blocked: boolean;
  deleted_at: Date | null;
  created_at: Date;
  updated_at: Date;
  last_transfer_at: Date | null;
  last_operation_id: string | null;
  transfer_count: number;
}

const S = "messaging";

/** Columns of a contact with its tags resolved from the catalogue. */
export const CONTACT_COLUMNS = `c.customer_id, c.seq, c.first_name, c.last_name, c.phone, c.email, c.language,
  c.custom_fields, c.lifecycle, c.collaborators, c.blocked, c.deleted_at, c.created_at, c.updated_at,
  c.last_transfer_at, c.last_operation_id, c.transfer_count,
  (select coalesce(jsonb_agg(jsonb_build_object('tag_id', t.tag_id, 'name', t.name) order by lower(t.name)), '[]')
     from ${S}.tags t where t.tag_id = any(c.tag_ids)) as tags`;

export async function findContact(em: EntityManager, id: string, lock = false): Promise<ContactRow | undefined> {
  return one<ContactRow>(
    em,
    `select ${CONTACT_COLUMNS} from ${S}.contacts c where c.customer_id = ? ${lock ? "for update of c" : ""}`,
    [id],
  );
}

/** A live contact other than `except` holding this phone or e-mail. */
export async function findLiveHolder(
  em: EntityManager,
  phone: string | null | undefined,
  email: string | null | undefined,
  except?: string,
): Promise<{ customer_id: string; field: "phone" | "email" } | undefined> {
  if (!phone && !email) return undefined;
  return one(
    em,
    `select customer_id, case when phone = ? then 'phone' else 'email' end as field from ${S}.contacts
      where deleted_at is null and (phone = ? or email = ?) and customer_id <> ? limit 1`,
    [phone ?? null, phone ?? null, email ?? null, except ?? "00000000-0000-0000-0000-000000000000"],
  );
}

export interface NewContact extends CleanFields {
  tag_ids: string[];
  lifecycle: string | null;
  collaborators: string[];
  blocked: boolean;
}

/** Inserts a contact; undefined when a live contact holds its phone or e-mail (unique index). */
export async function insertContact(em: EntityManager, c: NewContact): Promise<string | undefined> {
  const id = randomUUID();
  const inserted = await rows<{ customer_id: string }>(
    em,
    `insert into ${S}.contacts (customer_id, first_name, last_name, phone, email, language, custom_fields,
       tag_ids, lifecycle, collaborators, blocked)
     values (?, ?, ?, ?, ?, ?, ?, ?::uuid[], ?, ?::uuid[], ?)
     on conflict do nothing returning customer_id`,
    [
      id,
      c.first_name ?? null,
      c.last_name ?? null,
      c.phone ?? null,
      c.email ?? null,
      c.language ?? null,
      JSON.stringify(c.custom_fields ?? {}),
      pgArray(c.tag_ids),
      c.lifecycle,
      pgArray(c.collaborators),
      c.blocked,
    ],
  );
  return inserted[0]?.customer_id;
}

/** Writes the columns given (already validated) and touches updated_at. */
export async function updateContact(em: EntityManager, id: string, set: Record<string, unknown>): Promise<void> {
  const cols = Object.keys(set);
  const assignments = cols.map((c) => `${c} = ?${CASTS[c] ?? ""}`);
  await em.execute(
    `update ${S}.contacts set ${[...assignments, "updated_at = now()"].join(", ")} where customer_id = ?`,
    [
      ...cols.map((c) =>
        c === "custom_fields" ? JSON.stringify(set[c]) : ARRAYS.has(c) ? pgArray(set[c] as string[]) : set[c],
      ),
      id,
    ] as never[],
  );
}

const CASTS: Record<string, string> = { tag_ids: "::uuid[]", collaborators: "::uuid[]", custom_fields: "::jsonb" };
const ARRAYS = new Set(["tag_ids", "collaborators"]);

/** Records a confirmed operation on a contact; an older or repeated one changes nothing. */
export async function recordTransfer(
  em: EntityManager,
  customerId: string,
  operationId: string,
  confirmedAt: Date,
): Promise<boolean> {
  const r = await rows(
    em,
    `update ${S}.contacts set transfer_count = transfer_count + 1,
       last_transfer_at = greatest(coalesce(last_transfer_at, ?), ?),
       last_operation_id = case when last_transfer_at is null or last_transfer_at <= ? then ? else last_operation_id end,
       updated_at = now()
     where customer_id = ? returning customer_id`,
    [confirmedAt, confirmedAt, confirmedAt, operationId, customerId],
  );
  return r.length > 0;
}
