// Admins' fleet limits in the simulation (`PATCH /v1/admin/limits`, `GET /v1/admin/limits`): set
// and changed (the global limit or an operator's, for deposits, withdrawals or float deposits),
// "removed" (the contract has no route that deletes one: a change back to a generous limit),
// and refused (an op_type the contract refuses, an unknown operator: 422). The contract records
// fleet limits and does not enforce them ("recorded, not enforced; no daily cap exists"; the
// enforced per-operation ceiling is the agent's grant, `over_max_amount`). Invariant 16 here:
// right after a change is acknowledged, the limits read (on another gateway) show it, with
// `enforced` false; automation's deposit above the new `max_amount` (within the agent's grant)
// is never refused for a limit (no 403 `over_max_amount` while the grant allows the amount).
import { acknowledged, customersOf, outcomeOf, type SimContext } from "./context.ts";
import { MATCHING_INVARIANT } from "./matching.ts";

export const LIMIT_ACTIONS = { limitSet: 1.5, limitLift: 0.5, limitRefused: 0.3 } as const;
export type LimitAction = keyof typeof LIMIT_ACTIONS;
export const LIMIT_ACTOR_OF: Record<LimitAction, string> = {
  limitSet: "admin",
  limitLift: "admin",
  limitRefused: "admin",
};

const GENEROUS = { max_amount: 10_000_000, max_daily_agent: 100_000_000, max_daily_sim: 100_000_000 };

interface LimitBody {
  operator: string | null;
  op_type: string;
  max_amount: number;
  max_daily_agent: number;
  max_daily_sim: number;
}

export class Limits {
  /** One change at a time (its read-back and its probe create follow it). */
  private busy = false;

  constructor(private readonly c: SimContext) {}

  prepare(action: LimitAction, n: number, gw: string): () => Promise<void> {
    const r = this.c.random;
    const operator = r.pick([null, "operator_a", "operator_b"] as const) ?? null;
    const opType = r.weighted({ deposit: 6, withdrawal: 1, float_deposit: 1 });
    const max = 1000 * (1 + r.int(10));
    const probeAmount = max + 1000 * (1 + r.int(5));
    const other = this.c.gatewayUrls[(this.c.gatewayUrls.indexOf(gw) + 1) % this.c.gatewayUrls.length] ?? gw;
    const admin = r.chance(0.5) ? this.c.adminToken : this.c.secondAdminToken;
    if (action === "limitRefused") {
      const body = r.chance(0.5)
        ? { operator, op_type: r.pick(["balance", "mini_statement", "diagnostic"])!, ...GENEROUS }
        : { operator: "operator_z", op_type: "deposit", ...GENEROUS };
      return () => this.refused(gw, admin, body);
    }
    const body: LimitBody =
      action === "limitLift"
        ? { operator, op_type: opType, ...GENEROUS }
        : { operator, op_type: opType, max_amount: max, max_daily_agent: max * 20, max_daily_sim: max * 40 };
    return () => this.record(gw, other, admin, body, n, action === "limitSet" ? probeAmount : 0);
  }

  private async refused(gw: string, admin: string, body: Record<string, unknown>): Promise<void> {
    const a = await this.c.http(gw, "PATCH", "/v1/admin/limits", { token: admin }, body);
    this.c.note(
      ["limits"],
      `admin records a limit the contract refuses ${JSON.stringify(body)} → ${a.status} ${outcomeOf(a)}`,
    );
    this.c.checked(MATCHING_INVARIANT);
    if (acknowledged(a) || (a.status >= 400 && a.status < 500 && a.status !== 422))
      this.c.note(
        ["limits"],
        `VIOLATION-CANDIDATE(${MATCHING_INVARIANT}) PATCH /v1/admin/limits ${JSON.stringify(body)} answered ${a.status}, not 422`,
      );
  }

  private async record(
    gw: string,
    other: string,
    admin: string,
    body: LimitBody,
    n: number,
    probe: number,
  ): Promise<void> {
    if (this.busy) return;
    this.busy = true;
    try {
      const a = await this.c.http(gw, "PATCH", "/v1/admin/limits", { token: admin }, body);
      this.c.note(["limits"], `admin records fleet limit ${JSON.stringify(body)} → ${a.status} ${outcomeOf(a)}`);
      if (a.status !== 200) return;
      await this.readBack(other, admin, body);
      if (probe && body.op_type === "deposit") await this.probe(gw, body, n, probe);
    } finally {
      this.busy = false;
    }
  }

  /** At once, on the other gateway: the limit as recorded, `enforced` false. */
  private async readBack(gw: string, admin: string, body: LimitBody): Promise<void> {
    const a = await this.c.http(gw, "GET", "/v1/admin/limits", { token: admin });
    if (a.status !== 200) return;
    this.c.checked(MATCHING_INVARIANT);
    const rows = (a.body?.limits ?? []) as Partial<LimitBody>[];
    const row = rows.find((l) => (l.operator ?? null) === body.operator && l.op_type === body.op_type);
    const same =
      row &&
      Number(row.max_amount) === body.max_amount &&
      Number(row.max_daily_agent) === body.max_daily_agent &&
      Number(row.max_daily_sim) === body.max_daily_sim;
    const problem =
      a.body?.enforced !== false
        ? `says enforced ${String(a.body?.enforced)} (the contract: always false)`
        : !same
          ? `shows ${row ? JSON.stringify(row) : "no row"} for ${body.operator ?? "global"}/${body.op_type} right after ${JSON.stringify(body)} was acknowledged`
          : undefined;
    if (problem) this.c.note(["limits"], `VIOLATION-CANDIDATE(${MATCHING_INVARIANT}) GET /v1/admin/limits ${problem}`);
  }

  /** The agent's grant's per-operation ceiling (NaN when unread). */
  private async ceiling(gw: string, agentId: string): Promise<number> {
    const grant = await this.c.http(gw, "GET", `/v1/admin/agents/${agentId}/access`, { token: this.c.adminToken });
    return grant.status === 200 ? Number(grant.body?.max_amount) : NaN;
  }

  /** A deposit above the fleet limit just recorded, within the agent's grant: never refused for a limit. */
  private async probe(gw: string, body: LimitBody, n: number, amount: number): Promise<void> {
    const operator = body.operator ?? "operator_a";
    const agent = this.c.agents[0];
    const ceiling = await this.ceiling(gw, agent.agentId);
    const create = {
      request_id: `sim-${this.c.random.seed}-${n}-limit`,
      agent_id: agent.agentId,
      operator,
      type_op: "deposit",
      montant: amount,
      client: { msisdn: customersOf(operator as "operator_a" | "operator_b")[n % 3], nom: "Client Simule" },
    };
    const before = await this.c.snapshotBalances();
    const a = await this.c.http(gw, "POST", "/v1/operations", { apiKey: true }, create);
    const id = a.body?.operation_id as string | undefined;
    this.c.note(
      [id ?? create.request_id, "limits"],
      `automation creates ${create.request_id} deposit ${amount} F, over the fleet limit ${body.max_amount} F just recorded (grant ${ceiling} F) → ${a.status} ${outcomeOf(a)}`,
    );
    this.c.checked(MATCHING_INVARIANT);
    // The grant read before and after the create (a narrowing in between is admins.ts's).
    const refusedForLimit = a.status === 403 && a.body?.context?.reason === "over_max_amount";
    if (refusedForLimit && amount <= ceiling && amount <= (await this.ceiling(gw, agent.agentId)))
      this.c.note(
        [id ?? create.request_id, "limits"],
        `VIOLATION-CANDIDATE(${MATCHING_INVARIANT}) a ${amount} F deposit within the agent's grant (${ceiling} F) was refused over_max_amount after a fleet limit of ${body.max_amount} F (recorded, not enforced)`,
      );
    if (a.status !== 202 || !id) return;
    const after = await this.c.snapshotBalances();
    this.c.accepted(
      { operationId: id, requestId: create.request_id, body: create },
      { operationId: id, simId: null, before, after },
    );
  }
}
