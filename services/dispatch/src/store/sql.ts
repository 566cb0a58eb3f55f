// Small helpers for the explicit SQL of the dispatch store. The driver returns bigint
// as text and timestamptz as text; rows are converted once, where they are read.

/** A timestamptz as the driver returns it (text such as `2026-11-22 11:17:37.362807+00`), or a Date. */
export function toDate(value: unknown): Date | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Date) return value;
  const text = String(value);
  const iso = text.includes("T") ? text : text.replace(" ", "T");
  const withOffset = /[+-]\d{2}$/.test(iso) ? `${iso}:00` : iso;
  const date = new Date(withOffset);
  if (Number.isNaN(date.getTime())) throw new Error(`unreadable timestamp from the database: ${text}`);
  return date;
}

export function toNumber(value: unknown): number | null {
  if (value === null || value === undefined) return null;
  return typeof value === "number" ? value : Number(value);
}

/** Whether a driver error is a unique-constraint violation, optionally of one constraint. */
export function isUniqueViolation(err: unknown, constraint?: string): boolean {
  const e = err as { code?: string; constraint?: string; cause?: { code?: string; constraint?: string } };
  const code = e?.code ?? e?.cause?.code;
  const name = e?.constraint ?? e?.cause?.constraint;
  return code === "23505" && (constraint === undefined || name === constraint);
}

/** Escapes LIKE wildcards in a user's search text. */
export function likeEscape(text: string): string {
  return text.replace(/[\\%_]/g, (c) => `\\${c}`);
}
