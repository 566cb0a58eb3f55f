// A simulated handset app: polls GET /v1/device/next with its device token, plays the
// ussd_steps against the simulated operator (the last step is the PIN for deposits and
// balance checks; a single step opens no dialog), checks the recipient's name before the
// PIN when partner_verified is false, and reports the outcome (POST /v1/device/outcome).
// It can be told to fail in each way the contract names. Its SMS side is a hook,
// `onDialled`, called once the outcome is reported: the evidence side forwards the
// operator's messages from there (POST /v1/device/messages).
//
// The dispatch payload carries the SIM PIN: nothing here logs it.

import { checkName } from "../../services/dispatch/src/domain/name-check.ts";
import type { OperatorName, Receipt, Screen, SimulatedOperator } from "./operator.ts";
import { Api } from "../support/api.ts";

export type DeviceOutcome =
  "ussd_ok" | "ussd_unconfirmed" | "ussd_failed" | "ussd_timeout" | "no_service" | "sim_absent" | "name_mismatch";

/** The poll's 200 payload (contract, Poll for next operation). */
export interface DispatchPayload {
  operation_id: string;
  sim_id: string;
  subscription_slot: number;
  ussd_string: string;
  ussd_steps: string[];
  expected_sender: string;
  timeout_seconds: number;
  montant: number;
  op_type: "deposit" | "withdrawal" | "balance" | "float_deposit" | "mini_statement";
  partner_verified: boolean;
  dest_name: string | null;
  msisdn_dest: string;
  operator: OperatorName;
}

/**
 * How to fail one operation.
 * - `no_service`, `sim_absent`: the dialog never opens (nothing moves).
 * - `ussd_timeout`: the dialog stalls; `afterPin` says whether the PIN (and so the money)
 *   went through first. Default: before the PIN, nothing moves.
 * - `ussd_failed`: the handset gives up before the PIN with an error screen.
 * - `ussd_unconfirmed`: the PIN is sent (money moves) but no closing screen comes back.
 * - `name_mismatch`: the confirmation screen's name is unreadable: the PIN is never sent.
 */
export type FailureMode =
  | { outcome: "ussd_timeout"; afterPin?: boolean }
  | { outcome: "no_service" | "sim_absent" | "ussd_failed" | "ussd_unconfirmed" | "name_mismatch" };

export interface DialResult {
  outcome: DeviceOutcome;
  /** Verbatim operator text of the final dialog (null when none came back). */
  ussd_response: string | null;
  failure_detail: string | null;
  /** Set when money moved or a balance was read: what the operator's SMS will say. */
  receipt?: Receipt;
  executed_at: Date;
}

export interface ReportReply {
  status: number;
  body: { operation_id?: string; status?: string; evidence_expires_at?: string | null } & Record<string, unknown>;
}

export interface PollResult {
  /** HTTP status of the poll: 200 (claimed), 204 (idle or cooldown), 409 (busy), ... */
  status: number;
  operation?: DispatchPayload;
  result?: DialResult;
  report?: ReportReply;
  body?: unknown;
}

export interface HandsetSim {
  msisdn: string;
  operator: OperatorName;
}

export interface HandsetOptions {
  /** Gateway base URL, e.g. http://127.0.0.1:8080. */
  baseUrl: string;
  /** The device token (Bearer). */
  token: string;
  operator: SimulatedOperator;
  /** sim_id → SIM; learned from GET /v1/device/sims for any SIM not listed. */
  sims?: Map<string, HandsetSim>;
  /** Decides how (whether) to fail an operation; undefined: play it honestly. */
  failWith?: (op: DispatchPayload) => FailureMode | undefined;
  /** Called after the outcome is reported: the SMS side (evidence) plugs in here. */
  onDialled?: (op: DispatchPayload, result: DialResult, report: ReportReply) => Promise<void> | void;
}

export class SimulatedHandset {
  readonly sims: Map<string, HandsetSim>;
  /** Every operation this handset dialled, with its result. */
  readonly dialled: { operation: DispatchPayload; result: DialResult; report: ReportReply }[] = [];
  private failures = new Map<string, FailureMode>();

  constructor(readonly o: HandsetOptions) {
    this.sims = o.sims ?? new Map();
  }

  /** Fails the next operation whose operation_id (or, with "*", any operation) is named. */
  failNext(operationIdOrAny: string, mode: FailureMode): void {
    this.failures.set(operationIdOrAny, mode);
  }

  /**
   * The app killed by Android and started again: what it held in memory (the failures it was
   * told to play, its client) is gone. What it keeps on the phone's storage is its caller's.
   */
  restart(): void {
    this.failures.clear();
    this.api = undefined;
  }

  /** The typed client of the gateway, checking each answer against the served OpenAPI document. */
  private api: Api | undefined;

  private async http(method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
    this.api ??= new Api(this.o.baseUrl);
    const res = await this.api.request(method, path, { token: this.o.token, body });
    return { status: res.status, body: res.body };
  }

  /** Learns the handset's SIMs (sim_id, msisdn, operator, balance) from fleet. */
  async refreshSims(registerWithOperator = true): Promise<void> {
    const res = await this.http("GET", "/v1/device/sims");
    if (res.status !== 200) throw new Error(`GET /v1/device/sims answered ${res.status}`);
    for (const s of res.body as { sim_id: string; msisdn: string; operator: OperatorName; balance: number | null }[]) {
      this.sims.set(s.sim_id, { msisdn: s.msisdn, operator: s.operator });
      if (registerWithOperator && !this.o.operator.hasSim(s.msisdn)) {
        this.o.operator.registerSim(s.msisdn, s.operator, { balance: s.balance ?? 0 });
      }
    }
  }

  /** One poll; when it claims an operation, dials it and reports the outcome. */
  async pollOnce(): Promise<PollResult> {
    const polled = await this.http("GET", "/v1/device/next");
    if (polled.status !== 200) return { status: polled.status, body: polled.body };
    const operation = polled.body as DispatchPayload;
    const result = await this.dial(operation);
    const report = await this.report(operation, result);
    this.dialled.push({ operation, result, report });
    await this.o.onDialled?.(operation, result, report);
    return { status: 200, operation, result, report };
  }

  /** Polls every `intervalMs` until `signal` aborts (or `until` says so). */
  async run(o: {
    intervalMs: number;
    signal?: AbortSignal;
    until?: () => boolean;
    onPoll?: (r: PollResult) => void;
  }): Promise<void> {
    while (!o.signal?.aborted && !(o.until?.() ?? false)) {
      try {
        o.onPoll?.(await this.pollOnce());
      } catch (err) {
        o.onPoll?.({ status: 0, body: String(err) });
      }
      await new Promise<void>((resolve) => {
        const t = setTimeout(resolve, o.intervalMs);
        o.signal?.addEventListener("abort", () => (clearTimeout(t), resolve()), { once: true });
      });
    }
  }

  async report(operation: DispatchPayload, result: DialResult): Promise<ReportReply> {
    const res = await this.http("POST", "/v1/device/outcome", {
      operation_id: operation.operation_id,
      outcome: result.outcome,
      ussd_response: result.ussd_response,
      executed_at: result.executed_at.toISOString(),
      ...(result.failure_detail ? { failure_detail: result.failure_detail } : {}),
    });
    return { status: res.status, body: res.body };
  }

  /** Plays the operation's steps against the simulated operator. */
  async dial(op: DispatchPayload): Promise<DialResult> {
    let failure = this.failures.get(op.operation_id);
    if (failure) this.failures.delete(op.operation_id);
    else if ((failure = this.failures.get("*"))) this.failures.delete("*");
    else failure = this.o.failWith?.(op);
    const done = (
      outcome: DeviceOutcome,
      ussd_response: string | null,
      extra: Partial<DialResult> = {},
    ): DialResult => ({
      outcome,
      ussd_response,
      failure_detail: null,
      executed_at: new Date(),
      ...extra,
    });
    if (failure?.outcome === "no_service") return done("no_service", null);
    if (failure?.outcome === "sim_absent") return done("sim_absent", null);
    let sim = this.sims.get(op.sim_id);
    if (!sim) {
      await this.refreshSims();
      sim = this.sims.get(op.sim_id);
    }
    if (!sim) return done("sim_absent", null, { failure_detail: `SIM ${op.sim_id} is not in this handset` });

    const session = this.o.operator.open(sim.msisdn, op.ussd_steps[0]);
    let screen: Screen = session.screen;
    const pinLast = op.op_type === "deposit" || op.op_type === "balance";
    for (let i = 1; i < op.ussd_steps.length && !screen.done; i += 1) {
      const isPin = pinLast && i === op.ussd_steps.length - 1;
      if (isPin) {
        if (failure?.outcome === "ussd_timeout" && !failure.afterPin) return done("ussd_timeout", null);
        if (failure?.outcome === "ussd_failed") {
          session.close();
          return done("ussd_failed", "Une erreur est survenue. Veuillez reessayer plus tard.");
        }
        const mustCheckName =
          op.op_type === "deposit" && (!op.partner_verified || failure?.outcome === "name_mismatch");
        if (mustCheckName) {
          const shown = failure?.outcome === "name_mismatch" ? null : session.displayedName();
          const check = checkName(op.dest_name, shown);
          if (!check.match) {
            const text = screen.text;
            session.close();
            return done("name_mismatch", text);
          }
        }
      }
      screen = session.reply(op.ussd_steps[i]);
    }
    if (failure?.outcome === "ussd_timeout") return done("ussd_timeout", null, { receipt: screen.receipt });
    if (failure?.outcome === "ussd_unconfirmed") return done("ussd_unconfirmed", null, { receipt: screen.receipt });
    if (screen.done && !screen.refused) return done("ussd_ok", screen.text, { receipt: screen.receipt });
    if (!screen.done) session.close();
    return done("ussd_failed", screen.text);
  }
}
