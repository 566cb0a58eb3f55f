// The simulation's own webhook endpoint: an HTTP server on a free port of 127.0.0.1 that keeps
// every delivery fleet sends it (the raw body and the headers, as a receiver verifies them) and
// answers as a real receiver might: mostly 200 at once, sometimes 500, sometimes only after
// fleet's timeout (WEBHOOK_TIMEOUT_MS in run.ts), so that deliveries are tried again with the
// same delivery id. The answers are drawn from a generator of its own (the actions' sequence
// does not depend on them). Deliveries are judged later, at each check (webhook-checks.ts).
import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Random } from "./random.ts";

/** One delivery as it arrived. */
export interface Received {
  /** The path it was posted to: one per registration (webhooks.ts). */
  path: string;
  /** Lower-case header names. */
  headers: Record<string, string>;
  /** The raw body (the signature is over these bytes). */
  body: string;
  /** Date.now() when it arrived. */
  at: number;
  /** What the receiver answered (0: held past fleet's timeout). */
  answered: number;
}

/** How the receiver answers a delivery. */
const ANSWERS = { ok: 85, error: 10, late: 5 } as const;

export class WebhookReceiver {
  readonly received: Received[] = [];
  private server: http.Server | undefined;
  /** How long a late answer is held (past fleet's timeout). */
  constructor(
    private readonly random: Random,
    private readonly lateMs: number,
  ) {}

  /** Listens on a free port; returns the base URL (`http://127.0.0.1:<port>`). */
  async start(): Promise<string> {
    const server = http.createServer((req, res) => void this.take(req, res));
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  private async take(req: http.IncomingMessage, res: http.ServerResponse): Promise<void> {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const headers: Record<string, string> = {};
    for (const [k, v] of Object.entries(req.headers))
      headers[k.toLowerCase()] = Array.isArray(v) ? v.join(",") : (v ?? "");
    const answer = this.random.weighted(ANSWERS);
    const r: Received = {
      path: (req.url ?? "").replace(/\?.*/, ""),
      headers,
      body: Buffer.concat(chunks).toString("utf8"),
      at: Date.now(),
      answered: answer === "ok" ? 200 : answer === "error" ? 500 : 0,
    };
    this.received.push(r);
    if (answer === "late") await new Promise((resolve) => setTimeout(resolve, this.lateMs));
    if (!res.writableEnded && !res.destroyed) res.writeHead(r.answered || 200).end();
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
