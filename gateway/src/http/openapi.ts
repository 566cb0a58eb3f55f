import { z } from "zod";
import type { Route } from "./route.ts";
import { MESSAGING_SCHEMA_VERSION } from "../routes/v1/messaging-common.ts";

const ERROR_BODY = {
  type: "object",
  required: ["detail", "code", "context"],
  properties: {
    detail: { description: "Text for the agent reading it, or the list of validation problems" },
    code: { type: "string", description: "Stable identifier, e.g. invalid_request, operation_not_cancellable" },
    context: { type: "object", description: "Ids and values relevant to the refusal" },
  },
};

const SECURITY: Record<string, string> = {
  api_key: "apiKey",
  session: "sessionToken",
  device: "deviceToken",
  messaging_key: "messagingApiKey",
};

function jsonSchema(schema: z.ZodType, io: "input" | "output" = "input"): Record<string, unknown> {
  const s = z.toJSONSchema(schema, { io, unrepresentable: "any" }) as Record<string, unknown>;
  delete s.$schema;
  return s;
}

/** The OpenAPI 3.1 document of every route, each with its operationId. */
export function openApiDocument(routes: Route[]): Record<string, unknown> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const r of routes) {
    const path = r.path.replace(/:([a-z_]+)/g, "{$1}");
    const parameters: unknown[] = [];
    for (const m of r.path.matchAll(/:([a-z_]+)/g)) {
      const isUuid = r.uuidParams?.includes(m[1]);
      parameters.push({
        name: m[1],
        in: "path",
        required: true,
        schema: { type: "string", ...(isUuid ? { format: "uuid" } : {}) },
      });
    }
    if (r.query) {
      const q = jsonSchema(r.query) as { properties?: Record<string, unknown>; required?: string[] };
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
    const responses: Record<string, unknown> = {};
    for (const [status, doc] of Object.entries(r.responses)) {
      const { description, schema, example, reasons } = typeof doc === "string" ? { description: doc } : doc;
      const code = Number(status);
      const bodySchema =
        code >= 400 ? { $ref: "#/components/schemas/Error" } : schema ? jsonSchema(schema, "output") : undefined;
      responses[status] = bodySchema
        ? {
            description,
            content: { "application/json": { schema: bodySchema, ...(example !== undefined ? { example } : {}) } },
            ...(reasons?.length ? { "x-reasons": reasons } : {}),
          }
        : { description };
    }
    responses["429"] ??= {
      description: "Too many requests; retry after Retry-After",
      content: { "application/json": { schema: { $ref: "#/components/schemas/Error" } } },
    };
    paths[path] ??= {};
    paths[path][r.method] = {
      operationId: r.operationId,
      summary: r.summary,
      ...(r.description ? { description: r.description } : {}),
      tags: [r.tag],
      parameters,
      ...(r.body
        ? {
            requestBody: {
              required: true,
              content: {
                "application/json": {
                  schema: jsonSchema(r.body),
                  ...(r.requestExample !== undefined ? { example: r.requestExample } : {}),
                },
              },
            },
          }
        : {}),
      responses,
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
        "Mobile-money transfers dialled by handsets over USSD and proven from operator SMS. Every response carries X-Correlation-Id.",
    },
    servers: [{ url: "/" }],
    paths,
    components: {
      schemas: { Error: ERROR_BODY },
      securitySchemes: {
        apiKey: { type: "apiKey", in: "header", name: "X-API-Key", description: "Automation caller" },
        sessionToken: { type: "http", scheme: "bearer", description: "Board session token from POST /v1/agents/login" },
        deviceToken: { type: "http", scheme: "bearer", description: "Handset device token from POST /v1/devices" },
        messagingApiKey: { type: "http", scheme: "bearer", description: "API key of the messaging-side routes" },
      },
    },
  };
}
