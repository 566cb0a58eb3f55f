import { isFieldSet, ScalarType, toJson, type DescField, type DescMessage, type Message } from "@bufbuild/protobuf";
import { timestampDate, type Timestamp } from "@bufbuild/protobuf/wkt";

/**
 * Proto response → the contract's JSON: proto field names (snake_case, as in the
 * contract), 64-bit integers as numbers, Timestamps as ISO 8601, unset optional
 * fields and unset messages as null, Struct/Value/ListValue as plain JSON. The gateway's
 * REST responses and fleet's webhook bodies both use it, so a receiver sees the same shape.
 */
export function toContractJson(schema: DescMessage, message: Message): Record<string, unknown> {
  return writerOf(schema)(message);
}

type Writer = (message: Message) => Record<string, unknown>;
type Read = (message: Message) => unknown;

/** Each message type's writer, made once (writerOf). */
const writers = new WeakMap<DescMessage, Writer>();

/**
 * A message type's writer: one object literal of its fields, each field's conversion chosen
 * once. Written field by field in a loop, an object of 30 or more fields is kept by V8 as a
 * dictionary, slow to fill and to stringify; a literal with the same keys in the same order
 * shares one shape (a list page's rows, all of them). The keys are the descriptor's field names
 * (`[a-z0-9_]`), quoted with JSON.stringify.
 */
function writerOf(schema: DescMessage): Writer {
  const known = writers.get(schema);
  if (known) return known;
  const reads: Read[] = [];
  const body = schema.fields.map((f, i) => `${JSON.stringify(f.name)}: r[${i}](m)`).join(", ");
  const write = new Function("r", `return (m) => ({ ${body} });`)(reads) as Writer;
  // Set before the fields' readers are made: a message that holds its own type finds it.
  writers.set(schema, write);
  for (const field of schema.fields) reads.push(readerOf(field));
  return write;
}

function readerOf(field: DescField): Read {
  const key = field.localName;
  const get = (message: Message) => (message as unknown as Record<string, unknown>)[key];
  switch (field.fieldKind) {
    case "scalar": {
      const convert = scalarOf(field.scalar);
      if (field.presence === 2 /* IMPLICIT */) return (m) => convert(get(m));
      return (m) => (isFieldSet(m, field) ? convert(get(m)) : null);
    }
    case "enum": {
      const names = new Map(field.enum.values.map((v) => [v.number, v.name]));
      return (m) => {
        const v = get(m) as number;
        return names.get(v) ?? v;
      };
    }
    case "message": {
      const convert = messageOf(field.message);
      return (m) => (isFieldSet(m, field) ? convert(get(m) as Message) : null);
    }
    case "list": {
      const convert: (v: unknown) => unknown =
        field.listKind === "message"
          ? (messageOf(field.message) as (v: unknown) => unknown)
          : field.listKind === "scalar"
            ? scalarOf(field.scalar)
            : (v) => v;
      return (m) => (get(m) as unknown[]).map(convert);
    }
    case "map": {
      const convert: (v: unknown) => unknown =
        field.mapKind === "message"
          ? (messageOf(field.message) as (v: unknown) => unknown)
          : field.mapKind === "scalar"
            ? scalarOf(field.scalar)
            : (v) => v;
      return (m) => {
        const obj: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(get(m) as Record<string, unknown>)) obj[k] = convert(v);
        return obj;
      };
    }
  }
}

function scalarOf(type: ScalarType): (value: unknown) => unknown {
  if (type === ScalarType.BYTES) return (value) => Buffer.from(value as Uint8Array).toString("base64");
  return (value) => (typeof value === "bigint" ? Number(value) : value);
}

function messageOf(schema: DescMessage): (value: Message) => unknown {
  switch (schema.typeName) {
    case "google.protobuf.Timestamp":
      return (value) => timestampDate(value as unknown as Timestamp).toISOString();
    // Plain JSON already: a Struct field holds a JsonObject, a Value field a JsonValue.
    case "google.protobuf.Struct":
    case "google.protobuf.Value":
    case "google.protobuf.ListValue":
      return (value) =>
        value !== null && typeof value === "object" && "$typeName" in value ? toJson(schema, value) : value;
    default: {
      // Found at the first call: a type that holds itself is still being made here.
      let write: Writer | undefined;
      return (value) => (write ??= writerOf(schema))(value);
    }
  }
}
