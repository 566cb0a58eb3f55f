import { fromJson, type DescMessage } from "@bufbuild/protobuf";

export { toContractJson } from "@transferops/kit";

/** Validated request JSON (contract names) → a proto request message. */
export function requestFrom<S extends DescMessage>(schema: S, json: Record<string, unknown>) {
  return fromJson(schema, stripUndefined(json) as never, { ignoreUnknownFields: true });
}

function stripUndefined(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(stripUndefined);
  if (value && typeof value === "object" && !(value instanceof Date)) {
    return Object.fromEntries(
      Object.entries(value)
        .filter(([, v]) => v !== undefined && v !== null)
        .map(([k, v]) => [k, stripUndefined(v)]),
    );
  }
  return value instanceof Date ? value.toISOString() : value;
}
