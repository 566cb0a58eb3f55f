/** PostgreSQL bigint arrives as text; amounts stay far below 2^53. */
export const int = (v: unknown): number => (typeof v === "number" ? v : Number(v));
export const intOrNull = (v: unknown): number | null => (v === null || v === undefined ? null : int(v));

/**
 * The driver expands an array parameter into a list (`in (?)` works, `any(?)` does not).
 * A PostgreSQL array is bound as one JSON text parameter and rebuilt with this fragment.
 */
export const ARRAY_FROM_JSON = `(select coalesce(array_agg(x), '{}') from jsonb_array_elements_text(?::jsonb) as t(x))`;
export const jsonList = (values: readonly string[]) => JSON.stringify(values);

/** timestamptz arrives as text (`2026-11-22 11:30:15.542+00`); the domain works with Dates. */
export function date(v: unknown): Date {
  return v instanceof Date ? v : new Date(v as string);
}
export const dateOrNull = (v: unknown): Date | null => (v === null || v === undefined ? null : date(v));
