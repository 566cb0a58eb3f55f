import { randomUUID } from "node:crypto";
import { one, rows, type EntityManager } from "@transferops/kit";
import type { Column } from "../domain/mapping.ts";
import type { RowError } from "../domain/mapping.ts";

export interface ImportRow {
  import_id: string;
  seq: string;
  state: "queued" | "running" | "completed" | "failed";
  file_name: string | null;
  charset_requested: string;
  delimiter_requested: string;
  charset: string | null;
  delimiter: string | null;
  mapping_id: string | null;
  template: string | null;
  columns: Column[];
  duplicate_policy: "skip" | "update" | "create";
  rows_total: number;
  processed: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
  failure_reason: string | null;
  failure_detail: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

const S = "messaging";
export const IMPORT_COLUMNS = `import_id, seq, state, file_name, charset_requested, delimiter_requested, charset,
  delimiter, mapping_id, template, columns, duplicate_policy, rows_total, processed, created, updated, skipped,
  failed, failure_reason, failure_detail, created_at, started_at, finished_at`;

export interface NewImport {
  file_name: string | null;
  content: Uint8Array;
  charset: string;
  delimiter: string;
  mapping_id: string | null;
  template: string | null;
  columns: Column[];
  duplicate_policy: string;
}

export async function insertImport(em: EntityManager, i: NewImport): Promise<ImportRow> {
  return (await one<ImportRow>(
    em,
    `insert into ${S}.imports (import_id, state, file_name, content, charset_requested, delimiter_requested,
       mapping_id, template, columns, duplicate_policy)
     values (?, 'queued', ?, ?, ?, ?, ?, ?, ?, ?) returning ${IMPORT_COLUMNS}`,
    [
      randomUUID(),
      i.file_name,
      Buffer.from(i.content),
      i.charset,
      i.delimiter,
      i.mapping_id,
      i.template,
      JSON.stringify(i.columns),
      i.duplicate_policy,
    ],
  ))!;
}

export async function findImport(em: EntityManager, id: string): Promise<ImportRow | undefined> {
  return one<ImportRow>(em, `select ${IMPORT_COLUMNS} from ${S}.imports where import_id = ?`, [id]);
}

export async function listImports(em: EntityManager, afterSeq: string, limit: number, state: string) {
  return rows<ImportRow>(
    em,
    `select ${IMPORT_COLUMNS} from ${S}.imports where seq > ? and (? = '' or state = ?) order by seq limit ?`,
    [afterSeq, state, state, limit + 1],
  );
}

export async function listImportErrors(em: EntityManager, id: string, afterSeq: string, limit: number) {
  return rows<RowError & { line: number; seq: string }>(
    em,
    `select seq, line, "column", reason, detail from ${S}.import_errors where import_id = ? and seq > ?
      order by seq limit ?`,
    [id, afterSeq, limit + 1],
  );
}

/**
 * Claims the oldest import that is queued, or running under an expired lease (its
 * worker stopped or died): the new worker resumes it from `processed`.
 */
export async function claimImport(
  em: EntityManager,
  leaseS: number,
): Promise<(ImportRow & { content: Buffer }) | undefined> {
  return one(
    em,
    `update ${S}.imports set state = 'running', started_at = coalesce(started_at, now()),
       lease_until = now() + make_interval(secs => ?)
     where import_id = (
       select import_id from ${S}.imports
        where state = 'queued' or (state = 'running' and lease_until < now())
        order by seq limit 1 for update skip locked)
     returning ${IMPORT_COLUMNS}, content`,
    [leaseS],
  );
}

/** Locks the import for a batch if this worker still holds it at `processed`. */
export async function holdImport(em: EntityManager, id: string, processed: number, leaseS: number): Promise<boolean> {
  const r = await rows(
    em,
    `update ${S}.imports set lease_until = now() + make_interval(secs => ?)
      where import_id = ? and state = 'running' and processed = ? returning import_id`,
    [leaseS, id, processed],
  );
  return r.length > 0;
}

/** Records a pass that failed on an unexpected error; returns how many have failed so far. */
export async function countPassFailure(em: EntityManager, id: string): Promise<number> {
  const r = await one<{ pass_failures: number }>(
    em,
    `update ${S}.imports set pass_failures = pass_failures + 1, lease_until = now()
      where import_id = ? and state = 'running' returning pass_failures`,
    [id],
  );
  return r?.pass_failures ?? 0;
}

export async function releaseImport(em: EntityManager, id: string): Promise<void> {
  await em.execute(`update ${S}.imports set lease_until = now() where import_id = ? and state = 'running'`, [id]);
}

export async function setParsed(
  em: EntityManager,
  id: string,
  p: { rows_total: number; charset: string; delimiter: string },
): Promise<void> {
  await em.execute(`update ${S}.imports set rows_total = ?, charset = ?, delimiter = ? where import_id = ?`, [
    p.rows_total,
    p.charset,
    p.delimiter,
    id,
  ]);
}

export interface BatchCounts {
  processed: number;
  created: number;
  updated: number;
  skipped: number;
  failed: number;
}

export async function addProgress(em: EntityManager, id: string, c: BatchCounts): Promise<void> {
  await em.execute(
    `update ${S}.imports set processed = processed + ?, created = created + ?, updated = updated + ?,
       skipped = skipped + ?, failed = failed + ? where import_id = ?`,
    [c.processed, c.created, c.updated, c.skipped, c.failed, id],
  );
}

// Texts of row errors may quote file content: PostgreSQL text and jsonb refuse NUL, and a
// detail is for people, so control characters are dropped and the length capped.
const printable = (s: string, max: number) => s.replace(/[\u0000-\u001f\u007f]/g, " ").slice(0, max);

export async function insertRowErrors(
  em: EntityManager,
  id: string,
  errors: (RowError & { line: number })[],
): Promise<void> {
  if (!errors.length) return;
  await em.execute(
    `insert into ${S}.import_errors (import_id, line, "column", reason, detail)
     select ?, x.line, x.col, x.reason, x.detail
       from jsonb_to_recordset(?::jsonb) as x(ord int, line int, col text, reason text, detail text) order by x.ord`,
    [
      id,
      JSON.stringify(
        errors.map((e, ord) => ({
          ord,
          line: e.line,
          col: printable(e.column, 200),
          reason: e.reason,
          detail: printable(e.detail, 500),
        })),
      ),
    ],
  );
}

export async function finishImport(
  em: EntityManager,
  id: string,
  outcome: { state: "completed" } | { state: "failed"; reason: string; detail: string },
): Promise<ImportRow> {
  return (await one<ImportRow>(
    em,
    `update ${S}.imports set state = ?, failure_reason = ?, failure_detail = ?, finished_at = now(), lease_until = null
      where import_id = ? returning ${IMPORT_COLUMNS}`,
    [
      outcome.state,
      outcome.state === "failed" ? outcome.reason : null,
      outcome.state === "failed" ? outcome.detail : null,
      id,
    ],
  ))!;
}
