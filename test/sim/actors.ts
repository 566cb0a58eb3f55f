// The actors of the simulation, driven through the gateways only: automation creating
// operations, handsets, the operator's network (and forgers), agents at the board, admins;
// intake's transactions are in intake.ts, wording rules, grants and demotions in admins.ts.
// Every choice (which actor, which action, its inputs, which target among those known at that
// moment) is drawn from one seeded generator, synchronously, when the action is chosen: one
// seed gives one sequence of actions and inputs; only their timing differs from run to run.
import { failure as failureText, depositConfirmation } from "../../services/evidence/src/domain/sms-templates.ts";
import { sleep } from "../infra/util.ts";
import { SimulatedHandset, type DialResult, type DispatchPayload, type FailureMode } from "../simulator/handset.ts";
import { OperatorSms, referenceOf, type OutgoingSms, type SmsFault } from "../simulator/operator-sms.ts";
import { depositFee, type OperatorName, type SimulatedOperator } from "../simulator/operator.ts";
import type { AckedCreate, AckedSms } from "../chaos/load.ts";
import type { Random } from "./random.ts";
import { ADMIN_ACTIONS, ADMIN_ACTOR_OF, Admins, type AdminAction } from "./admins.ts";
import {
  ACTIVE,
  FORGER_NUMBERS,
  SENDER_OF,
  customersOf,
  type Balances,
  type CreateRecord,
  type KnownOperation,
  type OperationRow,
  type SimAgent,
  type SimContext,
} from "./context.ts";
import { INTAKE_ACTIONS, INTAKE_ACTOR_OF, Intake, type IntakeAction } from "./intake.ts";
import { LIMIT_ACTIONS, LIMIT_ACTOR_OF, Limits, type LimitAction } from "./limits.ts";
import { MATCHING_ACTIONS, MATCHING_ACTOR_OF, Matching, type MatchingAction } from "./matching.ts";
import { DRIFT_SHARE, driftText, type DriftPick, type DriftedText } from "./drift.ts";
import { RESTART_STAGES, Restarts } from "./restarts.ts";

export type { CreateRecord, KnownOperation, OperationRow } from "./context.ts";

const CALL_TIMEOUT_MS = 10_000;
/** Tries of one call when the connection goes or the gateway answers 503 (with the same body). */
const RETRIES = 6;

/** One answer of the gateway, as the checks need it. */
export interface Answer {
  status: number;
  body: any;
  retryAfter: string | null;
  /** performance.now() when it came back. */
  at: number;
  route: string;
}

export interface SimHandset {
  index: number;
  deviceId: string;
  token: string;
  simId: string;
  msisdn: string;
  /** Its SIM's network (default operator_a). */
  operator?: OperatorName;
  /** While its token is revoked (until an admin issues a new one). */
  revoked: boolean;
  /** While it holds a claimed operation. */
  busy: boolean;
  handset: SimulatedHandset;
  sms: OperatorSms;
}

export interface ActorsOptions {
  gatewayUrls: string[];
  apiKey: string;
  random: Random;
  operator: SimulatedOperator;
  handsets: SimHandset[];
  adminToken: string;
  /** A second admin: a wording rule that can confirm is activated by an admin who did not draft it. */
  secondAdminToken: string;
  /** Agents at the board: the first is never deactivated. */
  agents: SimAgent[];
  /** Where the simulation's webhook receiver listens (admins register webhooks to it). */
  webhookBaseUrl?: string;
  /** The contact of a customer's number (its operations carry it as contact_id), if any. */
  contactOf?: (msisdn: string) => string | undefined;
  /** The current rows of the operations, by id. */
  rows: () => Map<string, OperationRow>;
  /** The SIMs' measured balances as fleet holds them, read just before a create (see invariants). */
  snapshotBalances: () => Promise<Balances>;
  onCreate: (c: CreateRecord) => void;
  /** An entity's history line: `ids` are the operations, SIMs, messages it concerns. */
  note: (ids: string[], line: string) => void;
  log: (s: string) => void;
}

export const ACTIONS = {
  // automation
  create: 18,
  replaySame: 3,
  replayChanged: 3,
  retry: 8,
  // handsets
  poll: 18,
  repeatReport: 3,
  restartApp: 3,
  // the operator's network and forgers
  releaseDelayed: 6,
  refusal: 4,
  forger: 5,
  moneyReceived: 2,
  promotion: 1,
  // agents at the board
  attach: 10,
  settle: 7,
  cancel: 6,
  dismiss: 2,
  // admins
  arbitrate: 4,
  measureBalance: 6,
  breaker: 1,
  replaceToken: 2,
  revokeToken: 1,
  deactivateAgent: 0.5,
  ...INTAKE_ACTIONS,
  ...ADMIN_ACTIONS,
  ...MATCHING_ACTIONS,
  ...LIMIT_ACTIONS,
} as const;
export type Action = keyof typeof ACTIONS;
export const ACTOR_OF: Record<Action, string> = {
  create: "automation",
  replaySame: "automation",
  replayChanged: "automation",
  retry: "automation",
  poll: "handset",
  repeatReport: "handset",
  restartApp: "handset",
  releaseDelayed: "operator",
  refusal: "operator",
  forger: "forger",
  moneyReceived: "operator",
  promotion: "operator",
  attach: "agent",
  settle: "agent",
  cancel: "agent",
  dismiss: "agent",
  arbitrate: "admin",
  measureBalance: "admin",
  breaker: "admin",
  replaceToken: "admin",
  revokeToken: "admin",
  deactivateAgent: "admin",
  ...INTAKE_ACTOR_OF,
  ...ADMIN_ACTOR_OF,
  ...MATCHING_ACTOR_OF,
  ...LIMIT_ACTOR_OF,
};

const NO_EVIDENCE_LIKE = ["no_evidence"];

/** A handset's network: operator_a unless it says otherwise. */
export const networkOf = (h: { operator?: OperatorName }): OperatorName => h.operator ?? "operator_a";

/**
 * A forged deposit confirmation in the operator's wording: operator_b's prints a fee (its
 * wording is known in French only, and prints the customer's number without the country code).
 */
function forgedDeposit(
  network: OperatorName,
  o: { amount: number; balanceAfter: number; pick: number; english: boolean; at: Date; ref: string },
): string {
  const customers = customersOf(network);
  const customer = customers[o.pick % customers.length];
  return depositConfirmation(network, {
    amount: o.amount,
    fee: network === "operator_b" ? depositFee(o.amount) : null,
    balanceAfter: o.balanceAfter,
    ref: referenceOf(network, o.ref, o.at),
    msisdn: network === "operator_b" ? customer : `237${customer}`,
    name: "CLIENT SIMULE",
    at: o.at,
    language: o.english && network === "operator_a" ? "en" : "fr",
  });
}

/** Debits whose money may have left without a measured balance saying so: creates aim at their SIMs. */
const OUTSTANDING = ["no_evidence", "awaiting_evidence", "running"];
const GRANT_MAX_AMOUNT = 100_000;

export class Actors {
  readonly answers: Answer[] = [];
  /** Calls in flight per gateway (a gateway is stopped while some are). */
  readonly inFlight = new Map<string, number>();
  /** Calls tried again after a reset connection or a 503. */
  retries = 0;
  readonly creates: AckedCreate[] = [];
  readonly sms: (AckedSms & { sender: string; kind: string })[] = [];
  /** Decisions answered 200: operation → outcome. */
  readonly decisions: { operationId: string; route: string; outcome: string }[] = [];
  readonly known: KnownOperation[] = [];
  readonly counts: Record<string, number> = {};
  private readonly dialled: { handset: number; body: Record<string, unknown>; operationId: string }[] = [];
  private readonly delayed: { handset: number; sms: OutgoingSms }[] = [];
  private sequence = 0;
  /** Checks of answers by invariant index (a replay, a revoked right, a reserved request id). */
  readonly checked: Record<number, number> = {};
  private breakerOn = false;
  readonly intake: Intake;
  readonly admins: Admins;
  readonly matching: Matching;
  readonly limits: Limits;
  /** The app restarts (restarts.ts). */
  readonly restarts: Restarts<SimHandset>;
  /** The operator's texts sent drifted (drift.ts). */
  readonly drifted: DriftedText[] = [];

  constructor(private readonly o: ActorsOptions) {
    const context: SimContext = {
      random: o.random,
      http: (gw, method, path, auth, body) => this.http(gw, method, path, auth, body),
      gatewayUrls: o.gatewayUrls,
      adminToken: o.adminToken,
      secondAdminToken: o.secondAdminToken,
      agents: o.agents,
      agentAt: (pick) => this.agent(pick),
      simIds: () => o.handsets.map((h) => h.simId),
      rows: o.rows,
      snapshotBalances: o.snapshotBalances,
      accepted: (op, record) => this.accepted(op, record),
      forward: (handset, sms, what, about) => this.forward(o.handsets[handset], sms, what, about),
      handsetCount: o.handsets.length,
      simOperators: () => o.handsets.map(networkOf),
      webhookBaseUrl: o.webhookBaseUrl,
      checked: (invariant) => void (this.checked[invariant] = (this.checked[invariant] ?? 0) + 1),
      note: o.note,
      log: o.log,
    };
    this.intake = new Intake(context);
    this.admins = new Admins(context);
    this.matching = new Matching(context, {
      operator: o.operator,
      msisdnOf: (simId) => o.handsets.find((h) => h.simId === simId)?.msisdn,
    });
    this.limits = new Limits(context);
    this.restarts = new Restarts<SimHandset>({
      http: (gw, method, path, auth, body) => this.http(gw, method, path, auth, body),
      forward: (h, sms, what, about) => this.forward(h, sms, what, about),
      textsFor: (h, op, result, drift) => h.sms.smsFor(op, result).map((t, i) => this.drift(t, drift, i)),
      reported: (h, body, operationId) => void this.dialled.push({ handset: h.index, body, operationId }),
      poll: (gw, h) => this.poll(gw, h, "honest", 0, "none", false, null),
      note: o.note,
    });
  }

  private get r(): Random {
    return this.o.random;
  }

  /** The share of the SIMs on operator_b: automation's creates name it in that proportion. */
  private get shareB(): number {
    const all = this.o.handsets;
    return all.length ? all.filter((h) => networkOf(h) === "operator_b").length / all.length : 0;
  }

  /** The network of a SIM of the fleet (operator_a for one the simulation does not hold). */
  private networkOfSim(simId: string): OperatorName {
    const h = this.o.handsets.find((x) => x.simId === simId);
    return h ? networkOf(h) : "operator_a";
  }

  /** Chooses the next action and its inputs now; the returned promise runs it. */
  next(): { action: Action; run: () => Promise<void> } {
    const action = this.r.weighted(ACTIONS);
    this.counts[action] = (this.counts[action] ?? 0) + 1;
    const n = ++this.sequence;
    const gateway = this.o.gatewayUrls[this.r.int(this.o.gatewayUrls.length)];
    const run = this.prepare(action, n, gateway);
    return { action, run };
  }

  /**
   * One call through a gateway. A connection reset or refused (a gateway stopped mid-request)
   * and a 503 are retried as a client would, with the same body (so the same request id, client
   * message id or decision), on the next gateway, a few times; every answer is recorded.
   */
  async http(
    gateway: string,
    method: string,
    path: string,
    auth: { token?: string; apiKey?: boolean },
    body?: unknown,
    route = `${method} ${path.replace(/[0-9a-f-]{36}|[0-9a-f]{32}/g, ":id").replace(/\?.*/, "")}`,
  ): Promise<Answer> {
    const urls = this.o.gatewayUrls;
    let gw = gateway;
    for (let attempt = 1; ; attempt++) {
      const { answer, retriable } = await this.once(gw, method, path, auth, body, route);
      if (!retriable || attempt >= RETRIES) return answer;
      this.retries += 1;
      const after = Number(answer.retryAfter);
      await sleep(Math.min(2000, Number.isFinite(after) && after > 0 ? after * 1000 : 300 * attempt));
      gw = urls[(urls.indexOf(gw) + 1) % urls.length] ?? gw;
    }
  }

  private async once(
    gateway: string,
    method: string,
    path: string,
    auth: { token?: string; apiKey?: boolean },
    body: unknown,
    route: string,
  ): Promise<{ answer: Answer; retriable: boolean }> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers["content-type"] = "application/json";
    if (auth.token) headers.authorization = `Bearer ${auth.token}`;
    if (auth.apiKey) headers["x-api-key"] = this.o.apiKey;
    let a: Answer;
    let retriable = false;
    this.inFlight.set(gateway, (this.inFlight.get(gateway) ?? 0) + 1);
    try {
      const res = await fetch(gateway + path, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
      });
      const text = await res.text();
      let parsed: unknown = text;
      try {
        parsed = text ? JSON.parse(text) : undefined;
      } catch {
        /* not JSON */
      }
      a = {
        status: res.status,
        body: parsed,
        retryAfter: res.headers.get("retry-after"),
        at: performance.now(),
        route,
      };
      retriable = res.status === 503;
    } catch (err) {
      a = { status: 0, body: String(err), retryAfter: null, at: performance.now(), route };
      // Not a call that ran out of time (it may still be running): the connection went.
      retriable = (err as Error).name !== "TimeoutError";
    } finally {
      this.inFlight.set(gateway, (this.inFlight.get(gateway) ?? 1) - 1);
    }
    this.answers.push(a);
    return { answer: a, retriable };
  }

  private rowsWhere(pred: (r: OperationRow) => boolean): OperationRow[] {
    return [...this.o.rows().values()].filter(pred).sort((a, b) => a.operation_id.localeCompare(b.operation_id));
  }

  /** The owner of the operations most of the time (only it, supervisors and admins may act on them), else another. */
  private agent(i: number) {
    const active = this.o.agents.filter((a) => a.active);
    return i < 70 ? this.o.agents[0] : active[i % active.length];
  }

  private prepare(action: Action, n: number, gw: string): () => Promise<void> {
    if (action in INTAKE_ACTIONS) return this.intake.prepare(action as IntakeAction, n, gw);
    if (action in ADMIN_ACTIONS) return this.admins.prepare(action as AdminAction, n, gw);
    if (action in MATCHING_ACTIONS) return this.matching.prepare(action as MatchingAction, n, gw);
    if (action in LIMIT_ACTIONS) return this.limits.prepare(action as LimitAction, n, gw);
    const r = this.r;
    const note = this.o.note;
    switch (action) {
      case "create": {
        const amount = 1000 * (1 + r.int(25)) + (r.chance(0.5) ? 0 : 500);
        const balance = r.chance(0.08);
        // The operator_b SIMs get their share of the creates (their deposits print a fee).
        const network = r.chance(this.shareB) ? "operator_b" : "operator_a";
        const customer = r.pick(customersOf(network))!;
        const body = {
          request_id: `sim-${this.r.seed}-${n}`,
          agent_id: this.o.agents[0].agentId,
          operator: network,
          type_op: balance ? "balance" : "deposit",
          montant: balance ? 1 : amount,
          client: { msisdn: customer, nom: "Client Simule" },
          ...(this.o.contactOf?.(customer) ? { contact_id: this.o.contactOf(customer) } : {}),
        };
        // Half the deposits aim at the SIM with the most debits outstanding, near its free balance.
        const aim = !balance && r.chance(0.5);
        const edge = r.float();
        return () => (aim ? this.aimedCreate(gw, body, edge) : this.create(gw, body));
      }
      case "replaySame":
      case "replayChanged": {
        const k = this.known[r.int(Math.max(1, this.known.length))];
        const delta = 500 * (1 + r.int(4));
        if (!k) return async () => undefined;
        const body = action === "replaySame" ? k.body : { ...k.body, montant: Number(k.body.montant) + delta };
        return async () => {
          const a = await this.http(gw, "POST", "/v1/operations", { apiKey: true }, body);
          note([k.operationId], `${action} of ${k.requestId} → ${a.status} ${a.body?.operation_id ?? ""}`);
          this.checked[7] = (this.checked[7] ?? 0) + 1;
          if ((a.status === 202 || a.status === 409) && a.body?.operation_id && a.body.operation_id !== k.operationId)
            note([k.operationId], `VIOLATION-CANDIDATE replay answered another operation ${a.body.operation_id}`);
        };
      }
      case "retry": {
        const candidates = this.rowsWhere((x) => ["failed", "rejected", "no_evidence"].includes(x.status));
        const target = r.pick(candidates);
        const k = target && this.known.find((x) => x.operationId === target.operation_id);
        if (!target || !k) return async () => undefined;
        const body = { ...k.body, request_id: `sim-${this.r.seed}-${n}-retry`, parent_operation_id: k.operationId };
        return () => this.create(gw, body, k.operationId);
      }
      case "poll": {
        const h = this.o.handsets[r.int(this.o.handsets.length)];
        const mode = r.weighted({
          honest: 50,
          timeoutAfterPin: 12,
          timeoutBeforePin: 5,
          unconfirmed: 8,
          failed: 5,
          noService: 5,
          nameMismatch: 3,
        });
        const delayMs = r.chance(0.3) ? 500 + r.int(3000) : 0;
        const fault = r.weighted({ none: 45, lost: 8, delayed: 22, dupHandset: 8, dupOperator: 8, reordered: 9 });
        const repeat = r.chance(0.15);
        const drift = this.driftPick(n);
        return () => this.poll(gw, h, mode, delayMs, fault, repeat, drift);
      }
      case "restartApp": {
        const h = this.o.handsets[r.int(this.o.handsets.length)];
        const stage = r.weighted(RESTART_STAGES);
        const pauseMs = 500 + r.int(2500);
        const drift = this.driftPick(n);
        return () => this.restarts.restart(gw, h, stage, pauseMs, drift);
      }
      case "repeatReport": {
        const d = this.dialled[r.int(Math.max(1, this.dialled.length))];
        const outcome = r.pick(["ussd_ok", "ussd_failed", "no_service", "ussd_timeout"] as const)!;
        const same = r.chance(0.5);
        if (!d) return async () => undefined;
        const h = this.o.handsets[d.handset];
        const body = same ? d.body : { ...d.body, outcome };
        return async () => {
          const a = await this.http(gw, "POST", "/v1/device/outcome", { token: h.token }, body);
          note([d.operationId], `handset ${h.index} reports again ${String(body.outcome)} → ${a.status}`);
        };
      }
      case "releaseDelayed": {
        const i = r.int(Math.max(1, this.delayed.length));
        return async () => {
          const [d] = this.delayed.splice(i, 1);
          if (d) await this.forward(this.o.handsets[d.handset], d.sms, "late");
        };
      }
      case "refusal":
      case "forger": {
        const h = this.o.handsets[r.int(this.o.handsets.length)];
        const network = networkOf(h);
        const english = r.chance(0.5);
        const sender = action === "forger" ? r.pick(FORGER_NUMBERS)! : SENDER_OF[network];
        const amountPick = r.int(1000);
        const balanceAfter = 10_000 + r.int(200) * 500;
        const drift = action === "refusal" ? this.driftPick(n) : null;
        return async () => {
          const open = this.rowsWhere(
            (x) =>
              x.sim_id === h.simId && [...ACTIVE, ...NO_EVIDENCE_LIKE].includes(x.status) && x.op_type === "deposit",
          );
          const op = open[amountPick % Math.max(1, open.length)];
          const amount = op?.montant ?? 1000 * (1 + (amountPick % 25));
          const at = new Date();
          const raw =
            action === "refusal"
              ? failureText(network, { language: english ? "en" : "fr", amount })
              : forgedDeposit(network, { amount, balanceAfter, pick: amountPick, english, at, ref: `forged-${n}` });
          const sms: OutgoingSms = {
            simId: h.simId,
            operator: network,
            sender,
            raw,
            receivedAt: at,
            clientMessageId: `sim-${this.r.seed}-${n}`,
            about: { kind: action === "refusal" ? "refusal" : "deposit", amount, operationId: op?.operation_id },
          };
          await this.forward(h, this.drift(sms, drift), action === "refusal" ? "refusal" : "forged", op?.operation_id);
        };
      }
      case "moneyReceived":
      case "promotion": {
        const h = this.o.handsets[r.int(this.o.handsets.length)];
        const amount = 1000 * (1 + r.int(20));
        const drift = action === "moneyReceived" ? this.driftPick(n) : null;
        return async () => {
          if (action === "promotion")
            return void (await this.forward(h, h.sms.promotionSms(h.simId, networkOf(h)), "promotion"));
          const balance = this.o.operator.balanceOf(h.msisdn) + amount;
          this.o.operator.setBalance(h.msisdn, balance);
          await this.forward(
            h,
            this.drift(h.sms.movement(h.simId, networkOf(h), { amount, balanceAfter: balance }), drift),
            "money received",
          );
        };
      }
      case "attach": {
        const agentPick = r.int(100);
        const evidencePick = r.int(1000);
        const opPick = r.int(1000);
        return async () => {
          const agent = this.agent(agentPick);
          const list = await this.http(gw, "GET", "/v1/evidences?unmatched=true&all=true&limit=250", {
            token: agent.token,
          });
          if (list.status !== 200 || !Array.isArray(list.body) || list.body.length === 0) return;
          const evidences = [...(list.body as { evidence_id?: string; id?: string; sim_id: string }[])].sort((a, b) =>
            String(a.evidence_id ?? a.id).localeCompare(String(b.evidence_id ?? b.id)),
          );
          const ev = evidences[evidencePick % evidences.length];
          const evidenceId = String(ev.evidence_id ?? ev.id);
          const ops = this.rowsWhere(
            (x) => x.sim_id === ev.sim_id && [...ACTIVE, ...NO_EVIDENCE_LIKE].includes(x.status),
          );
          const op = ops[opPick % Math.max(1, ops.length)];
          if (!op) return;
          const a = await this.http(
            gw,
            "POST",
            `/v1/operations/${op.operation_id}/evidence`,
            { token: agent.token },
            {
              evidence_id: evidenceId,
            },
          );
          note(
            [op.operation_id, evidenceId, ev.sim_id],
            `agent ${agent.login} attaches message ${evidenceId} to ${op.operation_id} (${op.status}, ${op.montant} F) → ${a.status} ${a.body?.status ?? a.body?.context?.reason ?? ""}`,
          );
          if (a.status === 200)
            this.decisions.push({ operationId: op.operation_id, route: "attach", outcome: "confirmed" });
        };
      }
      case "settle":
      case "arbitrate": {
        const pick = r.int(1000);
        const yes = r.chance(0.5);
        const agentPick = r.int(100);
        return async () => {
          const ops = this.rowsWhere((x) => x.status === "no_evidence");
          const op = ops[pick % Math.max(1, ops.length)];
          if (!op) return;
          const agent = this.agent(agentPick);
          const a =
            action === "settle"
              ? await this.http(
                  gw,
                  "POST",
                  `/v1/operations/${op.operation_id}/settle`,
                  { token: agent.token },
                  {
                    outcome: yes ? "arrived" : "did_not_arrive",
                    note: `simulated decision ${n}`,
                  },
                )
              : await this.http(
                  gw,
                  "POST",
                  `/v1/admin/operations/${op.operation_id}/arbitrate`,
                  {
                    token: this.o.adminToken,
                  },
                  { decision: yes ? "confirmed" : "failed", note: `simulated arbitration ${n}` },
                );
          note(
            [op.operation_id, op.sim_id ?? ""],
            `${action === "settle" ? `agent ${agent.login} settles` : "admin arbitrates"} ${yes ? "arrived/confirmed" : "did_not_arrive/failed"} → ${a.status} ${a.body?.status ?? a.body?.context?.reason ?? ""}`,
          );
          if (a.status === 200)
            this.decisions.push({ operationId: op.operation_id, route: action, outcome: yes ? "confirmed" : "failed" });
        };
      }
      case "cancel": {
        const pick = r.int(1000);
        const agentPick = r.int(100);
        return async () => {
          const ops = this.rowsWhere((x) => x.status === "queued" || x.status === "running");
          const op = ops[pick % Math.max(1, ops.length)];
          if (!op) return;
          const agent = this.agent(agentPick);
          const a = await this.http(gw, "POST", `/v1/operations/${op.operation_id}/cancel`, { token: agent.token }, {});
          note(
            [op.operation_id],
            `agent ${agent.login} cancels (${op.status}) → ${a.status} ${a.body?.status ?? a.body?.context?.reason ?? ""}`,
          );
        };
      }
      case "dismiss": {
        const pick = r.int(1000);
        const reason = r.pick(["operator_refusal", "not_ours", "other", "already_settled"] as const)!;
        return async () => {
          const agent = this.o.agents[0];
          const list = await this.http(gw, "GET", "/v1/evidences?unmatched=true&all=true&limit=250", {
            token: agent.token,
          });
          if (list.status !== 200 || !Array.isArray(list.body) || !list.body.length) return;
          const ids = (list.body as { evidence_id?: string; id?: string }[])
            .map((e) => String(e.evidence_id ?? e.id))
            .sort();
          const id = ids[pick % ids.length];
          const a = await this.http(gw, "POST", `/v1/evidences/${id}/dismiss`, { token: agent.token }, { reason });
          note([id], `agent dismisses message ${id} (${reason}) → ${a.status}`);
        };
      }
      case "measureBalance": {
        const h = this.o.handsets[r.int(this.o.handsets.length)];
        const topUp = r.chance(0.4) ? 50_000 + 10_000 * r.int(10) : 0;
        return async () => {
          // A float top-up reaches the SIM first sometimes (the admin then measures it).
          if (topUp) this.o.operator.setBalance(h.msisdn, this.o.operator.balanceOf(h.msisdn) + topUp);
          const balance = this.o.operator.balanceOf(h.msisdn);
          const a = await this.http(
            gw,
            "PATCH",
            `/v1/sims/${h.simId}/balance`,
            { apiKey: true },
            {
              balance,
              source: "balance_check",
            },
          );
          note([h.simId], `${topUp ? `float top-up ${topUp} F; ` : ""}balance measured ${balance} F → ${a.status}`);
        };
      }
      case "breaker": {
        const holdMs = 1000 + r.int(4000);
        return async () => {
          if (this.breakerOn) return;
          // The emergency stop: creates refused (423) and every handset frozen, until the lift.
          this.breakerOn = true;
          const admin = { token: this.o.adminToken };
          const a = await this.http(gw, "PUT", "/v1/admin/circuit-breaker", admin, { active: true });
          this.o.log(`admin trips the breaker → ${a.status}; lifts it in ${holdMs} ms`);
          await sleep(holdMs);
          for (let attempt = 0; attempt < 10; attempt++) {
            const lift = await this.http(gw, "POST", "/v1/admin/circuit-breaker/lift", admin);
            if (lift.status !== 0 && lift.status < 500) break;
            await sleep(1000);
          }
          this.breakerOn = false;
        };
      }
      case "replaceToken":
      case "revokeToken": {
        const h = this.o.handsets[r.int(this.o.handsets.length)];
        return async () => {
          if (action === "revokeToken") {
            const a = await this.http(gw, "DELETE", `/v1/devices/${h.deviceId}/token`, { token: this.o.adminToken });
            if (a.status === 204) h.revoked = true;
            note([h.simId], `admin revokes handset ${h.index}'s token → ${a.status}`);
            return;
          }
          const a = await this.http(gw, "POST", `/v1/devices/${h.deviceId}/token`, { token: this.o.adminToken }, {});
          if (a.status === 201) {
            h.token = a.body.device_token;
            h.revoked = false;
          }
          note([h.simId], `admin replaces handset ${h.index}'s token → ${a.status}`);
        };
      }
      case "deactivateAgent": {
        const pick = r.int(100);
        return async () => {
          const others = this.o.agents.slice(1).filter((a) => a.active);
          const agent = others[pick % Math.max(1, others.length)];
          if (!agent) return;
          const a = await this.http(gw, "POST", `/v1/agents/admin/${agent.agentId}/deactivate`, {
            token: this.o.adminToken,
          });
          if (a.status === 204) agent.active = false;
          this.o.log(`admin deactivates agent ${agent.login} → ${a.status}`);
          // Its revoked session must act no more.
          const after = await this.http(gw, "GET", "/v1/operations?limit=1", { token: agent.token });
          this.checked[7] = (this.checked[7] ?? 0) + 1;
          if (a.status === 204 && after.status === 200)
            this.o.note(
              [agent.agentId],
              `VIOLATION-CANDIDATE deactivated agent ${agent.login}'s session still answered 200`,
            );
          if (a.status === 204) await this.replaceAgent(gw, agent.role);
        };
      }
      default:
        throw new Error(`no actor for ${action}`);
    }
  }

  /** Whether the action's operator texts go drifted, drawn when it is chosen (drift.ts). */
  private driftPick(n: number): DriftPick | null {
    return this.r.chance(DRIFT_SHARE) ? { pick: this.r.int(1_000_000), id: `sim-${this.r.seed}-${n}` } : null;
  }

  /** The text drifted as drawn (unchanged when no drift applies to it), recorded for the checks. */
  private drift(sms: OutgoingSms, d: DriftPick | null, i = 0): OutgoingSms {
    const v = d && driftText(sms, d.pick, `${d.id}-${i}`);
    if (!v) return sms;
    this.drifted.push({
      clientMessageId: sms.clientMessageId,
      simId: sms.simId,
      drift: v.drift,
      kind: sms.about.kind,
      amount: sms.about.amount ?? null,
      operationId: sms.about.operationId ?? null,
    });
    this.o.note(
      [...(sms.about.operationId ? [sms.about.operationId] : []), sms.simId, sms.clientMessageId],
      `the operator's ${sms.about.kind} text (${sms.about.amount ?? ""} F) is sent drifted (${v.drift}): ${JSON.stringify(v.raw)}`,
    );
    return { ...sms, raw: v.raw };
  }

  /** A new agent at the board in place of a deactivated one, with the same grant. */
  private async replaceAgent(gw: string, role: "agent" | "supervisor"): Promise<void> {
    const login = `sim-agent-${this.o.agents.length}`;
    const password = `${login}-password-1`;
    const admin = { token: this.o.adminToken };
    const made = await this.http(gw, "POST", "/v1/agents/admin", admin, {
      login,
      full_name: `Agent ${login}`,
      password,
      role,
    });
    if (made.status !== 201) return;
    const session = await this.http(gw, "POST", "/v1/agents/login", {}, { login, password });
    await this.http(gw, "PATCH", `/v1/admin/agents/${made.body.agent_id}/access`, admin, {
      allowed_sim_ids: this.o.handsets.map((h) => h.simId),
      allowed_op_types: ["deposit", "balance"],
      max_amount: 100_000,
    });
    if (session.status === 200)
      this.o.agents.push({ agentId: made.body.agent_id, token: session.body.token, login, active: true, role });
  }

  /**
   * A deposit naming the SIM with the most debits outstanding (no_evidence, awaiting proof,
   * running), for 0.7 to 1.3 times what it may have left: the free-balance rule's edge.
   */
  private async aimedCreate(gw: string, body: Record<string, unknown>, edge: number): Promise<void> {
    const before = await this.o.snapshotBalances();
    const risky = new Map<string, number>();
    const pending = new Map<string, number>();
    // Only the SIMs of the create's operator can take it.
    const ofNetwork = (x: OperationRow) => x.sim_id !== null && this.networkOfSim(x.sim_id) === body.operator;
    for (const x of this.rowsWhere((x) => ofNetwork(x) && x.op_type !== "balance")) {
      const sim = x.sim_id!;
      if (OUTSTANDING.includes(x.status)) risky.set(sim, (risky.get(sim) ?? 0) + x.montant);
      if ([...ACTIVE, ...NO_EVIDENCE_LIKE].includes(x.status)) pending.set(sim, (pending.get(sim) ?? 0) + x.montant);
    }
    const [simId] = [...risky].sort(([a, x], [b, y]) => y - x || a.localeCompare(b))[0] ?? [];
    if (!simId) return this.create(gw, body, undefined, before);
    const free = (before.get(simId)?.balance ?? 0) - (pending.get(simId) ?? 0);
    const montant = Math.min(GRANT_MAX_AMOUNT, Math.max(1000, 500 * Math.round((free * (0.7 + 0.6 * edge)) / 500)));
    this.o.note([simId], `automation aims a ${montant} F deposit at SIM ${simId} (about ${free} F free)`);
    return this.create(gw, { ...body, sim_id: simId, montant }, undefined, before);
  }

  private async create(gw: string, body: Record<string, unknown>, parent?: string, measured?: Balances): Promise<void> {
    const before = measured ?? (await this.o.snapshotBalances());
    const a = await this.http(gw, "POST", "/v1/operations", { apiKey: true }, body);
    const id = a.body?.operation_id as string | undefined;
    const ids = [id ?? String(body.request_id), ...(parent ? [parent] : [])];
    this.o.note(
      ids,
      `automation creates ${String(body.request_id)} ${String(body.type_op)} ${String(body.montant)} F${parent ? ` (retry of ${parent})` : ""} → ${a.status} ${a.body?.context?.reason ?? ""}`,
    );
    if (a.status !== 202 || !id) return;
    const after = await this.o.snapshotBalances();
    this.accepted(
      { operationId: id, requestId: String(body.request_id), body, parent },
      {
        operationId: id,
        simId: null,
        before,
        after,
      },
    );
  }

  /** An accepted create (a launch's operation included): lost writes, replays, retries, free balance. */
  private accepted(op: KnownOperation, record: CreateRecord): void {
    this.creates.push({ requestId: op.requestId, operationId: op.operationId, at: performance.now() });
    this.known.push(op);
    this.o.onCreate(record);
  }

  private async poll(
    gw: string,
    h: SimHandset,
    mode: string,
    delayMs: number,
    fault: string,
    repeat: boolean,
    drift: DriftPick | null,
  ): Promise<void> {
    if (h.busy) return;
    h.busy = true;
    try {
      const polled = await this.http(gw, "GET", "/v1/device/next", { token: h.token });
      if (polled.status !== 200) return;
      const op = polled.body as DispatchPayload;
      this.o.note(
        [op.operation_id, op.sim_id],
        `handset ${h.index} claims it (${op.op_type} ${op.montant} F), will play ${mode}`,
      );
      if (delayMs) await sleep(delayMs);
      const failure: FailureMode | undefined =
        mode === "timeoutAfterPin"
          ? { outcome: "ussd_timeout", afterPin: true }
          : mode === "timeoutBeforePin"
            ? { outcome: "ussd_timeout" }
            : mode === "unconfirmed"
              ? { outcome: "ussd_unconfirmed" }
              : mode === "failed"
                ? { outcome: "ussd_failed" }
                : mode === "noService"
                  ? { outcome: "no_service" }
                  : mode === "nameMismatch"
                    ? { outcome: "name_mismatch" }
                    : undefined;
      if (failure) h.handset.failNext(op.operation_id, failure);
      const result: DialResult = await h.handset.dial(op);
      const body = {
        operation_id: op.operation_id,
        outcome: result.outcome,
        ussd_response: result.ussd_response,
        executed_at: result.executed_at.toISOString(),
        ...(result.failure_detail ? { failure_detail: result.failure_detail } : {}),
      };
      this.dialled.push({ handset: h.index, body, operationId: op.operation_id });
      // As the app: the report is sent until it is taken (or refused for good).
      for (let attempt = 0; attempt < 20; attempt++) {
        const a = await this.http(gw, "POST", "/v1/device/outcome", { token: h.token }, body);
        this.o.note(
          [op.operation_id],
          `handset ${h.index} reports ${result.outcome}${result.receipt ? ` (money moved: ${result.receipt.amount} F)` : ""} → ${a.status} ${a.body?.status ?? a.body?.context?.reason ?? ""}`,
        );
        if (a.status !== 0 && a.status !== 429 && a.status < 500) break;
        await sleep(Math.min(2000, 200 * 2 ** attempt));
      }
      if (repeat) {
        const a = await this.http(gw, "POST", "/v1/device/outcome", { token: h.token }, body);
        this.o.note([op.operation_id], `handset ${h.index} repeats its report → ${a.status}`);
      }
      for (const text of h.sms.smsFor(op, result).map((t, i) => this.drift(t, drift, i))) {
        if (fault === "lost") {
          this.o.note([op.operation_id], `the operator's SMS is lost`);
        } else if (fault === "delayed") {
          this.delayed.push({ handset: h.index, sms: text });
          this.o.note([op.operation_id], `the operator's SMS is delayed`);
        } else {
          const smsFault: SmsFault | undefined =
            fault === "dupHandset"
              ? { kind: "duplicated", by: "handset" }
              : fault === "dupOperator"
                ? { kind: "duplicated", by: "operator" }
                : fault === "reordered"
                  ? { kind: "reordered" }
                  : undefined;
          await this.forward(h, text, fault === "none" ? "receipt" : `receipt (${fault})`, op.operation_id, smsFault);
        }
      }
    } finally {
      h.busy = false;
    }
  }

  /** Forwards an SMS as the handset app does (until taken); records the acknowledged ones. */
  private async forward(
    h: SimHandset,
    sms: OutgoingSms,
    what: string,
    about?: string,
    fault?: SmsFault,
  ): Promise<void> {
    const deliveries = await h.sms.deliver(sms, fault);
    for (const d of deliveries) {
      this.o.note(
        [...(about ? [about] : []), h.simId, d.sms.clientMessageId],
        `SMS ${what} from ${d.sms.sender} on handset ${h.index} (${d.sms.about.kind} ${d.sms.about.amount ?? ""} F, client id ${d.sms.clientMessageId}) → ${d.status} ${d.body?.outcome ?? d.body?.status ?? ""}`,
      );
      if (d.status >= 200 && d.status < 300)
        this.sms.push({
          simId: d.sms.simId,
          clientMessageId: d.sms.clientMessageId,
          operationId: about ?? "",
          at: performance.now(),
          sender: d.sms.sender,
          kind: what,
        });
    }
  }

  /** The handset's SMS side forwards through the simulation's own client (answers recorded). */
  transportFor(h: { token: string }, gateway: () => string) {
    return async (_token: string, body: unknown) => {
      for (let attempt = 0; ; attempt++) {
        const a = await this.http(gateway(), "POST", "/v1/device/messages", { token: h.token }, body);
        if ((a.status !== 0 && a.status !== 429 && a.status < 500) || attempt >= 15) return a;
        await sleep(Math.min(2000, 200 * 2 ** attempt));
      }
    };
  }
}
