import { randomUUID } from "node:crypto";
import { one, rows, type EntityManager } from "@transferops/kit";
import type { Column } from "../domain/mapping.ts";

export interface MappingRow {
  mapping_id: string;
  seq: string;
  name: string;
  columns: Column[];
  created_at: Date;
  updated_at: Date;
}

const S = "messaging";
const COLS = "mapping_id, seq, name, columns, created_at, updated_at";

export async function insertMapping(em: EntityManager, name: string, columns: Column[]): Promise<MappingRow> {
  return (await one<MappingRow>(
    em,
    `insert into ${S}.mappings (mapping_id, name, columns) values (?, ?, ?) returning ${COLS}`,
    [randomUUID(), name, JSON.stringify(columns)],
  ))!;
}

export async function findMapping(em: EntityManager, id: string): Promise<MappingRow | undefined> {
  return one<MappingRow>(em, `select ${COLS} from ${S}.mappings where mapping_id = ? and deleted_at is null`, [id]);
}

export async function updateMapping(
  em: EntityManager,
  id: string,
  change: { name?: string; columns?: Column[] },
): Promise<MappingRow | undefined> {
  return one<MappingRow>(
    em,
    `update ${S}.mappings set name = coalesce(?, name), columns = coalesce(?::jsonb, columns), updated_at = now()
      where mapping_id = ? and deleted_at is null returning ${COLS}`,
    [change.name ?? null, change.columns ? JSON.stringify(change.columns) : null, id],
  );
}

/** Deleted mappings stay for the imports that name them. */
export async function deleteMapping(em: EntityManager, id: string): Promise<boolean> {
  const r = await rows(
    em,
    `update ${S}.mappings set deleted_at = now() where mapping_id = ? and deleted_at is null returning mapping_id`,
    [id],
  );
  return r.length > 0;
}

export async function listMappings(em: EntityManager, afterSeq: string, limit: number): Promise<MappingRow[]> {
  return rows<MappingRow>(
    em,
    `select ${COLS} from ${S}.mappings where deleted_at is null and seq > ? order by seq limit ?`,
    [afterSeq, limit + 1],
  );
}
