// The load the faults are injected under: operations created at a steady rate through the
// API key, and simulated handsets that poll, dial with the simulated operator, report the
// outcome and forward the operator's SMS. Like the real app, a handset retries its outcome
// report and its SMS until the system takes them (same body, same client message id).
//
// Every answer is recorded with the time it came back; the acknowledged writes (a create
// answered 2xx, an SMS answered 2xx) are kept for the checks against the database.
import { randomUUID } from "node:crypto";
import { call, type Reply } from "../bench/http.ts";
import { sleep } from "../infra/util.ts";
import { SimulatedHandset, type DispatchPayload } from "../simulator/handset.ts";
import { OperatorSms } from "../simulator/operator-sms.ts";
import type { SimulatedOperator } from "../simulator/operator.ts";

export const KINDS = ["create", "poll", "sms"] as const;
export type Kind = (typeof KINDS)[number];

const CALL_TIMEOUT_MS = 10_000;

export interface AckedCreate {
  requestId: string;
  operationId: string;
  at: number;
}

export interface AckedSms {
  simId: string;
  clientMessageId: string;
  /** The operation whose receipt the SMS is. */
  operationId: string;
  at: number;
}

/** Answers as they came back: per kind, the times (ms, performance.now()) of the successful ones. */
export class Ledger {
  private readonly ok: Record<Kind, number[]> = { create: [], poll: [], sms: [] };
  private readonly okMs: Record<Kind, number[]> = { create: [], poll: [], sms: [] };
  readonly failures: Record<Kind | "outcome", number> = { create: 0, poll: 0, sms: 0, outcome: 0 };
  readonly creates: AckedCreate[] = [];
  readonly sms: AckedSms[] = [];

  record(kind: Kind | "outcome", ok: boolean, ms: number): void {
    if (!ok) this.failures[kind] += 1;
    else if (kind !== "outcome") {
      this.ok[kind].push(performance.now());
      this.okMs[kind].push(ms);
    }
  }

  /** Median latency (ms) of the successful answers of one kind in [from, to). */
  median(kind: Kind, from: number, to: number): number {
    const times = this.ok[kind];
    const ms = this.okMs[kind].slice(lowerBound(times, from), lowerBound(times, to)).sort((a, b) => a - b);
    return ms[Math.floor(ms.length / 2)] ?? NaN;
  }

  /** Successful answers of one kind per second in [from, to). */
  rate(kind: Kind, from: number, to: number): number {
    const times = this.ok[kind];
    return (lowerBound(times, to) - lowerBound(times, from)) / ((to - from) / 1000);
  }
}

function lowerBound(sorted: number[], value: number): number {
  let lo = 0;
  let hi = sorted.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (sorted[mid] < value) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

export interface LoadHandset {
  token: string;
  simId: string;
  msisdn: string;
}

export interface LoadOptions {
  baseUrl: string;
  apiKey: string;
  agentId: string;
  operator: SimulatedOperator;
  handsets: LoadHandset[];
  createsPerS: number;
  pollIntervalMs: number;
}

const retryable = (r: Reply) => r.status === 0 || r.status === 429 || r.status >= 500;
const ok = (r: Reply) => r.status >= 200 && r.status < 300;

export class Load {
  readonly ledger = new Ledger();
  private running = true;
  private readonly loops: Promise<void>[] = [];
  private inFlight = 0;
  /** Each create has an amount of its own, so every SMS proves exactly one operation. */
  private amount = 1000;

  constructor(private readonly o: LoadOptions) {}

  start(): void {
    this.loops.push(this.createLoop());
    for (const h of this.o.handsets) this.loops.push(this.handsetLoop(h));
  }

  async stop(): Promise<void> {
    this.running = false;
    await Promise.all(this.loops);
    while (this.inFlight > 0) await sleep(50);
  }

  private async createLoop(): Promise<void> {
    const started = performance.now();
    for (let k = 0; this.running; k++) {
      const due = started + (k * 1000) / this.o.createsPerS - performance.now();
      if (due > 0) await sleep(due);
      // Open loop, bounded: a system that stops answering is not buried under calls.
      if (this.inFlight >= 100) continue;
      this.inFlight += 1;
      void this.createOne().finally(() => (this.inFlight -= 1));
    }
  }

  private async createOne(): Promise<void> {
    const requestId = `chaos-${randomUUID()}`;
    const r = await call(
      this.o.baseUrl,
      "POST",
      "/v1/operations",
      { "x-api-key": this.o.apiKey },
      {
        request_id: requestId,
        agent_id: this.o.agentId,
        operator: "operator_a",
        type_op: "deposit",
        montant: this.amount++,
        client: { msisdn: "670000001", nom: "Chaos Load" },
      },
      CALL_TIMEOUT_MS,
    );
    this.ledger.record("create", ok(r), r.ms);
    if (ok(r)) this.ledger.creates.push({ requestId, operationId: r.body.operation_id, at: performance.now() });
  }

  /** Sends until the system takes it (or refuses it for good); the last answer. */
  private async untilTaken(kind: Kind | "outcome", send: () => Promise<Reply>): Promise<Reply> {
    for (let attempt = 0; ; attempt++) {
      const r = await send();
      this.ledger.record(kind, ok(r), r.ms);
      if (!retryable(r) || !this.running) return r;
      await sleep(Math.min(1000, 100 * 2 ** attempt));
    }
  }

  private async handsetLoop(h: LoadHandset): Promise<void> {
    const auth = { authorization: `Bearer ${h.token}` };
    const handset = new SimulatedHandset({
      baseUrl: this.o.baseUrl,
      token: h.token,
      operator: this.o.operator,
      sims: new Map([[h.simId, { msisdn: h.msisdn, operator: "operator_a" }]]),
    });
    const sms = new OperatorSms({
      baseUrl: this.o.baseUrl,
      token: h.token,
      transport: (_token, body) =>
        this.untilTaken("sms", () => call(this.o.baseUrl, "POST", "/v1/device/messages", auth, body, CALL_TIMEOUT_MS)),
    });
    // Polls on a fixed schedule (not an interval after each answer), so that their rate does
    // not follow the latency; the handsets' polls are spread over the interval.
    let next = performance.now() + Math.random() * this.o.pollIntervalMs;
    while (this.running) {
      await sleep(Math.max(0, next - performance.now()));
      next = Math.max(next + this.o.pollIntervalMs, performance.now());
      const polled = await call(this.o.baseUrl, "GET", "/v1/device/next", auth, undefined, CALL_TIMEOUT_MS);
      // 204 (nothing to do) and 409 (this handset already has a running operation) are answers too.
      this.ledger.record("poll", polled.status === 200 || polled.status === 204 || polled.status === 409, polled.ms);
      if (polled.status !== 200) continue;
      const op = polled.body as DispatchPayload;
      const result = await handset.dial(op);
      await this.untilTaken("outcome", () =>
        call(
          this.o.baseUrl,
          "POST",
          "/v1/device/outcome",
          auth,
          {
            operation_id: op.operation_id,
            outcome: result.outcome,
            ussd_response: result.ussd_response,
            executed_at: result.executed_at.toISOString(),
          },
          CALL_TIMEOUT_MS,
        ),
      );
      for (const text of sms.smsFor(op, result)) {
        const [delivery] = await sms.deliver(text);
        if (delivery && delivery.status >= 200 && delivery.status < 300) {
          this.ledger.sms.push({
            simId: text.simId,
            clientMessageId: text.clientMessageId,
            operationId: op.operation_id,
            at: performance.now(),
          });
        }
      }
      // Done with it: the next poll goes at once, as the app does.
      next = performance.now();
    }
  }
}
