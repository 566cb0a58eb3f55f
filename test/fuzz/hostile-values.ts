// Hostile values for the fuzz suite, and a valid value for a JSON Schema so that each
// hostile value is sent alone inside an otherwise well-formed request.

export type JsonSchema = {
  type?: string | string[];
  format?: string;
  enum?: unknown[];
  const?: unknown;
  minimum?: number;
  exclusiveMinimum?: number;
  minLength?: number;
  minItems?: number;
  items?: JsonSchema;
  properties?: Record<string, JsonSchema>;
  required?: string[];
  anyOf?: JsonSchema[];
  oneOf?: JsonSchema[];
  default?: unknown;
};

/** A nested object `levels` deep: `{"a":{"a":...}}`. */
export function deeplyNested(levels: number): unknown {
  let v: unknown = "x";
  for (let i = 0; i < levels; i++) v = { a: v };
  return v;
}

/** Values sent in place of each body field; the short profile keeps the first ones. */
export const HOSTILE_JSON_VALUES: unknown[] = [
  "\u0000",
  "a\u0000b",
  2 ** 31,
  -(2 ** 31) - 1,
  2 ** 63,
  1e308,
  1.5,
  deeplyNested(50),
  "x".repeat(100_000),
  -1,
  0,
  "",
  null,
  [],
  {},
  true,
  "' or 1=1 --",
  "\ud800",
  "%ZZ",
  [[[[[[[[[[[[[[[[[[[[[["deep"]]]]]]]]]]]]]]]]]]]]]],
];

/**
 * Sent in place of each datetime (`format: date-time`) body field and query value, beside the
 * values above: well formed, but out of any sane range, or not a day of the calendar.
 */
export const HOSTILE_DATETIMES: string[] = [
  "9999-12-31T23:59:59Z",
  "0001-01-01T00:00:00Z",
  "1970-01-01T00:00:00Z",
  "2200-01-01T00:00:00+14:00",
  "2026-02-30T10:00:00Z",
  "2026-01-15T24:00:00Z",
  "2026-01-15T10:00:00-23:59",
  "275760-09-13T00:00:00Z",
];

/** Raw (already percent-encoded or not) text sent as a query value. */
export const HOSTILE_QUERY_VALUES: string[] = [
  "%00",
  "a%00b",
  "%ZZ",
  "99999999999999999999",
  "2147483648",
  "-1",
  "",
  "x".repeat(5000),
  "1e308",
  "%27%20or%201%3D1",
  "%F0%9F%98%80",
  "[]",
];

/** Raw path segments sent in place of each path parameter. */
export const HOSTILE_PATH_SEGMENTS: string[] = [
  "%ZZ",
  "%00",
  "a%00b",
  "%",
  "x".repeat(5000),
  "99999999999999999999",
  "%C0%AF",
  "%F0%9F%98%80",
  "00000000-0000-0000-0000-000000000000%00",
  "..%2F..%2Fetc",
];

/** A valid instance of a (zod-generated) JSON Schema, as small as it may be. */
export function validValue(schema: JsonSchema | undefined, uuid: () => string): unknown {
  if (!schema) return "x";
  if (schema.const !== undefined) return schema.const;
  if (schema.enum?.length) return schema.enum[0];
  const alternatives = schema.anyOf ?? schema.oneOf;
  if (alternatives) {
    const nonNull = alternatives.find((s) => s.type !== "null") ?? alternatives[0];
    return validValue(nonNull, uuid);
  }
  const type = Array.isArray(schema.type) ? schema.type.find((t) => t !== "null") : schema.type;
  switch (type) {
    case "string":
      if (schema.format === "uuid") return uuid();
      if (schema.format === "date") return "2026-01-15";
      if (schema.format === "date-time") return "2026-01-15T10:00:00Z";
      if (schema.format === "email") return "a@example.com";
      return "x".repeat(Math.max(1, schema.minLength ?? 1));
    case "integer":
    case "number":
      return Math.max(1, Math.ceil(schema.minimum ?? schema.exclusiveMinimum ?? 1));
    case "boolean":
      return true;
    case "null":
      return null;
    case "array":
      return Array.from({ length: Math.max(1, schema.minItems ?? 1) }, () => validValue(schema.items, uuid));
    case "object":
    default: {
      const out: Record<string, unknown> = {};
      for (const [name, prop] of Object.entries(schema.properties ?? {})) out[name] = validValue(prop, uuid);
      return out;
    }
  }
}

/** The schema of the value at `path` inside a value of `schema` (object keys, array items, the non-null branch). */
export function schemaAt(schema: JsonSchema | undefined, path: (string | number)[]): JsonSchema | undefined {
  let at = schema;
  for (const step of path) {
    if (!at) return undefined;
    const alternatives = at.anyOf ?? at.oneOf;
    if (alternatives) at = alternatives.find((s) => s.type !== "null" && (s.properties || s.items)) ?? alternatives[0];
    at = typeof step === "number" ? at?.items : at?.properties?.[step];
  }
  const alternatives = at?.anyOf ?? at?.oneOf;
  return alternatives ? (alternatives.find((s) => s.type !== "null") ?? at) : at;
}

/** Whether a schema is a datetime (`format: date-time`), alone or beside null. */
export const isDateTime = (schema: JsonSchema | undefined): boolean => schema?.format === "date-time";

/** Every path to a value inside `value` (object keys and array index 0), the root excluded. */
export function leafPaths(value: unknown, prefix: (string | number)[] = []): (string | number)[][] {
  if (Array.isArray(value)) {
    return value.length ? [[...prefix, 0], ...leafPaths(value[0], [...prefix, 0])] : [];
  }
  if (value && typeof value === "object") {
    return Object.entries(value).flatMap(([k, v]) => [[...prefix, k], ...leafPaths(v, [...prefix, k])]);
  }
  return [];
}

/** A deep copy of `value` with the value at `path` replaced. */
export function replaceAt(value: unknown, path: (string | number)[], replacement: unknown): unknown {
  if (path.length === 0) return replacement;
  const copy = Array.isArray(value) ? [...value] : { ...(value as Record<string, unknown>) };
  const [head, ...rest] = path;
  (copy as Record<string | number, unknown>)[head] = replaceAt(
    (value as Record<string | number, unknown>)[head],
    rest,
    replacement,
  );
  return copy;
}
