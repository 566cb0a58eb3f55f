// Exactly once and agreement (invariants 12 and 13). Every event is consumed exactly once: each
// consumer's inbox holds every event of the types it takes (once the system is drained), no
// confirmation is announced twice, and what consumers count (a contact's transfers) counts each
// confirmation once. Once drained, analytics and the day's reconciliation agree with dispatch
// and evidence to the franc: analytics' report (GET /v1/analytics?all=true) against the
// operations the API lists, its per-SIM rows against dispatch's (the contract has no per-SIM
// figure: read from the tables), the reconciliation of each day and SIM
// (GET /v1/reconciliations/daily) against the messages evidence holds.
import { consumerEffects } from "./consumers.ts";
import type { Http } from "./context.ts";

export type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
export interface Problem {
  detail: string;
  ids: string[];
}

/** Consumers whose handlers take every event of their types (no `applies`), and what they read. */
const CONSUMED: { consumer: string; schema: string; producer: string; types: string[] }[] = [
  { consumer: "analytics.operations", schema: "analytics", producer: "dispatch", types: ["OperationChanged"] },
  {
    consumer: "analytics.messages",
    schema: "analytics",
    producer: "evidence",
    types: ["MessageStored", "MessageCorrelated", "MessageLinked", "MessageDismissed"],
  },
  { consumer: "analytics.transactions", schema: "analytics", producer: "intake", types: ["TransactionChanged"] },
];
const TRANSFERS = ["deposit", "withdrawal", "float_deposit"];
/** Local day (UTC+1) of a timestamp column. */
const localDay = (col: string) => `to_char(${col} at time zone 'UTC' + interval '1 hour', 'YYYY-MM-DD')`;

export class Agreement {
  /** The contacts automation's operations name (customer_id by msisdn). */
  readonly contacts = new Map<string, string>();

  constructor(
    private readonly query: Query,
    private readonly http: Http,
    private readonly gateway: () => string,
    private readonly adminToken: string,
    /** The API key: messaging's routes take it as a bearer token. */
    private readonly messagingKey: string,
  ) {}

  /** One contact per customer of automation's creates (their operations carry its contact_id). */
  async setUp(customers: string[]): Promise<void> {
    for (const [i, msisdn] of customers.entries()) {
      const r = await this.http(
        this.gateway(),
        "POST",
        "/v1/contacts",
        { token: this.messagingKey },
        {
          first_name: "Client",
          last_name: `Simule ${i}`,
          phone: msisdn,
        },
      );
      if (r.status !== 201) throw new Error(`contact ${msisdn}: ${r.status} ${JSON.stringify(r.body)}`);
      this.contacts.set(msisdn, r.body.customer_id as string);
    }
  }

  /**
   * Exactly once. `final`: the system is drained, so what is missing counts too. Returns how many
   * things were judged.
   */
  async exactlyOnce(final: boolean, out: Problem[]): Promise<number> {
    let judged = 0;
    const twice = await this.query<{ key: string; n: number }>(
      `select key, count(*)::int as n from dispatch.outbox where type like '%.OperationConfirmed' group by key having count(*) > 1`,
    );
    judged++;
    for (const t of twice) out.push({ detail: `operation ${t.key} announced confirmed ${t.n} times`, ids: [t.key] });
    for (const [msisdn, id] of this.contacts) {
      const r = await this.http(this.gateway(), "GET", `/v1/contacts/${id}`, { token: this.messagingKey });
      if (r.status !== 200) continue;
      const [c] = await this.query<{ n: number; ops: string[] }>(
        `select count(*)::int as n, coalesce(array_agg(operation_id::text), '{}') as ops from dispatch.operations
          where contact_id = $1 and status = 'confirmed'`,
        [id],
      );
      judged++;
      const counted = Number(r.body.transfer_count);
      if (counted > c.n || (final && counted !== c.n))
        out.push({
          detail: `contact ${id} (${msisdn}) counts ${counted} transfers; ${c.n} operations naming it are confirmed`,
          ids: c.ops,
        });
    }
    // Each consumer's effects against their source, whenever it holds an entity's latest event.
    judged += await consumerEffects(this.query, [...this.contacts.values()], final, out);
    if (!final) return judged;
    for (const c of CONSUMED) {
      const missing = await this.query<{ id: string; type: string; key: string }>(
        `select o.id::text, o.type, o.key from "${c.producer}".outbox o
          where o.type ~ $1
            and not exists (select 1 from "${c.schema}".inbox i where i.consumer = $2 and i.event_id = o.id)`,
        [`\\.(${c.types.join("|")})$`, c.consumer],
      );
      judged++;
      for (const m of missing.slice(0, 5))
        out.push({ detail: `${c.consumer} never consumed ${m.type} ${m.id} (key ${m.key})`, ids: [m.key] });
    }
    const confirmedMissing = await this.query<{ key: string }>(
      `select o.key from dispatch.outbox o join dispatch.operations op on op.operation_id::text = o.key
        where o.type like '%.OperationConfirmed' and op.contact_id = any($1)
          and not exists (select 1 from messaging.inbox i where i.consumer = 'messaging.operations' and i.event_id = o.id)`,
      [[...this.contacts.values()]],
    );
    judged++;
    for (const m of confirmedMissing)
      out.push({ detail: `messaging never consumed the confirmation of ${m.key}`, ids: [m.key] });
    return judged;
  }

  /**
   * Until every outbox is published, analytics' inbox holds every event it takes, and no
   * operation awaits its evidence or runs (at most `ms`). Those two states are the ones the
   * system's own jobs still move once the actions have stopped (the sweep at the end of the
   * evidence window, the running timeout): without them, an operation moved between the
   * analytics report's read and the operations list's read was judged a disagreement (seed
   * 1899218594: "reliability.by_status.no_evidence is 1; the operations listed say 2").
   */
  async drained(ms: number): Promise<boolean> {
    for (const until = Date.now() + ms; Date.now() < until; await new Promise((r) => setTimeout(r, 1000))) {
      const probe: Problem[] = [];
      await this.exactlyOnce(true, probe).catch(() => probe.push({ detail: "unreadable", ids: [] }));
      const [u] = await this.query<{ n: number }>(
        `select ((select count(*) from dispatch.outbox where published_at is null) +
                 (select count(*) from evidence.outbox where published_at is null) +
                 (select count(*) from intake.outbox where published_at is null) +
                 (select count(*) from dispatch.operations where status in ('awaiting_evidence', 'running')))::int as n`,
      );
      if (!probe.some((p) => / never consumed /.test(p.detail)) && u.n === 0) return true;
    }
    return false;
  }

  /** Analytics against the operations the API lists (and per SIM, against dispatch's tables). Returns judged. */
  async analytics(out: Problem[]): Promise<number> {
    const admin = { token: this.adminToken };
    const report = await this.http(this.gateway(), "GET", "/v1/analytics?all=true", admin);
    if (report.status !== 200) {
      out.push({ detail: `GET /v1/analytics?all=true answered ${report.status}`, ids: [] });
      return 1;
    }
    const ops = await this.listAll();
    if (!ops) return 0;
    const want = figures(ops);
    const got = report.body;
    const judged: [string, number, number][] = [
      ["activity.operations", got.activity.operations, want.operations],
      ["activity.transfers", got.activity.transfers, want.transfers],
      ["activity.balance_checks", got.activity.balance_checks, want.operations - want.transfers],
      ["money.transfers (confirmed)", got.money.transfers, want.confirmedTransfers],
      ["money.sent_xaf", got.money.sent_xaf, want.sent],
      ["money.fees_xaf", got.money.fees_xaf, await this.proofFees(ops)],
      ["reliability.confirmed", got.reliability.confirmed, want.byStatus.get("confirmed") ?? 0],
    ];
    for (const [status, n] of want.byStatus)
      judged.push([`reliability.by_status.${status}`, got.reliability.by_status[status] ?? 0, n]);
    for (const d of got.activity.daily as { day: string; operations: number; transfers: number; confirmed: number }[]) {
      const w = want.byDay.get(d.day) ?? { operations: 0, transfers: 0, confirmed: 0 };
      judged.push([`daily ${d.day} operations`, d.operations, w.operations]);
      judged.push([`daily ${d.day} transfers`, d.transfers, w.transfers]);
      judged.push([`daily ${d.day} confirmed`, d.confirmed, w.confirmed]);
    }
    for (const a of got.activity.by_agent as { agent_id: string; operations: number }[])
      judged.push([`by_agent ${a.agent_id} operations`, a.operations, want.byAgent.get(a.agent_id) ?? 0]);
    for (const [what, g, w] of judged)
      if (Number(g) !== w) out.push({ detail: `analytics ${what} is ${g}; the operations listed say ${w}`, ids: [] });
    return judged.length + (await this.perSim(out));
  }

  /** Every operation through GET /v1/operations (admin), a day and a status at a time; undefined if a page is full. */
  private async listAll(): Promise<Op[] | undefined> {
    const [span] = await this.query<{ days: string[] }>(
      `select coalesce(array_agg(distinct ${localDay("created_at")}), '{}') as days from dispatch.operations`,
    );
    const statuses = [
      "queued",
      "running",
      "awaiting_evidence",
      "no_evidence",
      "confirmed",
      "failed",
      "rejected",
      "awaiting_manual_dial",
    ];
    const all: Op[] = [];
    for (const day of span.days)
      for (const status of statuses) {
        const r = await this.http(this.gateway(), "GET", `/v1/operations?date=${day}&status=${status}&limit=250`, {
          token: this.adminToken,
        });
        if (r.status !== 200 || r.body.length >= 250) return undefined;
        all.push(...(r.body as Op[]));
      }
    return all;
  }

  /** What the proving messages of the confirmed transfers charged (evidence's fee of each). */
  private async proofFees(ops: Op[]): Promise<number> {
    const ids = ops.filter((o) => o.status === "confirmed" && TRANSFERS.includes(o.op_type)).map((o) => o.operation_id);
    const [r] = await this.query<{ fees: string }>(
      `select coalesce(sum(m.fee), 0)::text as fees from dispatch.operations o
         join evidence.messages m on m.id::text = coalesce(o.evidence_message_id,
           (select p.id::text from evidence.messages p where p.operation_id = o.operation_id and p.link = 'proof'))
        where o.operation_id::text = any($1)`,
      [ids],
    );
    return Number(r.fees);
  }

  /** Analytics' rows per SIM against dispatch's and evidence's: operations, confirmed, sent, fees. */
  private async perSim(out: Problem[]): Promise<number> {
    const rows = await this.query<{ sim_id: string; what: string; analytics: string; dispatch: string }>(
      `with d as (
         select o.sim_id::text as sim_id, count(*) as ops, count(*) filter (where o.status = 'confirmed') as confirmed,
                coalesce(sum(o.montant) filter (where o.status = 'confirmed' and o.op_type = any($1)), 0) as sent,
                coalesce(sum(m.fee) filter (where o.status = 'confirmed' and o.op_type = any($1)), 0) as fees
           from dispatch.operations o
           left join evidence.messages m on m.id::text = coalesce(o.evidence_message_id,
             (select p.id::text from evidence.messages p where p.operation_id = o.operation_id and p.link = 'proof'))
          where o.sim_id is not null group by 1),
       a as (
         select sim_id::text as sim_id, count(*) as ops, count(*) filter (where status = 'confirmed') as confirmed,
                coalesce(sum(montant) filter (where status = 'confirmed' and is_transfer), 0) as sent,
                coalesce(sum(fee) filter (where status = 'confirmed' and is_transfer), 0) as fees
           from analytics.operations where sim_id is not null group by 1)
       select coalesce(d.sim_id, a.sim_id) as sim_id, x.what, x.a::text as analytics, x.d::text as dispatch
         from d full join a on a.sim_id = d.sim_id,
         lateral (values ('operations', a.ops, d.ops), ('confirmed', a.confirmed, d.confirmed),
                         ('sent_xaf', a.sent, d.sent), ('fees_xaf', a.fees, d.fees)) as x(what, a, d)`,
      [TRANSFERS],
    );
    for (const r of rows)
      if ((r.analytics ?? "0") !== (r.dispatch ?? "0"))
        out.push({
          detail: `analytics' ${r.what} of SIM ${r.sim_id} is ${r.analytics ?? 0}; dispatch and evidence say ${r.dispatch ?? 0}`,
          ids: [r.sim_id],
        });
    return rows.length;
  }

  /** Each day's reconciliation of each SIM against the messages evidence holds. Returns judged. */
  async reconciliation(out: Problem[]): Promise<number> {
    const want = await this.query<{
      day: string;
      sim_id: string;
      messages: number;
      confirmed: number;
      divergent: number;
      proven: string;
      fees: string;
    }>(
      `select ${localDay("received_at")} as day, sim_id, count(*)::int as messages,
              (count(*) filter (where outcome = 'confirmed'))::int as confirmed,
              (count(*) filter (where outcome = 'divergent'))::int as divergent,
              coalesce(sum(amount) filter (where link = 'proof' and kind is distinct from 'BAL'), 0)::text as proven,
              coalesce(sum(fee) filter (where link = 'proof'), 0)::text as fees
         from evidence.messages where sim_id is not null group by 1, 2`,
    );
    let judged = 0;
    for (const day of new Set(want.map((w) => w.day))) {
      const r = await this.http(this.gateway(), "GET", `/v1/reconciliations/daily?day=${day}`, {
        token: this.adminToken,
      });
      if (r.status !== 200) {
        out.push({ detail: `GET /v1/reconciliations/daily?day=${day} answered ${r.status}`, ids: [] });
        continue;
      }
      const sims = new Map((r.body.sims as Record<string, number | string>[]).map((s) => [String(s.sim_id), s]));
      for (const w of want.filter((x) => x.day === day)) {
        const s = sims.get(w.sim_id);
        const pairs: [string, unknown, number][] = [
          ["messages", s?.messages, w.messages],
          ["confirmed", s?.confirmed, w.confirmed],
          ["divergent", s?.divergent, w.divergent],
          ["proven_xaf", s?.proven_xaf, Number(w.proven)],
          ["proven_fees_xaf", s?.proven_fees_xaf, Number(w.fees)],
        ];
        for (const [what, g, v] of pairs) {
          judged++;
          if (Number(g ?? 0) !== v)
            out.push({
              detail: `reconciliation of SIM ${w.sim_id} on ${day}: ${what} ${String(g)}; its messages say ${v}`,
              ids: [w.sim_id],
            });
        }
      }
    }
    return judged;
  }
}

interface Op {
  operation_id: string;
  agent_id: string;
  status: string;
  op_type: string;
  montant: number;
  created_at: string;
}

/** What the listed operations add up to, as analytics counts them (local day of creation). */
function figures(ops: Op[]) {
  const byStatus = new Map<string, number>();
  const byDay = new Map<string, { operations: number; transfers: number; confirmed: number }>();
  const byAgent = new Map<string, number>();
  let [transfers, confirmedTransfers, sent] = [0, 0, 0];
  for (const o of ops) {
    const transfer = TRANSFERS.includes(o.op_type);
    const confirmed = o.status === "confirmed";
    byStatus.set(o.status, (byStatus.get(o.status) ?? 0) + 1);
    byAgent.set(o.agent_id, (byAgent.get(o.agent_id) ?? 0) + 1);
    const day = new Date(Date.parse(o.created_at) + 3_600_000).toISOString().slice(0, 10);
    const d = byDay.get(day) ?? { operations: 0, transfers: 0, confirmed: 0 };
    d.operations++;
    if (transfer) d.transfers++;
    if (confirmed) d.confirmed++;
    byDay.set(day, d);
    if (transfer) transfers++;
    if (transfer && confirmed) {
      confirmedTransfers++;
      sent += Number(o.montant);
    }
  }
  return { operations: ops.length, transfers, confirmedTransfers, sent, byStatus, byDay, byAgent };
}
