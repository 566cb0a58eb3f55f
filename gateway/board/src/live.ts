import { currentSession, setSession } from "./api.ts";

// Live hints from GET /v1/events (Server-Sent Events, gateway/src/routes/v1/events.ts): the
// stream only says what changed (kind, id, status); the pages refetch through the REST
// routes, which stay the truth. It is read with fetch so that the session token travels in
// the Authorization header (EventSource cannot send one, and a token in a URL ends up in
// logs). On every (re)connect the pages refetch what they show; after repeated failures the
// board polls instead, and keeps trying to reconnect.

export type HintKind = "operation" | "transaction" | "message" | "alert";
export interface Hint {
  kind: HintKind;
  id: string;
  status?: string;
}
export type LiveMode = "connecting" | "live" | "polling";

export const POLL_S = 15;
const HEARTBEAT_TIMEOUT_MS = 45_000;
const FAILURES_BEFORE_POLLING = 3;
/** A session holds at most 3 streams: a tab whose stream was ended for a newer one polls this long. */
const YIELDED_MS = 5 * 60_000;

type Listener = (hint: Hint | "refetch") => void;
const listeners = new Set<Listener>();
const modeListeners = new Set<(m: LiveMode) => void>();
let mode: LiveMode = "connecting";
let started = false;
let abort: AbortController | undefined;
let pollTimer: ReturnType<typeof setInterval> | undefined;
/** The server ended the last stream for a newer one of the session (`event: end`, `stream_limit`). */
let yielded = false;

export const liveMode = (): LiveMode => mode;

export function onHint(l: Listener): () => void {
  listeners.add(l);
  return () => listeners.delete(l);
}
export function onMode(l: (m: LiveMode) => void): () => void {
  modeListeners.add(l);
  return () => modeListeners.delete(l);
}

function setMode(m: LiveMode): void {
  mode = m;
  if (m === "polling" && !pollTimer) pollTimer = setInterval(() => emit("refetch"), POLL_S * 1000);
  if (m !== "polling" && pollTimer) {
    clearInterval(pollTimer);
    pollTimer = undefined;
  }
  for (const l of modeListeners) l(m);
}

function emit(h: Hint | "refetch"): void {
  for (const l of listeners) l(h);
}

/** Starts the stream for the signed-in session (once); `stopLive` ends it at sign-out. */
export function startLive(): void {
  if (started) return;
  started = true;
  void run();
}

export function stopLive(): void {
  started = false;
  abort?.abort();
  setMode("connecting");
}

async function run(): Promise<void> {
  let failures = 0;
  while (started) {
    yielded = false;
    const ok = await connectOnce();
    if (!started) return;
    if (yielded) {
      // Another tab of this session took the stream: poll, and try again much later (not at
      // once, which would end another tab's stream in turn).
      setMode("polling");
      await new Promise((r) => setTimeout(r, YIELDED_MS));
      continue;
    }
    failures = ok ? 1 : failures + 1;
    if (failures >= FAILURES_BEFORE_POLLING) setMode("polling");
    else if (mode !== "polling") setMode("connecting");
    const waitMs = Math.min(30_000, 1000 * 2 ** Math.min(failures, 5));
    await new Promise((r) => setTimeout(r, waitMs));
  }
}

/** One connection; true when it was established (and later lost). */
async function connectOnce(): Promise<boolean> {
  const session = currentSession();
  if (!session) return false;
  abort = new AbortController();
  const controller = abort;
  let watchdog: ReturnType<typeof setTimeout> | undefined;
  const feed = () => {
    clearTimeout(watchdog);
    watchdog = setTimeout(() => controller.abort(), HEARTBEAT_TIMEOUT_MS);
  };
  try {
    const res = await fetch("/v1/events", {
      headers: { authorization: `Bearer ${session.token}`, accept: "text/event-stream" },
      signal: controller.signal,
      cache: "no-store",
    });
    // A session revoked or expired: back to sign-in, as for any other 401.
    if (res.status === 401) setSession(undefined, true);
    if (!res.ok || !res.body) return false;
    setMode("live");
    emit("refetch");
    feed();
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buffer = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      feed();
      buffer += value;
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (/^event: end$/m.test(block) && block.includes('"stream_limit"')) yielded = true;
        const hint = parseBlock(block);
        if (hint) emit(hint);
      }
    }
    return true;
  } catch {
    return mode === "live";
  } finally {
    clearTimeout(watchdog);
  }
}

function parseBlock(block: string): Hint | undefined {
  let event = "";
  let data = "";
  for (const line of block.split("\n")) {
    if (line.startsWith("event:")) event = line.slice(6).trim();
    else if (line.startsWith("data:")) data += line.slice(5).trim();
  }
  if (!data || !["operation", "transaction", "message", "alert"].includes(event)) return undefined;
  try {
    const d = JSON.parse(data) as { id: string; status?: string };
    return { kind: event as HintKind, id: d.id, status: d.status };
  } catch {
    return undefined;
  }
}
