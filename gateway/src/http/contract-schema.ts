import { ScalarType, type DescField, type DescMessage } from "@bufbuild/protobuf";
import { z } from "zod";

const cache = new Map<string, z.ZodObject>();

/**
 * The zod schema of a proto message as `toContractJson` writes it (kit/contract-json.ts):
 * proto field names, 64-bit integers as numbers, Timestamps as ISO 8601 strings, unset
 * optional fields and messages as null, Struct as plain JSON. Routes document their 2xx
 * bodies with it, so the published schema is derived from the very message the route sends.
 */
export function contractSchema(desc: DescMessage): z.ZodObject {
  const known = cache.get(desc.typeName);
  if (known) return known;
  const shape: Record<string, z.ZodType> = {};
  for (const field of desc.fields) shape[field.name] = fieldSchema(field);
  const schema = z.object(shape).meta({ id: desc.name });
  cache.set(desc.typeName, schema);
  return schema;
}

function fieldSchema(field: DescField): z.ZodType {
  switch (field.fieldKind) {
    case "scalar": {
      const s = scalarSchema(field.scalar);
      return field.presence !== 2 /* IMPLICIT */ ? s.nullable() : s;
    }
    case "enum":
      return z.enum(field.enum.values.map((v) => v.name) as [string, ...string[]]);
    case "message":
      return messageSchema(field.message).nullable();
    case "list":
      return z.array(
        field.listKind === "message"
          ? messageSchema(field.message)
          : field.listKind === "scalar"
            ? scalarSchema(field.scalar)
            : z.string(),
      );
    case "map":
      return z.record(
        z.string(),
        field.mapKind === "message"
          ? messageSchema(field.message)
          : field.mapKind === "scalar"
            ? scalarSchema(field.scalar)
            : z.string(),
      );
  }
}

function scalarSchema(type: ScalarType): z.ZodType {
  switch (type) {
    case ScalarType.STRING:
      return z.string();
    case ScalarType.BOOL:
      return z.boolean();
    case ScalarType.BYTES:
      return z.string().describe("base64");
    case ScalarType.DOUBLE:
    case ScalarType.FLOAT:
      return z.number();
    default:
      return z.number().int();
  }
}

function messageSchema(desc: DescMessage): z.ZodType {
  switch (desc.typeName) {
    case "google.protobuf.Timestamp":
      return z.iso.datetime();
    case "google.protobuf.Struct":
      return z.record(z.string(), z.unknown());
    case "google.protobuf.Value":
      return z.unknown();
    case "google.protobuf.ListValue":
      return z.array(z.unknown());
    default:
      return contractSchema(desc);
  }
}
