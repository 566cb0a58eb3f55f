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
  channel?.postMessage({ kind: "session", session: s ?? null, expired });
}

// sessionStorage is per tab: a new tab asks the open ones for the session, so that one
// sign-in serves every tab, and a sign-out in one tab signs them all out.
if (channel) {
  channel.onmessage = (e: MessageEvent) => {
    const m = e.data as { kind: string; session?: Session | null; expired?: boolean };
    if (m.kind === "ask" && session) channel.postMessage({ kind: "session", session });
    if (m.kind === "session") {
      // A session the server ended in another tab ended here too: this tab says so as well.
      const incoming = m.session ?? undefined;
      if (incoming?.token !== session?.token) apply(incoming, m.expired === true && !incoming);
    }
  };
  if (!session) channel.postMessage({ kind: "ask" });
}

/** Stops this copy of the module from speaking for the session to other tabs (the page hands it to the app). */
export function closeSessionChannel(): void {
  channel?.close();
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

/**
 * The validation problems of a 422 (`detail: [{field, message}]`) as a person reads them: the
 * fields by their names on screen, never the schema's messages.
 */
function fieldsOf(detail: { field?: string }[]): string {
  const labels = new Set<string>();
  for (const d of detail) {
    const parts = (d.field ?? "")
      .split(".")
      .filter((p) => p !== "body" && p !== "query" && p !== "path" && !/^\d+$/.test(p));
    const name = parts.at(-1) ?? "";
    const key = `f.${name}`;
    labels.add(known(key) ? t(key) : t("f.other"));
  }
  return t("v.checkFields", { fields: [...labels].join(", ") });
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
    ? fieldsOf(e.detail as { field?: string }[])
    : typeof e.detail === "string"
      ? e.detail
      : "";
  return { title, detail: [detail, reason && reason !== e.code ? `(${reason})` : ""].filter(Boolean).join(" ") };
}

/** The outcome of one call, as the pages show it (`status` absent when no answer came). */
export type Outcome = { ok: true; message: string } | { ok: false; title: string; detail: string; status?: number };

/** Runs a typed call: its data, or the refusal as the user reads it. */
export async function call<T>(
  run: () => Promise<{ data?: T; error?: unknown; response: Response }>,
): Promise<{ data: T; outcome?: undefined } | { data?: undefined; outcome: Outcome }> {
  try {
    const r = await run();
    if (r.response.ok) return { data: r.data as T };
    return { outcome: { ok: false, ...refusal(r.error, r.response.status), status: r.response.status } };
  } catch {
    return { outcome: { ok: false, ...refusal(undefined) } };
  }
}

/** A failure that may heal by itself (no answer, the server failing or busy): worth trying again. */
export const transient = (o?: Outcome): boolean =>
  !!o && !o.ok && (o.status === undefined || o.status === 408 || o.status === 429 || o.status >= 500);

// Creates keyed by a request id (an operation, a retry): the id is kept, here and across a
// reload of this tab, from before the request leaves until a definite answer comes back. A
// 5xx or no answer at all may or may not have taken effect: "send again" reuses the id, and
// the server answers what was done (409 with the existing operation) rather than doing it twice.

const PENDING_KEY = "board.pending";

/** A create whose outcome is not known yet: its request id and the form as it was sent. */
export interface Pending {
  requestId: string;
  values: Record<string, string>;
}

function pendingAll(): Record<string, Pending> {
  try {
    return (JSON.parse(sessionStorage.getItem(PENDING_KEY) ?? "{}") as Record<string, Pending>) ?? {};
  } catch {
    return {};
  }
}

/** The create of this kind still waiting for a definite answer, if any. */
export const pendingRequest = (kind: string): Pending | undefined => pendingAll()[kind];

function keep(kind: string, p: Pending | undefined): void {
  const all = pendingAll();
  if (p) all[kind] = p;
  else delete all[kind];
  sessionStorage.setItem(PENDING_KEY, JSON.stringify(all));
}

/** What a create keyed by a request id came to. */
export type Sent<T> =
  { data: T; earlier: boolean; outcome?: undefined } | { data?: undefined; outcome: Outcome; unknown: boolean };

/**
 * Sends a create keyed by a request id: the id of the create of this `kind` still pending
 * if there is one, else a new one. A 2xx, or a 409 carrying what the first sending made
 * (`earlier`), is the answer; a 409 request_id_reused means the first sending was made with
 * other values; any other 4xx a refusal (nothing was made): each ends the request. A 5xx or
 * no answer keeps it (`unknown`).
 */
export async function sendOnce<T extends object>(
  kind: string,
  values: Record<string, string>,
  run: (requestId: string) => Promise<{ data?: T; error?: unknown; response: Response }>,
  isMade: (body: unknown) => body is T,
): Promise<Sent<T>> {
  const requestId = pendingRequest(kind)?.requestId ?? crypto.randomUUID();
  keep(kind, { requestId, values });
  let r: { data?: T; error?: unknown; response: Response };
  try {
    r = await run(requestId);
  } catch {
    return { outcome: unknownOutcome(undefined), unknown: true };
  }
  const status = r.response.status;
  if (status >= 500) return { outcome: unknownOutcome(status), unknown: true };
  keep(kind, undefined);
  if (r.response.ok) return { data: r.data as T, earlier: false };
  if (status === 409 && isMade(r.error)) return { data: r.error, earlier: true };
  if (status === 409 && (r.error as ApiError | undefined)?.context?.reason === "request_id_reused")
    return { outcome: { ok: false, title: t("send.reused"), detail: "", status }, unknown: false };
  return { outcome: { ok: false, ...refusal(r.error, status), status }, unknown: false };
}

const unknownOutcome = (status?: number): Outcome => ({
  ok: false,
  title: t("send.unknown"),
  detail: t("send.unknownSafe"),
  status,
});

/** The outcome to show for a create still pending (after a reload, or when its form opens again). */
export const pendingOutcome = (): Outcome => unknownOutcome(503);
