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

/** A thin HTTP client of the gateway for tests: status, parsed body, headers. */
export class Api {
  constructor(readonly baseUrl: string) {}

  async request<T = any>(method: string, path: string, o: RequestOptions = {}): Promise<ApiResponse<T>> {
    const headers: Record<string, string> = { ...o.headers };
    if (o.body !== undefined || o.raw !== undefined) headers["content-type"] = "application/json";
    if (o.token) headers.authorization = `Bearer ${o.token}`;
    if (o.apiKey) headers["x-api-key"] = o.apiKey === true ? TEST_API_KEY : o.apiKey;
    const res = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: o.raw ?? (o.body !== undefined ? JSON.stringify(o.body) : undefined),
    });
    const text = await res.text();
    let body: unknown = text;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      /* not JSON */
    }
    return { status: res.status, body: body as T, headers: res.headers };
  }

  get = <T = any>(path: string, o?: RequestOptions) => this.request<T>("GET", path, o);
  post = <T = any>(path: string, o?: RequestOptions) => this.request<T>("POST", path, o);
  patch = <T = any>(path: string, o?: RequestOptions) => this.request<T>("PATCH", path, o);
  put = <T = any>(path: string, o?: RequestOptions) => this.request<T>("PUT", path, o);
  delete = <T = any>(path: string, o?: RequestOptions) => this.request<T>("DELETE", path, o);

  /** Creates the first admin and signs it in; returns its token and id. */
  async bootstrapAdmin(login = "root", password = "root-password-1"): Promise<{ token: string; agentId: string }> {
    const created = await this.post("/v1/agents/bootstrap", {
      headers: { "x-bootstrap-token": TEST_BOOTSTRAP_TOKEN },
      body: { login, full_name: "Root Admin", password },
    });
    if (created.status !== 201) throw new Error(`bootstrap failed: ${created.status} ${JSON.stringify(created.body)}`);
    return { token: await this.login(login, password), agentId: created.body.agent_id };
  }

  async login(login: string, password: string): Promise<string> {
    const res = await this.post("/v1/agents/login", { body: { login, password } });
    if (res.status !== 200) throw new Error(`login failed: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body.token;
  }

  /** Creates an agent with the admin token and signs it in. */
  async createAgent(
    adminToken: string,
    o: { login: string; role?: "agent" | "supervisor" | "admin"; full_name?: string; password?: string },
  ): Promise<{ token: string; agentId: string; password: string }> {
    const password = o.password ?? `${o.login}-password-1`;
    const res = await this.post("/v1/agents/admin", {
      token: adminToken,
      body: { login: o.login, full_name: o.full_name ?? `Agent ${o.login}`, password, role: o.role ?? "agent" },
    });
    if (res.status !== 201) throw new Error(`create agent failed: ${res.status} ${JSON.stringify(res.body)}`);
    return { token: await this.login(o.login, password), agentId: res.body.agent_id, password };
  }
}
