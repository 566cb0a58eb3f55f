import { isFieldSet, ScalarType, toJson, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * Proto response → the contract's JSON: proto field names (snake_case, as in the
 * contract), 64-bit integers as numbers, Timestamps as ISO 8601, unset optional
 * fields and unset messages as null, Struct/Value/ListValue as plain JSON. The gateway's
 * REST responses and fleet's webhook bodies both use it, so a receiver sees the same shape.
 */
export function toContractJson(schema: DescMessage, message: Message): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of schema.fields) out[field.name] = fieldValue(field, message);
  return out;
}

function fieldValue(field: DescField, message: Message): unknown {
  const value = (message as unknown as Record<string, unknown>)[field.localName];
  switch (field.fieldKind) {
    case "scalar":
      if (field.presence !== 2 /* IMPLICIT */ && !isFieldSet(message, field)) return null;
      return scalar(field.scalar, value);
    case "enum":
      return field.enum.values.find((v) => v.number === value)?.name ?? value;
    case "message":
      return isFieldSet(message, field) ? messageValue(field.message, value as Message) : null;
    case "list":
      return (value as unknown[]).map((v) =>
        field.listKind === "message"
          ? messageValue(field.message, v as Message)
          : field.listKind === "scalar"
            ? scalar(field.scalar, v)
            : v,
      );
    case "map": {
      const obj: Record<string, unknown> = {};
      for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
        obj[k] =
          field.mapKind === "message"
            ? messageValue(field.message, v as Message)
            : field.mapKind === "scalar"
              ? scalar(field.scalar, v)
              : v;
      }
      return obj;
    }
  }
}

function scalar(type: ScalarType, value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (type === ScalarType.BYTES) return Buffer.from(value as Uint8Array).toString("base64");
  return value;
}

function messageValue(schema: DescMessage, value: Message): unknown {
  switch (schema.typeName) {
    case "google.protobuf.Timestamp":
      return timestampDate(value as unknown as Timestamp).toISOString();
    // Plain JSON already: protobuf-es holds a Struct field as a JsonObject, a Value as a JsonValue.
    case "google.protobuf.Struct":
    case "google.protobuf.Value":
    case "google.protobuf.ListValue":
      return value !== null && typeof value === "object" && "$typeName" in value ? toJson(schema, value) : value;
    default:
      return toContractJson(schema, value);
  }
}
