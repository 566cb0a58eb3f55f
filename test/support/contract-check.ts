import { Ajv2020, type ValidateFunction } from "ajv/dist/2020.js";

interface Operation {
  operationId: string;
  responses: Record<string, { content?: Record<string, { schema?: unknown }> }>;
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, unknown> };
}

/** Served outside the route table, so not in the document. */
const UNDOCUMENTED = new Set(["/v1/openapi.json"]);

/**
 * Checks each response the tests get against the document the gateway serves: the route
 * (method and path template) is documented, the status is documented for it, and a JSON
 * body of a documented schema conforms to it. So the document cannot drift from the code
 * without a test failing.
 */
export class ContractCheck {
  private readonly ajv = new Ajv2020({ strict: false, validateFormats: false, allErrors: true });
  private readonly validators = new Map<string, ValidateFunction>();
  private readonly routes: { method: string; template: string; pattern: RegExp; params: number; op: Operation }[] = [];

  constructor(doc: Document) {
    this.ajv.addSchema({ $id: "components", components: rebase(doc.components) });
    for (const [template, item] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(item)) {
        const params = (template.match(/\{[^}]+\}/g) ?? []).length;
        const source = template
          .split(/\{[^}]+\}/)
          .map((s) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&"))
          .join("[^/]+");
        this.routes.push({ method, template, pattern: new RegExp(`^${source}$`), params, op });
      }
    }
    // Literal segments win over templates, as the gateway declares them first.
    this.routes.sort((a, b) => a.params - b.params);
  }

  /** The documented operation of a request, or undefined. */
  operationOf(method: string, path: string) {
    const pathname = path.split("?")[0];
    return this.routes.find((r) => r.method === method.toLowerCase() && r.pattern.test(pathname));
  }

  /** Throws naming the drift when the response is not what the document says. */
  check(method: string, path: string, status: number, contentType: string | null, body: unknown): void {
    const pathname = path.split("?")[0];
    if (UNDOCUMENTED.has(pathname)) return;
    const route = this.operationOf(method, pathname);
    const where = `${method.toUpperCase()} ${pathname}`;
    if (!route) {
      if (status === 404) return; // the gateway's route_not_found
      throw new Error(`OpenAPI drift: ${where} answered ${status} but the document has no such route`);
    }
    const response = route.op.responses[String(status)];
    if (!response) {
      throw new Error(
        `OpenAPI drift: ${route.op.operationId} (${where}) answered ${status}, not documented (documented: ${Object.keys(route.op.responses).join(", ")})`,
      );
    }
    const schema = response.content?.["application/json"]?.schema;
    if (!schema || body === undefined || !contentType?.includes("application/json")) return;
    const key = `${route.method} ${route.template} ${status}`;
    let validate = this.validators.get(key);
    if (!validate) {
      validate = this.ajv.compile(rebase(schema) as object);
      this.validators.set(key, validate);
    }
    if (!validate(body)) {
      const problems = (validate.errors ?? []).slice(0, 5).map((e) => `${e.instancePath || "/"} ${e.message}`);
      throw new Error(
        `OpenAPI drift: ${route.op.operationId} ${status} body does not match its documented schema: ${problems.join("; ")}; body: ${JSON.stringify(body).slice(0, 400)}`,
      );
    }
  }
}

/** `#/components/...` refs point into the schema registered as `components`. */
function rebase(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(rebase);
  if (!value || typeof value !== "object") return value;
  return Object.fromEntries(
    Object.entries(value).map(([k, v]) => [
      k,
      k === "$ref" && typeof v === "string" && v.startsWith("#/components/") ? `components${v}` : rebase(v),
    ]),
  );
}
