// Agents' matching operations in the simulation: a deposit the agent records at the board
// (`POST /v1/operations/matching`, awaiting_manual_dial) and dials by hand, whose operator text
// then proves it (or is lost, or comes late); listed, edited (amount, number, contact) and
// cancelled, and orphans attached to them. Judged here (invariant 16) as the contract says: never
// claimed by a handset (only awaiting_manual_dial, confirmed or rejected), edit and cancel refused
// once it left awaiting_manual_dial, another agent's refused, a non-admin lists its own only.
// Confirmations stay invariant 1's and 2's. Every choice is drawn when the action is chosen.
import { depositConfirmation } from "../../services/evidence/src/domain/sms-templates.ts";
import { sleep } from "../infra/util.ts";
import { referenceOf, type OutgoingSms } from "../simulator/operator-sms.ts";
import { depositFee, type OperatorName, type SimulatedOperator } from "../simulator/operator.ts";
import {
  SENDER_OF,
  acknowledged,
  customersOf,
  outcomeOf,
  rowsWhere,
  type SimAgent,
  type SimContext,
} from "./context.ts";

export const MATCHING_ACTIONS = {
  matchingCreate: 4,
  matchingList: 1,
  matchingEdit: 2,
  matchingCancel: 2,
  matchingAttach: 2,
} as const;
export type MatchingAction = keyof typeof MATCHING_ACTIONS;
export const MATCHING_ACTOR_OF: Record<MatchingAction, string> = {
  matchingCreate: "agent",
  matchingList: "agent",
  matchingEdit: "agent",
  matchingCancel: "agent",
  matchingAttach: "agent",
};

/** Invariant 16's index in INVARIANTS (invariants.ts). */
export const MATCHING_INVARIANT = 15;
/** The statuses a matching operation may have (the contract's transition table). */
const MATCHING_STATUSES = ["awaiting_manual_dial", "confirmed", "rejected"];
const TERMINAL = ["confirmed", "rejected", "failed", "no_evidence"];

interface Matched {
  operationId: string;
  simId: string;
  owner: SimAgent;
  montant: number;
  /** Its cancel was answered 200. */
  cancelled: boolean;
}

/** What the matching actions need beyond the shared context: the operator and the handsets' numbers. */
export interface MatchingOptions {
  operator: SimulatedOperator;
  msisdnOf: (simId: string) => string | undefined;
}

export class Matching {
  readonly ops: Matched[] = [];
  /** Operations already reported (one violation each). */
  private readonly reported = new Set<string>();

  constructor(
    private readonly c: SimContext,
    private readonly m: MatchingOptions,
  ) {}

  prepare(action: MatchingAction, n: number, gw: string): () => Promise<void> {
    const r = this.c.random;
    const agentPick = r.int(100);
    const pick = r.int(1000);
    switch (action) {
      case "matchingCreate": {
        const network: OperatorName = r.chance(this.shareB()) ? "operator_b" : "operator_a";
        const body = {
          beneficiary_msisdn: r.pick(customersOf(network))!,
          montant: 1000 * (1 + r.int(15)) + (r.chance(0.5) ? 0 : 500),
          ...(r.chance(0.5) ? { sim_id: this.simOf(network, pick) } : {}),
        };
        const dial = r.weighted({ dialled: 6, lost: 1, late: 2, never: 2 });
        const pauseMs = 300 + r.int(2500);
        const english = r.chance(0.5);
        return () => this.create(gw, n, this.c.agentAt(agentPick), body, { dial, pauseMs, english });
      }
      case "matchingList":
        return () => this.list(gw, this.c.agentAt(agentPick));
      case "matchingEdit": {
        const change = r.weighted({ montant: 3, number: 1, contact: 1 });
        const delta = 500 * (1 + r.int(4));
        return () => this.edit(gw, this.c.agentAt(agentPick), pick, change, delta);
      }
      case "matchingCancel":
        return () => this.cancel(gw, this.c.agentAt(agentPick), pick);
      case "matchingAttach":
        return () => this.attach(gw, this.c.agentAt(agentPick), pick, r.int(1000));
    }
  }

  private shareB(): number {
    const ops = this.c.simOperators();
    return ops.length ? ops.filter((x) => x === "operator_b").length / ops.length : 0;
  }

  private simOf(network: OperatorName, pick: number): string | undefined {
    const sims = this.c.simIds().filter((_, i) => this.c.simOperators()[i] === network);
    return sims[pick % Math.max(1, sims.length)];
  }

  private violation(ids: string[], line: string): void {
    this.c.note(ids, `VIOLATION-CANDIDATE(${MATCHING_INVARIANT}) ${line}`);
  }

  private async create(
    gw: string,
    n: number,
    agent: SimAgent,
    body: Record<string, unknown>,
    how: { dial: string; pauseMs: number; english: boolean },
  ): Promise<void> {
    this.judgeRows();
    const a = await this.c.http(gw, "POST", "/v1/operations/matching", { token: agent.token }, body);
    const id = a.body?.operation_id as string | undefined;
    this.c.note(
      [id ?? `matching-${n}`, ...(a.body?.sim_id ? [String(a.body.sim_id)] : [])],
      `agent ${agent.login} records a matching operation ${String(body.montant)} F to ${String(body.beneficiary_msisdn)}${body.sim_id ? ` on SIM ${String(body.sim_id)}` : ""} → ${a.status} ${outcomeOf(a)}`,
    );
    if (a.status !== 201 || !id) return;
    this.c.checked(MATCHING_INVARIANT);
    if (a.body?.status !== "awaiting_manual_dial" || (a.body?.origin && a.body.origin !== "matching"))
      this.violation([id], `a matching operation was created ${a.body?.status} (origin ${a.body?.origin})`);
    const op: Matched = {
      operationId: id,
      simId: String(a.body.sim_id),
      owner: agent,
      montant: Number(body.montant),
      cancelled: false,
    };
    this.ops.push(op);
    if (how.dial === "never") return;
    await sleep(how.pauseMs);
    await this.dialByHand(n, op, body, how);
  }

  /** The agent dials by hand: the operator moves the money and texts the SIM (lost, late, or now). */
  private async dialByHand(
    n: number,
    op: Matched,
    body: Record<string, unknown>,
    how: { dial: string; english: boolean },
  ): Promise<void> {
    const index = this.c.simIds().indexOf(op.simId);
    const msisdn = this.m.msisdnOf(op.simId);
    if (index < 0 || !msisdn) return;
    const network = this.c.simOperators()[index];
    const amount = op.montant;
    const fee = network === "operator_b" ? depositFee(amount) : 0;
    const balance = this.m.operator.balanceOf(msisdn);
    if (balance < amount + fee)
      return void this.c.note([op.operationId], `the manual dial fails: ${balance} F on the SIM`);
    this.m.operator.setBalance(msisdn, balance - amount - fee);
    const at = new Date();
    const customer = String(body.beneficiary_msisdn);
    const raw = depositConfirmation(network, {
      amount,
      fee: network === "operator_b" ? fee : null,
      balanceAfter: balance - amount - fee,
      ref: referenceOf(network, `matching-${this.c.random.seed}-${n}`, at),
      msisdn: network === "operator_b" ? customer : `237${customer}`,
      name: "CLIENT SIMULE",
      at,
      language: how.english && network === "operator_a" ? "en" : "fr",
    });
    const sms: OutgoingSms = {
      simId: op.simId,
      operator: network,
      sender: SENDER_OF[network],
      raw,
      receivedAt: at,
      clientMessageId: `sim-${this.c.random.seed}-${n}-manual`,
      about: { kind: "deposit", amount, operationId: op.operationId },
    };
    this.c.note([op.operationId], `agent dials ${amount} F by hand; the operator's text is ${how.dial}`);
    if (how.dial === "lost") return;
    if (how.dial === "late") await sleep(4000 + (n % 5) * 1000);
    await this.c.forward(index, sms, `receipt (manual dial${how.dial === "late" ? ", late" : ""})`, op.operationId);
  }

  /** A matching operation never leaves the contract's statuses; a cancelled one is never confirmed. */
  judgeRows(): void {
    const rows = this.c.rows();
    for (const op of this.ops) {
      const row = rows.get(op.operationId);
      if (!row || this.reported.has(op.operationId)) continue;
      this.c.checked(MATCHING_INVARIANT);
      const bad = !MATCHING_STATUSES.includes(row.status)
        ? `is ${row.status}: a handset claimed it or a sweep moved it (only awaiting_manual_dial, confirmed, rejected)`
        : // The rows are read every second: right after the 200 they may still say awaiting_manual_dial.
          op.cancelled && row.status === "confirmed"
          ? `was cancelled (200) and is now ${row.status}`
          : undefined;
      if (!bad) continue;
      this.reported.add(op.operationId);
      this.violation([op.operationId, op.simId], `matching operation ${op.operationId} ${bad}`);
    }
  }

  private async list(gw: string, agent: SimAgent): Promise<void> {
    this.judgeRows();
    const a = await this.c.http(gw, "GET", "/v1/operations/matching?limit=250", { token: agent.token });
    this.c.note(
      [agent.agentId],
      `agent ${agent.login} lists its matching operations → ${a.status} (${Array.isArray(a.body) ? a.body.length : "-"})`,
    );
    if (a.status !== 200 || !Array.isArray(a.body)) return;
    this.c.checked(MATCHING_INVARIANT);
    for (const o of a.body as { operation_id: string; agent_id?: string; origin?: string }[]) {
      if (o.agent_id && o.agent_id !== agent.agentId)
        this.violation(
          [o.operation_id],
          `${agent.login} (${agent.role}) listed matching operation ${o.operation_id} of agent ${o.agent_id}`,
        );
      if (o.origin && o.origin !== "matching")
        this.violation([o.operation_id], `the matching list showed ${o.operation_id} of origin ${o.origin}`);
    }
  }

  /**
   * The target: one of the matching operations, awaiting or not (a terminal one must be 409);
   * the caller's own two times in three when it has some, else anyone's (another's must be 403).
   */
  private target(agent: SimAgent, pick: number): { op: Matched; status: string } | undefined {
    const rows = this.c.rows();
    const own = (id: string) => this.ops.some((o) => o.operationId === id && o.owner.agentId === agent.agentId);
    const mine = rowsWhere(rows, (x) => own(x.operation_id));
    const all = rowsWhere(rows, (x) => this.ops.some((o) => o.operationId === x.operation_id));
    const ops = pick % 3 !== 0 && mine.length ? mine : all;
    const row = ops[pick % Math.max(1, ops.length)];
    const op = row && this.ops.find((o) => o.operationId === row.operation_id);
    return op && { op, status: row.status };
  }

  /** Edit and cancel: refused (409) once it left awaiting_manual_dial, refused to another plain agent. */
  private judgeChange(
    what: string,
    agent: SimAgent,
    t: { op: Matched; status: string },
    a: { status: number; body: any },
  ): void {
    this.c.checked(MATCHING_INVARIANT);
    if (!acknowledged(a)) return;
    if (TERMINAL.includes(t.status))
      this.violation(
        [t.op.operationId],
        `${what} of matching operation ${t.op.operationId}, ${t.status} before the call, answered ${a.status}`,
      );
    if (agent.role === "agent" && agent.agentId !== t.op.owner.agentId)
      this.violation(
        [t.op.operationId],
        `${agent.login} ${what} matching operation ${t.op.operationId} of ${t.op.owner.login}: ${a.status}`,
      );
  }

  private async edit(gw: string, agent: SimAgent, pick: number, change: string, delta: number): Promise<void> {
    this.judgeRows();
    const t = this.target(agent, pick);
    if (!t) return;
    const body =
      change === "montant"
        ? { montant: t.op.montant + delta }
        : change === "number"
          ? { beneficiary_msisdn: customersOf(this.networkOf(t.op.simId))[delta % 3] }
          : { contact_id: null };
    const path = `/v1/operations/matching/${t.op.operationId}`;
    const a = await this.c.http(gw, "PATCH", path, { token: agent.token }, body);
    this.c.note(
      [t.op.operationId],
      `agent ${agent.login} edits ${t.op.owner.login}'s matching operation (${t.status}) ${JSON.stringify(body)} → ${a.status} ${outcomeOf(a)}`,
    );
    this.judgeChange("an edit", agent, t, a);
    if (a.status === 200 && body.montant) t.op.montant = body.montant;
  }

  private networkOf(simId: string): OperatorName {
    return this.c.simOperators()[this.c.simIds().indexOf(simId)] ?? "operator_a";
  }

  private async cancel(gw: string, agent: SimAgent, pick: number): Promise<void> {
    this.judgeRows();
    const t = this.target(agent, pick);
    if (!t) return;
    const a = await this.c.http(gw, "POST", `/v1/operations/matching/${t.op.operationId}/cancel`, {
      token: agent.token,
    });
    this.c.note(
      [t.op.operationId],
      `agent ${agent.login} cancels ${t.op.owner.login}'s matching operation (${t.status}) → ${a.status} ${outcomeOf(a)}`,
    );
    this.judgeChange("a cancel", agent, t, a);
    if (a.status === 200) {
      if (a.body?.status !== "rejected")
        this.violation(
          [t.op.operationId],
          `a cancel of matching operation ${t.op.operationId} answered 200 ${a.body?.status}`,
        );
      t.op.cancelled = true;
    }
  }

  /** An orphan on the SIM of a matching operation still awaiting, attached to it (proof stays invariant 1's). */
  private async attach(gw: string, agent: SimAgent, pick: number, evidencePick: number): Promise<void> {
    this.judgeRows();
    const rows = this.c.rows();
    const waiting = this.ops.filter((o) => rows.get(o.operationId)?.status === "awaiting_manual_dial");
    const op = waiting[pick % Math.max(1, waiting.length)];
    if (!op) return;
    const list = await this.c.http(gw, "GET", "/v1/evidences?unmatched=true&all=true&limit=250", {
      token: agent.token,
    });
    if (list.status !== 200 || !Array.isArray(list.body)) return;
    const orphans = (list.body as { evidence_id?: string; id?: string; sim_id: string }[])
      .filter((e) => e.sim_id === op.simId)
      .map((e) => String(e.evidence_id ?? e.id))
      .sort();
    const evidenceId = orphans[evidencePick % Math.max(1, orphans.length)];
    if (!evidenceId) return;
    const a = await this.c.http(
      gw,
      "POST",
      `/v1/operations/${op.operationId}/evidence`,
      { token: agent.token },
      { evidence_id: evidenceId },
    );
    this.c.note(
      [op.operationId, evidenceId, op.simId],
      `agent ${agent.login} attaches message ${evidenceId} to matching operation ${op.operationId} (${op.montant} F) → ${a.status} ${outcomeOf(a)}`,
    );
  }
}
