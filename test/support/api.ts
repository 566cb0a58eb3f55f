import createClient, { type Client } from "openapi-fetch";
import { ContractCheck } from "./contract-check.ts";
import type { paths } from "../../gateway/src/openapi.d.ts";
import { TEST_API_KEY, TEST_BOOTSTRAP_TOKEN } from "./credentials.ts";

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

export interface RequestOptions {
  body?: unknown;
  /** Bearer token (session or device). */
  token?: string;
  /** X-API-Key value; `true` uses the test key. */
  apiKey?: string | true;
  headers?: Record<string, string>;
  /** Raw body text, sent as JSON content type (for malformed JSON tests). */
  raw?: string;
}

type Paths = paths;

/** The Authorization header of a session or device token, for the typed client. */
export const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** The body of a typed call that must succeed; throws naming the call and the refusal. */
export function dataOf<T>(what: string, r: { data?: T; error?: unknown; response: Response }): T {
  if (r.data === undefined) throw new Error(`${what} failed: ${r.response.status} ${JSON.stringify(r.error)}`);
  return r.data;
}
/** The typed client generated from the served document (npm run generate:client). */
export type TypedClient = Client<Paths>;

/**
 * The gateway's client for tests. Every call goes through the openapi-fetch client typed by
 * the document the gateway serves (gateway/src/openapi.d.ts), and every response is checked
 * against that document (ContractCheck): an undocumented route, status or body shape fails
 * the test. `client` is the typed client for calls written against the document's types;
 * `request` and its shorthands take a concrete path for tests that probe malformed input.
 */
const contracts = new Map<string, Promise<ContractCheck>>();

function contractOf(baseUrl: string): Promise<ContractCheck> {
  let contract = contracts.get(baseUrl);
  if (!contract) {
    contract = fetch(baseUrl + "/v1/openapi.json")
      .then((res) => res.json())
      .then((doc) => new ContractCheck(doc));
    // A failed fetch is not kept: the next client asks again.
    contract.catch(() => contracts.delete(baseUrl));
    contracts.set(baseUrl, contract);
  }
  return contract;
}

export class Api {
  readonly client: TypedClient;
  private contract: Promise<ContractCheck> | undefined;

  constructor(readonly baseUrl: string) {
    this.client = createClient<Paths>({ baseUrl });
    this.client.use({
      onResponse: async ({ request, response }) => {
        const path = new URL(request.url).pathname;
        const text = await response.clone().text();
        let body: unknown = undefined;
        try {
          body = text ? JSON.parse(text) : undefined;
        } catch {
          /* not JSON */
        }
        (await this.contractCheck()).check(
          request.method,
          path,
          response.status,
          response.headers.get("content-type"),
          body,
        );
        return undefined;
      },
    });
  }

  /**
   * The served document, fetched once per gateway address and shared by every client of
   * it (with the validators it compiles), as the check of every response.
   */
  private contractCheck(): Promise<ContractCheck> {
    this.contract ??= contractOf(this.baseUrl);
    return this.contract;
  }

  async request<T = any>(method: string, path: string, o: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.body !== undefined || o.raw !== undefined) headers["content-type"] = "application/json";
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.apiKey) headers["x-api-key"] = o.apiKey === true ? TEST_API_KEY : o.apiKey;
    const send = this.client.request as unknown as (
      method: string,
      url: string,
      init: Record<string, unknown>,
    ) => Promise<{ data?: unknown; error?: unknown; response: Response }>;
    const { data, error, response } = await send(method.toLowerCase(), path, {
      headers,
      parseAs: "text",
      ...(o.raw !== undefined
        ? { body: o.raw, bodySerializer: (b: unknown) => b }
        : o.body !== undefined
          ? { body: o.body }
          : {}),
    });
    const text = (data ?? error ?? "") as string;
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: response.status, body: body as T, headers: response.headers };
  }

  get = <T = any>(path: string, o?: RequestOptions) => this.request<T>("GET", path, o);

  /**
   * A handset's poll for work just queued for it: asked again (every 25 ms, for 5 s at most)
   * while it answers 204, as a handset polls again. A poll may be answered 204 while dispatch's
   * announcement of the new work is on its way to the gateway's memory of idle handsets
   * (gateway/src/http/idle-polls.ts); the next poll gets the work.
   */
  async nextWork<T = any>(token: string): Promise<ApiResponse<T>> {
    const until = Date.now() + 5_000;
    for (;;) {
      const next = await this.get<T>("/v1/device/next", { token });
      if (next.status !== 204 || Date.now() > until) return next;
      await new Promise((r) => setTimeout(r, 25));
    }
  }
  post = <T = any>(path: string, o?: RequestOptions) => this.request<T>("POST", path, o);
  patch = <T = any>(path: string, o?: RequestOptions) => this.request<T>("PATCH", path, o);
  put = <T = any>(path: string, o?: RequestOptions) => this.request<T>("PUT", path, o);
  delete = <T = any>(path: string, o?: RequestOptions) => this.request<T>("DELETE", path, o);

  /** Creates the first admin and signs it in; returns its token and id. */
  async bootstrapAdmin(login = "root", password = "root-password-1"): Promise<{ token: string; agentId: string }> {
    const { data, error, response } = await this.client.POST("/v1/agents/bootstrap", {
      params: { header: { "X-Bootstrap-Token": TEST_BOOTSTRAP_TOKEN } },
      body: { login, full_name: "Root Admin", password },
    });
    if (!data) throw new Error(`bootstrap failed: ${response.status} ${JSON.stringify(error)}`);
    return { token: await this.login(login, password), agentId: data.agent_id };
  }

  async login(login: string, password: string): Promise<string> {
    const { data, error, response } = await this.client.POST("/v1/agents/login", { body: { login, password } });
    if (!data) throw new Error(`login failed: ${response.status} ${JSON.stringify(error)}`);
    return data.token;
  }

  /** Creates an agent with the admin token and signs it in. */
  async createAgent(
    adminToken: string,
    o: { login: string; role?: "agent" | "supervisor" | "admin"; full_name?: string; password?: string },
  ): Promise<{ token: string; agentId: string; password: string }> {
    const password = o.password ?? `${o.login}-password-1`;
    const { data, error, response } = await this.client.POST("/v1/agents/admin", {
      headers: { authorization: `Bearer ${adminToken}` },
      body: { login: o.login, full_name: o.full_name ?? `Agent ${o.login}`, password, role: o.role ?? "agent" },
    });
    if (!data) throw new Error(`create agent failed: ${response.status} ${JSON.stringify(error)}`);
    return { token: await this.login(o.login, password), agentId: data.agent_id, password };
  }
}
