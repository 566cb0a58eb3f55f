// Arrays go to PostgreSQL as array literals: the query builder would expand a JS array
// binding into a list of values.

/** `{"a","b"}` for text[] / uuid[] parameters, quoting every element. */
export function pgArray(values: readonly (string | null)[]): string {
  return `{${values.map((v) => (v === null ? "NULL" : `"${v.replace(/\\/g, "\\\\").replace(/"/g, '\\"')}"`)).join(",")}}`;
}
