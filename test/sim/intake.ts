// Intake's transactions in the simulation: intake creating them (and replaying them), agents at
// the board confirming and undoing payments, rewriting receivers, launching (twice at once, or
// racing a rewrite, a close or an undo), cancelling and closing by receipt; automation trying a
// `tx-` request id (reserved to launches). Every choice is drawn when the action is chosen.
import {
  CUSTOMERS,
  acknowledged,
  outcomeOf,
  type Balances,
  type Reply,
  type SimAgent,
  type SimContext,
} from "./context.ts";

export const INTAKE_ACTIONS = {
  txCreate: 8,
  txReplay: 1,
  txPayment: 3,
  txLaunch: 6,
  txReceiver: 3,
  txClose: 2,
  txReserved: 1.5,
} as const;
export type IntakeAction = keyof typeof INTAKE_ACTIONS;
export const INTAKE_ACTOR_OF: Record<IntakeAction, string> = {
  txCreate: "intake",
  txReplay: "intake",
  txPayment: "agent",
  txLaunch: "agent",
  txReceiver: "agent",
  txClose: "agent",
  txReserved: "automation",
};

interface KnownTransaction {
  id: string;
  requestId: string;
  body: Record<string, unknown>;
  /** As the last acknowledged answer left it. */
  state: string;
  receiverPhone: string;
  receiverName: string;
  amount: number;
  /** Its launched operation was handed to automation's knowledge. */
  operationKnown?: boolean;
}

/** The transaction a 409 `request_id_exists` names (intake's `context.transaction_id`). */
const existing = (a: Reply): string | undefined =>
  a.status === 409 &&
  a.body?.context?.reason === "request_id_exists" &&
  typeof a.body.context.transaction_id === "string"
    ? a.body.context.transaction_id
    : undefined;

/** A launch answered 200: the operation it named (invariant 3 reads them: one per transaction). */
export interface LaunchRecord {
  transactionId: string;
  operationId: string;
  agent: string;
}

const RACES = { none: 64, second: 0, receiver: 12, close: 8, undo: 8, cancel: 8 } as const;
type Race = keyof typeof RACES;

/** A transaction create acknowledged: 201, or 409 `request_id_exists` to a create tried again. */
export interface CreatedTransaction {
  requestId: string;
  id: string;
  via: "201" | "409 request_id_exists";
}

export class Intake {
  readonly transactions: KnownTransaction[] = [];
  readonly launches: LaunchRecord[] = [];
  /** Every acknowledged create (invariant 5: each exists at the end). */
  readonly created: CreatedTransaction[] = [];

  constructor(private readonly c: SimContext) {}

  /** Chooses the action's inputs now; the returned function runs it. */
  prepare(action: IntakeAction, n: number, gw: string): () => Promise<void> {
    switch (action) {
      case "txCreate":
        return this.prepareCreate(n, gw);
      case "txReplay":
        return this.prepareReplay(gw);
      case "txPayment":
        return this.preparePayment(gw);
      case "txLaunch":
        return this.prepareLaunch(gw);
      case "txReceiver":
        return this.prepareReceiver(gw);
      case "txClose":
        return this.prepareClose(n, gw);
      case "txReserved":
        return this.prepareReserved(gw);
    }
  }

  /** One of the known transactions: a pending one `pendingShare` of the time, else any. */
  private pick(pick: number, pendingShare: number): KnownTransaction | undefined {
    const pending = this.transactions.filter((t) => t.state === "pending");
    const list = pick % 100 < pendingShare * 100 && pending.length ? pending : this.transactions;
    return list[Math.floor(pick / 100) % Math.max(1, list.length)];
  }

  private prepareCreate(n: number, gw: string): () => Promise<void> {
    const r = this.c.random;
    const amount = 1000 * (1 + r.int(40)) + (r.chance(0.5) ? 0 : 500);
    const phone = r.pick(CUSTOMERS)!;
    const body = {
      request_id: `sim-${r.seed}-${n}-tx`,
      contact_id: `contact-${r.int(20)}`,
      customer_name: "Client Diaspora",
      receiver_name: `Receveur ${r.int(50)}`,
      receiver_phone: r.chance(0.3) ? `+237 ${phone.slice(0, 3)} ${phone.slice(3, 6)} ${phone.slice(6)}` : phone,
      operator: "operator_a",
      received_amount_xaf: amount,
      partner_verify: r.chance(0.5),
    };
    return async () => {
      const a = await this.c.http(gw, "POST", "/v1/transactions", { apiKey: true }, body);
      const id = (a.status === 201 ? a.body?.id : existing(a)) as string | undefined;
      this.c.note(
        [id ?? body.request_id],
        `intake creates transaction ${body.request_id} (${amount} F to ${body.receiver_phone}) → ${a.status} ${outcomeOf(a)} ${id ?? ""}`,
      );
      if (!id) return;
      // A 409 `request_id_exists`: this request id is this create's own, so the first try (its
      // answer lost with the connection) stored it; the contract's 409 says it exists.
      const stored = a.status === 201 ? a.body : await this.storedAs(gw, id, body);
      if (!stored) return;
      this.created.push({ requestId: body.request_id, id, via: a.status === 201 ? "201" : "409 request_id_exists" });
      this.transactions.push({
        id,
        requestId: body.request_id,
        body,
        state: String(stored.state ?? "pending"),
        receiverPhone: String(stored.receiver_phone ?? phone),
        receiverName: String(stored.receiver_name ?? body.receiver_name),
        amount,
      });
    };
  }

  /**
   * The transaction a 409 named, read back (admin): the one this create sent (its request id,
   * amount and receiver), else a violation of invariant 5 (the write stored is not the one
   * acknowledged). Unreadable: taken as the body sent.
   */
  private async storedAs(
    gw: string,
    id: string,
    body: Record<string, unknown>,
  ): Promise<Record<string, unknown> | undefined> {
    const a = await this.c.http(gw, "GET", `/v1/transactions/${id}`, { token: this.c.adminToken });
    if (a.status !== 200) return {};
    const t = a.body as Record<string, unknown>;
    const local = (p: unknown) =>
      String(p ?? "")
        .replace(/\D/g, "")
        .slice(-9);
    if (
      t.request_id === body.request_id &&
      Number(t.received_amount_xaf) === body.received_amount_xaf &&
      local(t.receiver_phone) === local(body.receiver_phone)
    )
      return t;
    this.c.note(
      [id],
      `VIOLATION-CANDIDATE(4) transaction ${String(body.request_id)}, tried again and answered 409 request_id_exists, is stored as ${JSON.stringify(t).slice(0, 300)}, not as sent`,
    );
    return undefined;
  }

  private prepareReplay(gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100_000);
    const changed = r.chance(0.5);
    const delta = 500 * (1 + r.int(4));
    return async () => {
      const t = this.pick(pick, 0);
      if (!t) return;
      const body = changed ? { ...t.body, received_amount_xaf: t.amount + delta } : t.body;
      const a = await this.c.http(gw, "POST", "/v1/transactions", { apiKey: true }, body);
      this.c.checked(7);
      this.c.note([t.id], `intake replays ${t.requestId}${changed ? " with another amount" : ""} → ${a.status}`);
      if (acknowledged(a))
        this.c.note([t.id], `VIOLATION-CANDIDATE(7) a replay of transaction ${t.requestId} was accepted (${a.status})`);
    };
  }

  private preparePayment(gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100_000);
    const undo = r.chance(0.25);
    const agentPick = r.int(100);
    return async () => {
      const t = this.pick(pick, 0.9);
      if (!t) return;
      const agent = this.c.agentAt(agentPick);
      const a = await this.payment(gw, agent, t, undo);
      if (acknowledged(a)) t.state = String(a.body?.state ?? t.state);
    };
  }

  /**
   * A board call on a transaction. One that another agent launched (a launch answered 200 before
   * this call was sent) is not the caller's to see: 404 (401 or 403 for a revoked session), never
   * 2xx, 409 or 422, which would say it exists and what state it is in.
   */
  private async board(
    gw: string,
    agent: SimAgent,
    t: KnownTransaction,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<Reply> {
    const launcher = this.launches.find((l) => l.transactionId === t.id)?.agent;
    const a = await this.c.http(gw, method, path, { token: agent.token }, body);
    if (!launcher || launcher === agent.agentId || a.status === 0 || a.status >= 500 || a.status === 429) return a;
    this.c.checked(10);
    if (![401, 403, 404].includes(a.status))
      this.c.note(
        [t.id],
        `VIOLATION-CANDIDATE(10) ${agent.login} (${agent.role}) got ${a.status} ${outcomeOf(a)} on ${method} ${path.replace(/.*\/v1/, "/v1")}, a transaction another agent launched`,
      );
    return a;
  }

  private async payment(gw: string, agent: SimAgent, t: KnownTransaction, undo: boolean): Promise<Reply> {
    const path = `/v1/transactions/${t.id}/payment-confirmation`;
    const a = await this.board(gw, agent, t, undo ? "DELETE" : "POST", path);
    this.c.note(
      [t.id],
      `agent ${agent.login} ${undo ? "undoes" : "confirms"} the payment of transaction ${t.requestId} → ${a.status} ${outcomeOf(a)}`,
    );
    return a;
  }

  /** Launch, sometimes twice at once (two agents, two gateways), or racing a rewrite, close, cancel or undo. */
  private prepareLaunch(gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100_000);
    const confirmFirst = r.chance(0.8);
    const race: Race = r.chance(0.35) ? "second" : r.weighted(RACES);
    const agents = [r.int(100), r.int(100)];
    const gw2 = this.c.gatewayUrls[r.int(this.c.gatewayUrls.length)];
    const phone = r.pick(CUSTOMERS)!;
    return async () => {
      const t = this.pick(pick, 0.85);
      if (!t) return;
      const [first, second] = agents.map((i) => this.c.agentAt(i));
      if (confirmFirst) await this.payment(gw, first, t, false);
      const before = await this.c.snapshotBalances();
      const calls: Promise<unknown>[] = [this.launch(gw, first, t)];
      if (race === "second") calls.push(this.launch(gw2, second, t));
      else if (race === "receiver") calls.push(this.rewrite(gw2, second, t, { receiver_phone: phone }));
      else if (race === "undo") calls.push(this.payment(gw2, second, t, true));
      else if (race !== "none") calls.push(this.close(gw2, second, t, race, "raced a launch"));
      await Promise.all(calls);
      const launched = new Set(this.launches.filter((l) => l.transactionId === t.id).map((l) => l.operationId));
      if (!launched.size) return;
      const after = await this.c.snapshotBalances();
      for (const operationId of launched) this.accepted(t, operationId, before, after);
    };
  }

  /** A launched operation enters automation's knowledge (retries of it) and the free-balance check. */
  private accepted(t: KnownTransaction, operationId: string, before: Balances, after: Balances): void {
    if (t.operationKnown) return;
    t.operationKnown = true;
    const body = {
      request_id: `tx-${t.id}`,
      agent_id: this.launches.find((l) => l.operationId === operationId)?.agent ?? "",
      operator: "operator_a",
      type_op: "deposit",
      montant: t.amount,
      client: { msisdn: t.receiverPhone, nom: t.receiverName },
    };
    this.c.accepted({ operationId, requestId: body.request_id, body }, { operationId, simId: null, before, after });
  }

  private async launch(gw: string, agent: SimAgent, t: KnownTransaction): Promise<Reply> {
    const a = await this.board(gw, agent, t, "POST", `/v1/transactions/${t.id}/launch`);
    const operationId = a.body?.operation_id as string | undefined;
    this.c.note(
      [t.id, ...(operationId ? [operationId] : [])],
      `agent ${agent.login} launches transaction ${t.requestId} (${t.amount} F) → ${a.status} ${outcomeOf(a)} ${operationId ?? ""}`,
    );
    if (a.status === 200 && operationId) {
      this.launches.push({ transactionId: t.id, operationId, agent: agent.agentId });
      if (t.state === "pending") t.state = "launched";
    }
    return a;
  }

  private prepareReceiver(gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100_000);
    const agentPick = r.int(100);
    const field = r.weighted({ phone: 5, name: 3, both: 2 });
    const phone = r.pick(CUSTOMERS)!;
    const name = `Receveur corrige ${r.int(50)}`;
    return async () => {
      const t = this.pick(pick, 0.8);
      if (!t) return;
      const body = {
        ...(field !== "name" ? { receiver_phone: phone } : {}),
        ...(field !== "phone" ? { receiver_name: name } : {}),
      };
      await this.rewrite(gw, this.c.agentAt(agentPick), t, body);
    };
  }

  private async rewrite(
    gw: string,
    agent: SimAgent,
    t: KnownTransaction,
    body: { receiver_phone?: string; receiver_name?: string },
  ): Promise<Reply> {
    const a = await this.board(gw, agent, t, "PATCH", `/v1/transactions/${t.id}/receiver`, body);
    this.c.note(
      [t.id],
      `agent ${agent.login} rewrites the receiver of ${t.requestId} to ${JSON.stringify(body)} → ${a.status} ${outcomeOf(a)}`,
    );
    if (a.status === 200) {
      t.receiverPhone = String(a.body?.receiver_phone ?? body.receiver_phone ?? t.receiverPhone);
      t.receiverName = String(a.body?.receiver_name ?? body.receiver_name ?? t.receiverName);
    }
    return a;
  }

  private prepareClose(n: number, gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100_000);
    const agentPick = r.int(100);
    const how = r.chance(0.5) ? "cancel" : "close";
    return async () => {
      const t = this.pick(pick, 0.9);
      if (t) await this.close(gw, this.c.agentAt(agentPick), t, how, `simulated ${n}`);
    };
  }

  private async close(gw: string, agent: SimAgent, t: KnownTransaction, how: string, why: string): Promise<Reply> {
    const a =
      how === "cancel"
        ? await this.board(gw, agent, t, "POST", `/v1/transactions/${t.id}/cancel`, { reason: why })
        : await this.board(gw, agent, t, "POST", `/v1/transactions/${t.id}/close-by-receipt`);
    this.c.note(
      [t.id],
      `agent ${agent.login} ${how}s transaction ${t.requestId} (${why}) → ${a.status} ${outcomeOf(a)}`,
    );
    if (a.status === 200) t.state = String(a.body?.state ?? how);
    return a;
  }

  /** Automation names a launch's request id (`tx-<transaction>`): reserved to intake, refused 403. */
  private prepareReserved(gw: string): () => Promise<void> {
    const r = this.c.random;
    const pick = r.int(100_000);
    const changed = r.chance(0.5);
    return async () => {
      const t = this.pick(pick, 0.7);
      if (!t) return;
      const body = {
        request_id: `tx-${t.id}`,
        agent_id: this.c.agents[0].agentId,
        operator: "operator_a",
        type_op: "deposit",
        montant: changed ? t.amount + 500 : t.amount,
        client: { msisdn: t.receiverPhone, nom: t.receiverName },
      };
      const a = await this.c.http(gw, "POST", "/v1/operations", { apiKey: true }, body);
      this.c.checked(8);
      const id = a.body?.operation_id as string | undefined;
      this.c.note(
        [t.id, ...(id ? [id] : [])],
        `automation creates an operation with the launch's request id tx-${t.id} (${t.state}) → ${a.status} ${outcomeOf(a)}`,
      );
      if (acknowledged(a))
        this.c.note(
          [t.id, ...(id ? [id] : [])],
          `VIOLATION-CANDIDATE(8) automation's create with the reserved request id tx-${t.id} was accepted (${a.status} ${id ?? ""})`,
        );
    };
  }
}
