import createClient, { type Middleware } from "openapi-fetch";
import type { paths } from "../../src/openapi.d.ts";
import { known, t } from "./i18n.ts";

// The typed client of the /v1 API, generated from the document the gateway serves
// (npm run generate:client writes gateway/src/openapi.d.ts): a route or field the API
// does not have does not compile. The board is served by the gateway, so calls are
// same-origin and the Content-Security-Policy allows them.

export interface Session {
  token: string;
  agentId: string;
  role: "agent" | "supervisor" | "admin" | string;
  expiresAt: string;
  mustChangePassword: boolean;
}

const SESSION_KEY = "board.session";
const channel = typeof BroadcastChannel === "function" ? new BroadcastChannel("board.session") : undefined;
const listeners = new Set<(s: Session | undefined, expired: boolean) => void>();

let session: Session | undefined = read();

function read(): Session | undefined {
  try {
    const s = JSON.parse(sessionStorage.getItem(SESSION_KEY) ?? "null") as Session | null;
    return s && Date.parse(s.expiresAt) > Date.now() ? s : undefined;
  } catch {
    return undefined;
  }
}

export const currentSession = (): Session | undefined => session;

export function onSession(listener: (s: Session | undefined, expired: boolean) => void): () => void {
  listeners.add(listener);
  return () => listeners.delete(listener);
}

function apply(s: Session | undefined, expired = false): void {
  session = s;
  if (s) sessionStorage.setItem(SESSION_KEY, JSON.stringify(s));
  else sessionStorage.removeItem(SESSION_KEY);
  for (const l of listeners) l(s, expired);
}

/** Sets (or clears) the session here and in the other tabs of this browser; `expired` when the server ended it. */
export function setSession(s: Session | undefined, expired = false): void {
  apply(s, expired);
  channel?.postMessage({ kind: "session", session: s ?? null });
}

// sessionStorage is per tab: a new tab asks the open ones for the session, so that one
// sign-in serves every tab, and a sign-out in one tab signs them all out.
if (channel) {
  channel.onmessage = (e: MessageEvent) => {
    const m = e.data as { kind: string; session?: Session | null };
    if (m.kind === "ask" && session) channel.postMessage({ kind: "session", session });
    if (m.kind === "session") {
      const incoming = m.session ?? undefined;
      if (incoming?.token !== session?.token) apply(incoming);
    }
  };
  if (!session) channel.postMessage({ kind: "ask" });
}

const auth: Middleware = {
  onRequest({ request }) {
    if (session) request.headers.set("authorization", `Bearer ${session.token}`);
    return request;
  },
  onResponse({ response, request }) {
    // Any 401 (expired or revoked session) sends the user back to sign-in; the login route's
    // own 401 (a wrong password) is an answer to show, not a lost session.
    if (response.status === 401 && !new URL(request.url).pathname.endsWith("/agents/login"))
      setSession(undefined, true);
    return response;
  },
};

export const api = createClient<paths>({ baseUrl: location.origin });
api.use(auth);

/** An error body of the API: `{detail, code, context}` (detail may list validation problems). */
export interface ApiError {
  detail?: unknown;
  code?: string;
  context?: { reason?: string; [k: string]: unknown };
}

/** What the user reads of a refusal: the reason (or the code) in their language, the detail beside. */
export function refusal(error: unknown, status?: number): { title: string; detail: string } {
  const e = (error ?? {}) as ApiError;
  const reason = e.context?.reason;
  const rKey = `r.${reason}`;
  const cKey = `code.${e.code}`;
  const title = known(rKey)
    ? t(rKey)
    : known(cKey)
      ? t(cKey)
      : status === undefined
        ? t("err.network")
        : t("code.refused");
  const detail = Array.isArray(e.detail)
    ? e.detail.map((d: { field?: string; message?: string }) => `${d.field ?? ""}: ${d.message ?? ""}`).join("; ")
    : typeof e.detail === "string"
      ? e.detail
      : "";
  return { title, detail: [detail, reason && reason !== e.code ? `(${reason})` : ""].filter(Boolean).join(" ") };
}

/** The outcome of one call, as the pages show it. */
export type Outcome = { ok: true; message: string } | { ok: false; title: string; detail: string };

/** Runs a typed call: its data, or the refusal as the user reads it. */
export async function call<T>(
  run: () => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; outcome?: undefined } | { data?: undefined; outcome: Outcome }> {
  try {
    const r = await run();
    if (r.response.ok) return { data: r.data as T };
    return { outcome: { ok: false, ...refusal(r.error, r.response.status) } };
  } catch {
    return { outcome: { ok: false, ...refusal(undefined) } };
  }
}
