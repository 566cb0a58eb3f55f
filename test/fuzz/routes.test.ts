import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestSystem, TEST_API_KEY, type TestSystem } from "../support/system.ts";
import { registerDevice } from "../support/fleet-fixtures.ts";
import {
  deeplyNested,
  HOSTILE_DATETIMES,
  HOSTILE_JSON_VALUES,
  HOSTILE_PATH_SEGMENTS,
  HOSTILE_QUERY_VALUES,
  isDateTime,
  leafPaths,
  replaceAt,
  schemaAt,
  validValue,
  type JsonSchema,
} from "./hostile-values.ts";

// Every route of the served OpenAPI document gets hostile values in each path parameter,
// query parameter and body field (one at a time, the rest valid), plus hostile bodies,
// with a valid credential of each kind the route accepts so that validation is reached.
// Any 5xx or a request without an answer within REQUEST_TIMEOUT_MS fails the suite.
// FUZZ_PROFILE=full sends every hostile value; the default short profile (CI) the first few.

const FULL = process.env.FUZZ_PROFILE === "full";
const JSON_VALUES = FULL ? HOSTILE_JSON_VALUES : HOSTILE_JSON_VALUES.slice(0, 9);
const QUERY_VALUES = FULL ? HOSTILE_QUERY_VALUES : HOSTILE_QUERY_VALUES.slice(0, 6);
const PATH_SEGMENTS = FULL ? HOSTILE_PATH_SEGMENTS : HOSTILE_PATH_SEGMENTS.slice(0, 5);
const REQUEST_TIMEOUT_MS = 15_000;
const CONCURRENCY = 6;

interface Operation {
  parameters?: { name: string; in: string; schema?: JsonSchema; required?: boolean }[];
  requestBody?: { content: { "application/json": { schema: JsonSchema } } };
  security?: Record<string, unknown>[];
}

interface Probe {
  what: string;
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string;
}

interface Finding {
  what: string;
  method: string;
  path: string;
  status: number | "no answer";
  body: string;
}

let sys: TestSystem;
let adminLogin: () => Promise<string>;
let deviceToken: string;

beforeAll(async () => {
  // Hostile login bodies count as failed sign-ins: keep the throttle out of the way.
  sys = await startTestSystem({ LOGIN_ADDRESS_FAILURES_BURST: "1000000", LOGIN_FAILURES_BURST: "1000000" });
  const admin = await sys.api.bootstrapAdmin();
  adminLogin = () => sys.api.login("root", "root-password-1");
  deviceToken = (await registerDevice(sys.api, admin.token, "Fuzz handset")).token;
});
afterAll(async () => {
  await sys?.stop();
});

/** The headers of one credential kind, by the document's security scheme name. */
async function credentialHeaders(scheme: string | undefined): Promise<Record<string, string>> {
  switch (scheme) {
    case "apiKey":
      return { "x-api-key": TEST_API_KEY };
    case "sessionToken":
      // A fresh session per route: logout and password routes may end the previous one.
      return { authorization: `Bearer ${await adminLogin()}` };
    case "deviceToken":
      return { authorization: `Bearer ${deviceToken}` };
    case "messagingApiKey":
      return { authorization: `Bearer ${TEST_API_KEY}` };
    default:
      return {};
  }
}

/** The datetime fields the probes reached, `METHOD path field` (the suite fails when too few are). */
const datetimeFields = new Set<string>();

function probesOf(method: string, template: string, op: Operation, credentials: Record<string, string>[]): Probe[] {
  const params = op.parameters ?? [];
  const pathParams = params.filter((p) => p.in === "path");
  const queryParams = params.filter((p) => p.in === "query");
  const validPath: Record<string, string> = {};
  for (const p of pathParams) validPath[p.name] = p.schema?.format === "uuid" ? randomUUID() : "fuzz-id";
  const buildPath = (segments: Record<string, string>, query = "") =>
    template.replace(/\{([a-z_]+)\}/g, (_m, name: string) => segments[name]) + (query ? `?${query}` : "");
  const validQuery = queryParams
    .filter((p) => p.required)
    .map((p) => `${p.name}=${encodeURIComponent(String(validValue(p.schema, randomUUID)))}`);
  const bodySchema = op.requestBody?.content["application/json"].schema;
  const validBody = bodySchema ? validValue(bodySchema, randomUUID) : undefined;
  const json = (v: unknown) => JSON.stringify(v);

  const probes: Omit<Probe, "headers">[] = [];
  const base = { method: method.toUpperCase() };
  probes.push({ ...base, what: "valid", path: buildPath(validPath, validQuery.join("&")), body: json(validBody) });
  for (const p of pathParams) {
    for (const seg of PATH_SEGMENTS) {
      probes.push({
        ...base,
        what: `path ${p.name}=${seg.slice(0, 40)}`,
        path: buildPath({ ...validPath, [p.name]: seg }),
        body: json(validBody),
      });
    }
  }
  for (const p of [...queryParams, { name: "unknown_param", schema: undefined }]) {
    // A datetime gets every hostile datetime too (well formed, out of range or of the calendar).
    const datetimes = isDateTime(schemaAt(p.schema, [])) ? HOSTILE_DATETIMES.map(encodeURIComponent) : [];
    if (datetimes.length) datetimeFields.add(`${method.toUpperCase()} ${template} ?${p.name}`);
    for (const v of [...QUERY_VALUES, ...datetimes]) {
      const query = [...validQuery.filter((q) => !q.startsWith(`${p.name}=`)), `${p.name}=${v}`].join("&");
      probes.push({
        ...base,
        what: `query ${p.name}=${v.slice(0, 40)}`,
        path: buildPath(validPath, query),
        body: json(validBody),
      });
    }
  }
  if (bodySchema) {
    const path = buildPath(validPath, validQuery.join("&"));
    for (const at of leafPaths(validBody)) {
      const datetimes = isDateTime(schemaAt(bodySchema, at)) ? HOSTILE_DATETIMES : [];
      if (datetimes.length) datetimeFields.add(`${method.toUpperCase()} ${template} ${at.join(".")}`);
      for (const v of [...JSON_VALUES, ...datetimes]) {
        probes.push({
          ...base,
          what: `body ${at.join(".")}=${json(v).slice(0, 40)}`,
          path,
          body: json(replaceAt(validBody, at, v)),
        });
      }
    }
    for (const v of JSON_VALUES) probes.push({ ...base, what: `body=${json(v).slice(0, 40)}`, path, body: json(v) });
    probes.push({
      ...base,
      what: "body nested 50 levels",
      path,
      body: json({ ...(validBody as object), x: deeplyNested(50) }),
    });
    probes.push({ ...base, what: "malformed JSON", path, body: "{" });
  }
  const withBody = method !== "get" && method !== "delete";
  return probes.flatMap((p, i) => {
    const headers: Record<string, string> = { ...credentials[i % credentials.length] };
    if (withBody) headers["content-type"] = "application/json";
    const out: Probe[] = [{ ...p, headers, body: withBody ? p.body : undefined }];
    if (withBody && p.what === "valid") {
      out.push({ ...p, what: "gzip header, plain body", headers: { ...headers, "content-encoding": "gzip" } });
      out.push({ ...p, what: "unsupported encoding", headers: { ...headers, "content-encoding": "compress" } });
      out.push({ ...p, what: "NUL in raw body", body: '{"x":"\\u0000"}', headers });
    }
    return out;
  });
}

/** Answers by status class, to show that requests got past authentication to validation. */
const statusClasses = new Map<string, number>();

async function send(p: Probe): Promise<Finding | undefined> {
  try {
    const res = await fetch(sys.url + p.path, {
      method: p.method,
      headers: p.headers,
      body: p.body,
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const text = await res.text();
    const klass =
      res.status === 401 || res.status === 403 || res.status === 422
        ? String(res.status)
        : `${String(res.status)[0]}xx`;
    statusClasses.set(klass, (statusClasses.get(klass) ?? 0) + 1);
    if (res.status < 500) return undefined;
    return { what: p.what, method: p.method, path: p.path.slice(0, 120), status: res.status, body: text.slice(0, 200) };
  } catch (err) {
    return { what: p.what, method: p.method, path: p.path.slice(0, 120), status: "no answer", body: String(err) };
  }
}

async function pool<T, R>(items: T[], size: number, run: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: size }, async () => {
      while (next < items.length) results.push(await run(items[next++]));
    }),
  );
  return results;
}

describe("fuzz: hostile values on every route of the OpenAPI document", () => {
  it("never answers 5xx and never hangs", { timeout: 900_000 }, async () => {
    const doc = (await sys.api.get("/v1/openapi.json")).body as { paths: Record<string, Record<string, Operation>> };
    const findings: Finding[] = [];
    let sent = 0;
    let routes = 0;
    for (const [template, methods] of Object.entries(doc.paths)) {
      for (const [method, op] of Object.entries(methods)) {
        routes++;
        const schemes = (op.security ?? []).flatMap((s) => Object.keys(s));
        const credentials = await Promise.all((schemes.length ? schemes : [undefined]).map(credentialHeaders));
        const probes = probesOf(method, template, op, credentials);
        sent += probes.length;
        for (const f of await pool(probes, CONCURRENCY, send)) if (f) findings.push(f);
      }
    }
    console.log(`fuzz: ${sent} requests over ${routes} routes, ${findings.length} 5xx or unanswered`);
    console.log(`fuzz: ${datetimeFields.size} datetime fields given hostile datetimes`, [...datetimeFields]);
    console.log("fuzz: answers by status", Object.fromEntries(statusClasses));
    if (findings.length) console.table(findings.slice(0, 60));
    expect(routes).toBeGreaterThan(50);
    // The datetime fields of the document were reached: device messages, outcomes, balances, transactions, contacts.
    expect(datetimeFields.size).toBeGreaterThanOrEqual(6);
    expect(findings).toEqual([]);
    // Most hostile values were judged by validation, not stopped at the door.
    expect(statusClasses.get("422") ?? 0).toBeGreaterThan(sent / 3);
    // The credentials still worked at the end: validation was reached throughout.
    expect((await sys.api.get("/v1/device/me", { token: deviceToken })).status).not.toBe(401);
  });
});
