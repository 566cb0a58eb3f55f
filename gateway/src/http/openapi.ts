import { z } from "zod";
import { defaultCodeOfHttp } from "@transferops/kit";
import type { ResponseDoc, Route } from "./route.ts";
import { GATEWAY_REASONS } from "./reasons.ts";
import type { FLEET } from "./service-reasons.ts";
import { MESSAGING_SCHEMA_VERSION } from "../routes/v1/messaging-common.ts";

type Json = Record<string, unknown>;

const ERROR_BODY: Json = {
  type: "object",
  description:
    "Every error. `code` is the contract's default for the status (400 bad_request, 401 not_signed_in, 403 not_allowed, 404 not_found, 409 conflict, 422 refused or invalid_request, 423 locked, 429 rate_limited, 500 server_error) unless the contract names one (operation_not_cancellable); the precise reason is `context.reason`.",
  required: ["detail", "code", "context"],
  properties: {
    detail: {
      description: "Text for the agent reading it, or the list of validation problems (code invalid_request)",
      oneOf: [
        { type: "string" },
        {
          type: "array",
          items: {
            type: "object",
            required: ["field", "message"],
            properties: { field: { type: "string" }, message: { type: "string" } },
          },
        },
        { type: "object", description: "The receipt routes: `reason` and `message`" },
      ],
    },
    code: { type: "string", description: "The status's default code, or operation_not_cancellable" },
    context: {
      type: "object",
      description: "Ids and values relevant to the refusal",
      properties: {
        reason: {
          type: "string",
          description:
            "Stable snake_case identifier of the precise reason; each response lists the values it can give. Absent on validation problems (the list in `detail` says it all).",
        },
      },
      additionalProperties: true,
    },
  },
  example: { detail: "Operation 3f0c… not found", code: "not_found", context: { reason: "operation_not_found" } },
};

/** Descriptions of the tags; a tag a route names and this list lacks gets a plain one. */
const TAG_DESCRIPTIONS: Record<string, string> = {
  Health: "Liveness of the gateway and the services behind it",
  Agents: "Sign-in, sessions and the agents' own accounts",
  Operations: "Transfers: create, follow, cancel, the arbitration and settled-on-word queues, matching operations",
  Handset: "Routes of the handset application (device token): poll, outcome, SMS, heartbeat",
  Devices: "Handset registration and management (admin)",
  SIMs: "SIM cards, their assignment to handsets and their balances",
  Admin: "Administration: access grants, circuit breaker, fleet limits, health, reset",
  Notifications: "Notifications and webhooks",
};

const SECURITY: Record<string, string> = {
  api_key: "apiKey",
  session: "sessionToken",
  device: "deviceToken",
  messaging_key: "messagingApiKey",
};

/**
 * zod → JSON Schema for the document. Named schemas (`.meta({ id })`, e.g. every proto
 * message of contractSchema) go to components/schemas once and are referenced.
 */
class SchemaSet {
  readonly components: Record<string, Json> = {};

  convert(schema: z.ZodType, io: "input" | "output"): Json {
    const s = z.toJSONSchema(schema, { io, unrepresentable: "any", target: "draft-2020-12" }) as Json;
    delete s.$schema;
    const defs = (s.$defs ?? {}) as Record<string, Json>;
    delete s.$defs;
    for (const [name, def] of Object.entries(defs)) this.components[name] ??= tidy(def) as Json;
    if (typeof s.id === "string") {
      const name = s.id;
      this.components[name] ??= tidy(s) as Json;
      return { $ref: `#/components/schemas/${name}` };
    }
    return tidy(s) as Json;
  }
}

/**
 * `$defs` refs → components; drops zod's `id` and its long date-time pattern (the format
 * says it), and the catch-all branches of an `anyOf` (`catchAllDropped`).
 */
function tidy(value: unknown, names = false): unknown {
  if (Array.isArray(value)) return value.map((v) => tidy(v));
  if (!value || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(names ? (value as Json) : catchAllDropped(value as Json))) {
    if (names) {
      out[k] = tidy(v);
      continue;
    }
    if (k === "id" && typeof v === "string") continue;
    if (k === "pattern" && (value as Json).format === "date-time") continue;
    out[k] =
      k === "$ref" && typeof v === "string"
        ? v.replace("#/$defs/", "#/components/schemas/")
        : tidy(v, k === "properties");
  }
  return out;
}

const CATCH_ALL_NOTE = "Any other value is taken too, and answered as the route's description says.";

/**
 * A schema that reads anything in one branch (`z.unknown()` beside the documented shapes: a
 * batch that refuses a bad entry in its own result, a value recorded as unknown) is an `anyOf`
 * with an empty branch, which matches everything and makes the others meaningless. The
 * document shows the shapes the route reads, and says in the field's description that other
 * values are taken (the route's description says how they are answered).
 */
function catchAllDropped(schema: Json): Json {
  const branches = schema.anyOf;
  if (!Array.isArray(branches)) return schema;
  const isEmpty = (b: unknown) => !!b && typeof b === "object" && Object.keys(b).length === 0;
  if (!branches.some(isEmpty)) return schema;
  const rest = branches.filter((b) => !isEmpty(b)) as Json[];
  const { anyOf: _dropped, ...others } = schema;
  const description = [others.description, CATCH_ALL_NOTE].filter(Boolean).join(" ");
  if (rest.length === 0) return { ...others, description };
  return rest.length === 1 ? { ...rest[0], ...others, description } : { ...others, anyOf: rest, description };
}

/** A value valid against a JSON schema, for routes that give no example. */
function exampleOf(schema: unknown, components: Record<string, Json>, name = "", depth = 0): unknown {
  const s = (schema ?? {}) as Json;
  if (depth > 8) return null;
  if (typeof s.$ref === "string") {
    return exampleOf(components[s.$ref.split("/").pop()!], components, name, depth + 1);
  }
  if (s.example !== undefined) return s.example;
  if (s.default !== undefined) return s.default;
  if (s.const !== undefined) return s.const;
  if (Array.isArray(s.enum)) return s.enum[0];
  for (const k of ["anyOf", "oneOf"] as const) {
    if (Array.isArray(s[k])) {
      const options = s[k] as Json[];
      return exampleOf(options.find((o) => o.type !== "null") ?? options[0], components, name, depth + 1);
    }
  }
  if (Array.isArray(s.allOf)) return exampleOf((s.allOf as Json[])[0], components, name, depth + 1);
  switch (s.type) {
    case "object": {
      const out: Json = {};
      for (const [k, v] of Object.entries((s.properties ?? {}) as Json))
        out[k] = exampleOf(v, components, k, depth + 1);
      return out;
    }
    case "array":
      return s.items ? [exampleOf(s.items, components, name, depth + 1)] : [];
    case "integer":
    case "number": {
      const min = typeof s.minimum === "number" && s.minimum > 0 ? s.minimum : 0;
      const max = typeof s.maximum === "number" ? s.maximum : Number.MAX_SAFE_INTEGER;
      const wanted = /montant|amount|balance/.test(name) ? 5000 : /slot/.test(name) ? 0 : 1;
      return Math.min(Math.max(wanted, min), max);
    }
    case "boolean":
      return true;
    case "null":
      return null;
    case "string":
      return stringExample(s, name);
    default:
      return null;
  }
}

function stringExample(s: Json, name: string): string {
  const guess = guessString(s, name);
  if (typeof s.pattern !== "string") return guess;
  const re = new RegExp(s.pattern);
  return [guess, "12345678", "1234", "2026-11-22", "690000001", "A1"].find((c) => re.test(c)) ?? guess;
}

function guessString(s: Json, name: string): string {
  if (s.format === "date-time") return "2026-11-22T09:30:00.000Z";
  if (s.format === "uuid" || /(^|_)id$/.test(name)) return "3f0c2a4e-8b1d-4c6f-9e2a-5d7b8c9d0e1f";
  if (s.format === "date" || /^(date|from|to|day)/.test(name)) return "2026-11-22";
  if (/msisdn|phone/.test(name)) return "690000001";
  if (/operator/.test(name)) return "operator_b";
  const max = typeof s.maxLength === "number" ? s.maxLength : 40;
  const min = typeof s.minLength === "number" ? s.minLength : 0;
  const text = name ? name.replace(/_/g, " ") : "text";
  return text.padEnd(min, "x").slice(0, Math.max(max, min));
}

/** Fleet's answer to a credential it does not know (wrong, expired or revoked), on every authenticated route. */
const CREDENTIALS_INVALID: keyof typeof FLEET = "credentials_invalid";

/** Reasons the gateway itself can give on a route (credentials, body, rate), by status. */
function gatewayReasons(r: Route): Record<number, string[]> {
  const out: Record<number, string[]> = { 429: [GATEWAY_REASONS.rate_limited], 404: [] };
  // Every route calls a service (health declares its own 503 body).
  if (!r.responses[503]) out[503] = [GATEWAY_REASONS.outcome_unknown];
  if (r.auth !== "none") {
    out[401] = [GATEWAY_REASONS.credentials_missing, CREDENTIALS_INVALID];
    out[403] = [GATEWAY_REASONS.credential_not_accepted];
    if (r.auth.includes("session") && !r.allowInactive) out[403].push(GATEWAY_REASONS.agent_inactive);
    if (r.auth.includes("session") && !r.allowTemporaryPassword) {
      out[403].push(GATEWAY_REASONS.password_change_required);
    }
  }
  // A malformed percent-escape in the path, or a body the parsers cannot read.
  if (r.body || r.path.includes(":")) out[400] = [GATEWAY_REASONS.malformed_request];
  if (r.body) {
    out[400].push(GATEWAY_REASONS.malformed_json);
    out[413] = [GATEWAY_REASONS.body_too_large];
    out[415] = [GATEWAY_REASONS.unsupported_encoding];
  }
  if (r.body || r.query || r.path.includes(":")) {
    out[422] = [GATEWAY_REASONS.nul_character, GATEWAY_REASONS.nested_too_deeply];
  }
  return out;
}

const GATEWAY_DESCRIPTIONS: Record<number, string> = {
  400: "Malformed request: JSON body, percent-escape in the path",
  401: "Missing or invalid credentials",
  403: "The credential is not accepted by this route",
  413: "Body larger than the route accepts (1 MB unless the route says otherwise)",
  415: "Unsupported Content-Encoding or charset",
  422: "Validation problems: `detail` lists them (code invalid_request)",
  429: "Too many requests; retry after Retry-After",
  500: "Internal error; nothing about it is sent",
  503: "The request ran out of time (or its service went away) before its outcome was known: it may or may not have taken effect. Retry-After says when to send the same request again (same request_id or client_message_id); a replay answers what was done",
};

/** The error body, its `context.reason` one of `reasons` (sorted, unique) when there are some. */
function errorSchema(unique: string[]): Json {
  return unique.length
    ? {
        allOf: [
          { $ref: "#/components/schemas/Error" },
          {
            type: "object",
            properties: { context: { type: "object", properties: { reason: { type: "string", enum: unique } } } },
          },
        ],
      }
    : { $ref: "#/components/schemas/Error" };
}

const reasonsText = (description: string, unique: string[]) =>
  unique.length ? `${description}. Reasons (context.reason): ${unique.join(", ")}` : description;

function errorResponse(status: number, description: string, reasons: string[]): Json {
  const code = status === 422 && reasons.length === 0 ? "invalid_request" : defaultCodeOfHttp(status);
  const unique = [...new Set(reasons)].sort();
  const schema = errorSchema(unique);
  const example = {
    detail:
      status === 422 && !unique.length
        ? [{ field: "body.montant", message: "Too small: expected number to be >0" }]
        : description,
    code: code ?? "bad_request",
    context: unique.length ? { reason: unique[0] } : {},
  };
  return { description: reasonsText(description, unique), content: { "application/json": { schema, example } } };
}

/** The OpenAPI 3.1 document of every route, each with its operationId. */
/** Path, query and header parameters of a route. */
function parametersOf(r: Route, schemas: SchemaSet): unknown[] {
  const parameters: unknown[] = [];
  for (const m of r.path.matchAll(/:([a-z_]+)/g)) {
    const isUuid = r.uuidParams?.includes(m[1]);
    parameters.push({
      name: m[1],
      in: "path",
      required: true,
      description: isUuid
        ? `The ${m[1].replace(/_/g, " ")} (UUID; malformed is 422)`
        : `The ${m[1].replace(/_/g, " ")}`,
      schema: { type: "string", ...(isUuid ? { format: "uuid" } : {}) },
    });
  }
  if (r.query) {
    const q = schemas.convert(r.query, "input") as { properties?: Json; required?: string[] };
    for (const [name, schema] of Object.entries(q.properties ?? {})) {
      parameters.push({ name, in: "query", required: q.required?.includes(name) ?? false, schema });
    }
  }
  for (const h of r.headers ?? []) {
    parameters.push({
      name: h.name,
      in: "header",
      required: h.required,
      description: h.description,
      schema: { type: "string" },
    });
  }
  return parameters;
}

/**
 * Every status a route can answer: the ones it declares, the gateway's own (its reasons per
 * status), 422 when it reads input and 500; each with its body, example and reasons.
 */
function responsesOf(r: Route, schemas: SchemaSet): Record<string, unknown> {
  const responses: Record<string, unknown> = {};
  const extra = gatewayReasons(r);
  const declared = Object.entries(r.responses).map(([status, doc]) => [Number(status), doc] as const);
  const statuses = new Set([...declared.map(([s]) => s), ...Object.keys(extra).map(Number)]);
  if (r.body || r.query || r.uuidParams?.length) statuses.add(422);
  statuses.add(500);
  for (const status of [...statuses].sort((a, b) => a - b)) {
    const given = r.responses[status];
    const doc: ResponseDoc | undefined = typeof given === "string" ? { description: given } : given;
    const reasons = [...(doc?.reasons ?? []), ...(extra[status] ?? [])];
    // A 2xx, or a status whose body is not the error body (409 replay of create, 503 of health).
    if (status < 400 || doc?.schema) {
      responses[status] = bodyResponse(status, doc, reasons, schemas);
      continue;
    }
    if (status === 404 && !doc) continue;
    responses[status] = errorResponse(status, doc?.description ?? GATEWAY_DESCRIPTIONS[status] ?? "Refused", reasons);
  }
  return responses;
}

/** A response with a body of its own (a 2xx, or a status such as the 409 replay of create). */
function bodyResponse(status: number, doc: ResponseDoc | undefined, reasons: string[], schemas: SchemaSet): Json {
  const description = doc?.description ?? "OK";
  if (!doc?.schema) return { description };
  const body = schemas.convert(doc.schema, "output");
  const example = doc.example ?? exampleOf(body, schemas.components);
  // A status that is also a refusal (409 of create: the replay, or request_id_taken)
  // documents both bodies.
  const refused = status < 400 ? [] : [...new Set(reasons)].sort();
  const schema = refused.length ? { oneOf: [body, errorSchema(refused)] } : body;
  return { description: reasonsText(description, refused), content: { "application/json": { schema, example } } };
}

function requestBodyOf(r: Route, schemas: SchemaSet): Json | undefined {
  if (!r.body) return undefined;
  const schema = schemas.convert(r.body, "input");
  const example = r.requestExample ?? exampleOf(schema, schemas.components);
  return { required: true, content: { "application/json": { schema, example } } };
}

export function openApiDocument(routes: Route[]): Record<string, unknown> {
  const schemas = new SchemaSet();
  const paths: Record<string, Record<string, unknown>> = {};
  const tags = new Set<string>();
  for (const r of routes) {
    tags.add(r.tag);
    const path = r.path.replace(/:([a-z_]+)/g, "{$1}");
    const parameters = parametersOf(r, schemas);
    const requestBody = requestBodyOf(r, schemas);
    paths[path] ??= {};
    paths[path][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      description: r.description ?? r.summary,
      tags: [r.tag],
      ...(parameters.length ? { parameters } : {}),
      ...(requestBody ? { requestBody } : {}),
      responses: responsesOf(r, schemas),
      security: r.auth === "none" ? [] : r.auth.map((k) => ({ [SECURITY[k]]: [] })),
    };
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Transfer operations API",
      version: "1.0.0",
      // The messaging-side reference (Contacts, Imports) publishes its own schema version.
      "x-messaging-schema-version": MESSAGING_SCHEMA_VERSION,
      description:
        "Mobile-money transfers dialled by handsets over USSD and proven from operator SMS. Every response carries X-Correlation-Id. Errors: see the Error schema; `context.reason` values are listed per response.",
      contact: { name: "Transfer operations maintainers" },
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    servers: [{ url: "/", description: "The gateway serving this document" }],
    tags: [...tags].sort().map((name) => ({ name, description: TAG_DESCRIPTIONS[name] ?? `${name} routes` })),
    paths,
    components: {
      schemas: { Error: ERROR_BODY, ...schemas.components },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "Automation caller" },
        sessionToken: { type: "http", scheme: "bearer", description: "Board session token from POST /v1/agents/login" },
        deviceToken: { type: "http", scheme: "bearer", description: "Handset device token from POST /v1/devices" },
        messagingApiKey: { type: "http", scheme: "bearer", description: "API key of the messaging-side routes" },
      },
    },
  };
}
