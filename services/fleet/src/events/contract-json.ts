import { isFieldSet, ScalarType, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * A proto message as the contract writes it in JSON: snake_case field names, 64-bit
 * integers as numbers, Timestamps as ISO 8601, unset optional fields as null. Webhook
 * bodies use it so a receiver sees the same operation detail as the REST routes.
 */
export function contractJson(schema: DescMessage, message: Message): Record<string, unknown> {
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
    case "map":
      return Object.fromEntries(
        Object.entries(value as Record<string, unknown>).map(([k, v]) => [
          k,
          field.mapKind === "message"
            ? messageValue(field.message, v as Message)
            : field.mapKind === "scalar"
              ? scalar(field.scalar, v)
              : v,
        ]),
      );
  }
}

function scalar(type: ScalarType, value: unknown): unknown {
  if (typeof value === "bigint") return Number(value);
  if (type === ScalarType.BYTES) return Buffer.from(value as Uint8Array).toString("base64");
  return value;
}

function messageValue(schema: DescMessage, value: Message): unknown {
  if (schema.typeName === "google.protobuf.Timestamp")
    return timestampDate(value as unknown as Timestamp).toISOString();
  return contractJson(schema, value);
}
