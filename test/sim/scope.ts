// Scope (invariant 14): no answer, list or stream hint reaches a caller who may not see it. The
// board's agents and supervisor read, every check, the lists and details of the contract
// (transfer-operations.md: a non-admin lists only its own operations and reads only its own;
// the arbitration queue holds its own transfers and those on the SIMs its grant assigns, the
// fleet's for a supervisor; orphans, those on its SIMs, the fleet's for a supervisor; the
// transactions, every pending one and those it launched) and keep an event stream open
// (GET /v1/events) whose every hint is judged by the same rules. Grants and roles change while
// the simulation runs (admins.ts), so a row is judged against every grant and role the agent
// held from a few seconds before the answer to the answer (fleet's table, read every second):
// a list read while a narrowing is acknowledged may still show the old scope, nothing more.
import type { Http, SimAgent } from "./context.ts";

/** What an agent held at one time: role and the SIMs of its grant. */
interface Held {
  at: number;
  role: string;
  sims: string[];
}

/** How far back a grant still excuses a row (a read in flight while the grant changed). */
const SLACK_MS = 6_000;

export interface ScopeRow {
  agent_id?: string;
  sim_id: string | null;
  op_type: string;
}

export interface Hint {
  agent: string;
  login: string;
  kind: string;
  id: string;
  status: string;
  at: number;
}

export type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;

export class Scope {
  /** Every hint received by a watched agent, in order. */
  readonly hints: Hint[] = [];
  private readonly held = new Map<string, Held[]>();
  private running = true;
  private readonly streams: Promise<void>[] = [];
  private readonly watched = new Set<string>();
  private readonly aborts = new Set<AbortController>();

  constructor(private readonly query: Query) {}

  /** Fleet's roles and grants now (the refresher calls it every second). */
  async snapshot(): Promise<void> {
    const r = await this.query<{ id: string; role: string; sims: string[] | null }>(
      `select a.id::text, a.role, g.allowed_sim_ids::text[] as sims
         from fleet.agents a left join fleet.access_grants g on g.agent_id = a.id`,
    ).catch(() => undefined);
    if (!r) return;
    const at = performance.now();
    for (const x of r) {
      const list = this.held.get(x.id) ?? [];
      const last = list.at(-1);
      const sims = [...(x.sims ?? [])].sort();
      if (!last || last.role !== x.role || last.sims.join() !== sims.join()) list.push({ at, role: x.role, sims });
      this.held.set(x.id, list);
    }
  }

  /** The roles and grants in effect at some time in [at - SLACK, at]. */
  private heldAround(agentId: string, at: number): Held[] {
    const list = this.held.get(agentId) ?? [];
    const out: Held[] = [];
    for (let i = 0; i < list.length; i++) {
      const until = list[i + 1]?.at ?? Infinity;
      if (list[i].at <= at && until >= at - SLACK_MS) out.push(list[i]);
    }
    return out;
  }

  /**
   * Whether the agent may see what is on a SIM: orphans (`evidence`: a supervisor sees the
   * fleet's) or unproven transfers (`dispatch`: a supervisor its grant's, as an agent).
   */
  seesSim(agentId: string, simId: string | null, at: number, service: "evidence" | "dispatch"): boolean {
    const fleet = service === "evidence" ? ["supervisor", "admin"] : ["admin"];
    return this.heldAround(agentId, at).some(
      (h) => fleet.includes(h.role) || (simId !== null && h.sims.includes(simId)),
    );
  }

  /** Opens an event stream for each agent not yet watched (again when it ends, while the run lasts). */
  watch(gateways: string[], agents: SimAgent[]): void {
    for (const [i, a] of agents.entries()) {
      if (this.watched.has(a.agentId) || !a.active) continue;
      this.watched.add(a.agentId);
      this.streams.push(this.stream(gateways[i % gateways.length], a));
    }
  }

  private async stream(gateway: string, agent: SimAgent): Promise<void> {
    while (this.running && agent.active) {
      const abort = new AbortController();
      this.aborts.add(abort);
      try {
        const res = await fetch(`${gateway}/v1/events`, {
          headers: { authorization: `Bearer ${agent.token}`, accept: "text/event-stream" },
          signal: abort.signal,
        });
        if (res.ok && res.body) await this.read(res.body, agent);
        else await res.body?.cancel();
      } catch {
        /* a gateway stopped, the stream ended: open it again */
      } finally {
        this.aborts.delete(abort);
      }
      if (this.running) await new Promise((r) => setTimeout(r, 1000));
    }
  }

  private async read(body: ReadableStream<Uint8Array>, agent: SimAgent): Promise<void> {
    const decoder = new TextDecoder();
    let buffer = "";
    for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let cut: number;
      while ((cut = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, cut);
        buffer = buffer.slice(cut + 2);
        const event = /^event: (.+)$/m.exec(block)?.[1];
        const data = /^data: (.+)$/m.exec(block)?.[1];
        if (!event || !data || ["ready", "end"].includes(event)) continue;
        const h = JSON.parse(data) as { kind: string; id: string; status: string };
        this.hints.push({ agent: agent.agentId, login: agent.login, ...h, at: performance.now() });
      }
    }
  }

  async stop(): Promise<void> {
    this.running = false;
    for (const a of this.aborts) a.abort();
    await Promise.all(this.streams);
  }

  /**
   * Why a hint should not have reached its agent, or undefined. `ops` and `txs` are what the
   * tables hold of the ids it names. A "gone" hint names an id of the stream's earlier view
   * (sent silently at its start): it is not judged.
   */
  judgeHint(
    h: Hint,
    ops: Map<string, ScopeRow>,
    txs: Map<string, { launched_by: string | null }>,
    messageSims: Map<string, string | null>,
  ): string | undefined {
    if (h.status === "gone") return undefined;
    if (h.kind === "alert") return `an alert (admins only) hinted to ${h.login}`;
    if (h.kind === "operation") {
      const op = ops.get(h.id);
      if (!op) return `operation ${h.id} hinted to ${h.login} does not exist`;
      if (op.agent_id === h.agent) return undefined;
      if (h.status === "no_evidence" && this.seesSim(h.agent, op.sim_id, h.at, "dispatch")) return undefined;
      return `another agent's operation ${h.id} (${h.status}, SIM ${op.sim_id}) hinted to ${h.login}`;
    }
    if (h.kind === "transaction") {
      if (h.status === "pending") return undefined;
      const t = txs.get(h.id);
      if (t?.launched_by === h.agent) return undefined;
      return `transaction ${h.id} (${h.status}, launched by ${t?.launched_by ?? "nobody"}) hinted to ${h.login}`;
    }
    if (h.kind === "message") {
      const sim = messageSims.get(h.id) ?? null;
      if (this.seesSim(h.agent, sim, h.at, "evidence")) return undefined;
      return `orphan ${h.id} on SIM ${sim} (outside ${h.login}'s grant) hinted to it`;
    }
    return undefined;
  }

  /**
   * Every agent and the supervisor read the operations list, another agent's operation, the
   * arbitration queue, the orphans and the transactions; each row they are answered is judged.
   * Returns how many answers were judged and what should not have reached its caller.
   */
  async probe(
    http: Http,
    gateway: string,
    agents: SimAgent[],
    ops: Map<string, ScopeRow>,
  ): Promise<{ judged: number; problems: { detail: string; ids: string[] }[] }> {
    const problems: { detail: string; ids: string[] }[] = [];
    let judged = 0;
    const get = async (a: SimAgent, path: string) => {
      const r = await http(gateway, "GET", path, { token: a.token });
      // A session ended (deactivated agent) or a process down: nothing was shown.
      return r.status === 200 ? r : undefined;
    };
    for (const a of agents.filter((x) => x.active)) {
      const who = `${a.login} (${a.agentId})`;
      const list = await get(a, "/v1/operations?limit=250");
      for (const o of (list?.body ?? []) as { operation_id: string; agent_id: string | null }[]) {
        judged++;
        if (o.agent_id !== a.agentId)
          problems.push({
            detail: `operations list of ${who} shows ${o.agent_id}'s operation ${o.operation_id}`,
            ids: [o.operation_id],
          });
      }
      const others = [...ops.entries()]
        .filter(([, o]) => o.agent_id && o.agent_id !== a.agentId)
        .sort(([x], [y]) => x.localeCompare(y));
      for (const [id] of others.slice(-2)) {
        const r = await http(gateway, "GET", `/v1/operations/${id}`, { token: a.token });
        judged++;
        if (r.status >= 200 && r.status < 300)
          problems.push({ detail: `${who} read another agent's operation ${id}: ${r.status}`, ids: [id] });
      }
      const unproven = await get(a, "/v1/operations/unproven?all=true&limit=250");
      let at = performance.now();
      for (const o of (unproven?.body ?? []) as { operation_id: string; sim_id: string | null }[]) {
        judged++;
        if (ops.get(o.operation_id)?.agent_id === a.agentId || this.seesSim(a.agentId, o.sim_id, at, "dispatch"))
          continue;
        problems.push({
          detail: `arbitration queue of ${who} shows operation ${o.operation_id} on SIM ${o.sim_id}, outside its grant`,
          ids: [o.operation_id],
        });
      }
      const orphans = await get(a, "/v1/evidences?unmatched=true&all=true&limit=250");
      at = performance.now();
      for (const m of (orphans?.body ?? []) as { id: string; sim_id: string | null }[]) {
        judged++;
        if (!this.seesSim(a.agentId, m.sim_id, at, "evidence"))
          problems.push({
            detail: `orphans of ${who} show message ${m.id} on SIM ${m.sim_id}, outside its grant`,
            ids: [m.id],
          });
      }
      const txs = await get(a, "/v1/transactions?limit=250");
      for (const t of (txs?.body ?? []) as { id: string; state: string; launched_by: string | null }[]) {
        judged++;
        if (t.state !== "pending" && t.launched_by !== a.agentId)
          problems.push({
            detail: `transactions of ${who} show ${t.state} transaction ${t.id} launched by ${t.launched_by}`,
            ids: [t.id],
          });
      }
    }
    return { judged, problems };
  }
}
