import { one, PLANNED_AT_EACH_CALL, rows, type EntityManager } from "@transferops/kit";
import { CONTACT_COLUMNS, type ContactRow } from "./contacts.ts";

export interface ContactListQuery {
  afterSeq: string;
  limit: number;
  /** E.164 prefix of a phone-like search. */
  phonePrefix?: string;
  /** Lower-cased text searched in names and e-mail. */
  text?: string;
  tag?: string;
  lifecycle?: string;
  blocked?: boolean;
  deleted: "exclude" | "include" | "only";
  updatedSince?: Date;
}

const S = "messaging";

/** Escapes LIKE wildcards in user text. */
const like = (s: string) => s.replace(/[\\%_]/g, (c) => "\\" + c);

/** One page in seq order, plus one row to tell whether more exist. */
export async function listContacts(em: EntityManager, q: ContactListQuery): Promise<ContactRow[]> {
  const where: string[] = ["c.seq > ?"];
  const params: unknown[] = [q.afterSeq];
  const and = (sql: string, ...values: unknown[]) => {
    where.push(sql);
    params.push(...values);
  };
  if (q.deleted === "exclude") and("c.deleted_at is null");
  if (q.deleted === "only") and("c.deleted_at is not null");
  if (q.phonePrefix) and("c.phone like ?", like(q.phonePrefix) + "%");
  if (q.text) and("c.search_text like ?", "%" + like(q.text) + "%");
  if (q.tag) and(`c.tag_ids @> array[(select tag_id from ${S}.tags where lower(name) = lower(?))]`, q.tag);
  if (q.lifecycle) and("c.lifecycle = ?", q.lifecycle);
  if (q.blocked !== undefined) and("c.blocked = ?", q.blocked);
  if (q.updatedSince) and("c.updated_at >= ?", q.updatedSince);
  params.push(q.limit + 1);
  // A phone prefix selects few rows through its index; walking the seq order instead (the
  // planner's choice when phones and seq correlate, as after an import) reads the table.
  // Materialising the prefix's rows first keeps the index and sorts only what matched.
  const source = q.phonePrefix
    ? `(select * from ${S}.contacts c where ${where.join(" and ")} offset 0) c`
    : `${S}.contacts c where ${where.join(" and ")}`;
  // A search is planned for its text at each call (kit PLANNED_AT_EACH_CALL): under a generic
  // plan a LIKE on a parameter uses neither the phone's prefix index nor the trigram index as
  // its value would, and a rare name or a prefix reads every contact (docs/decisions/history.md).
  const planned = q.phonePrefix || q.text ? PLANNED_AT_EACH_CALL : "";
  return rows<ContactRow>(em, `${planned}select ${CONTACT_COLUMNS} from ${source} order by c.seq limit ?`, params);
}

export interface CountsRow {
  total: string;
  blocked: string;
  deleted: string;
}

export async function countContacts(em: EntityManager) {
  const totals = (await one<CountsRow>(
    em,
    `select count(*) filter (where deleted_at is null) as total,
            count(*) filter (where deleted_at is null and blocked) as blocked,
            count(*) filter (where deleted_at is not null) as deleted
       from ${S}.contacts`,
  ))!;
  const byLifecycle = await rows<{ key: string | null; count: string }>(
    em,
    `select lifecycle as key, count(*) as count from ${S}.contacts where deleted_at is null group by lifecycle`,
  );
  const byTag = await rows<{ key: string; count: string }>(
    em,
    `select t.name as key, count(c.customer_id) as count from ${S}.tags t
       left join ${S}.contacts c on c.tag_ids @> array[t.tag_id] and c.deleted_at is null
      group by t.tag_id, t.name order by lower(t.name)`,
  );
  return { totals, byLifecycle, byTag };
}
