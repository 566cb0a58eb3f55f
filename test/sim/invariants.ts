// The money invariants, checked from the gateway's answers and the services' tables while the
// simulation runs and once more at its end. A violation names the entities it concerns, so
// that their history (what every actor did to them, and what the tables hold) can be printed.
import { DEFAULT_SENDER_IDS, senderKey } from "../../services/evidence/src/domain/senders.ts";
import { Checks } from "../chaos/checks.ts";
import type { Actors, CreateRecord } from "./actors.ts";
import type { DriftedText } from "./drift.ts";
import type { Agreement, Problem } from "./agreement.ts";
import type { SimAgent } from "./context.ts";
import type { Hint, Scope, ScopeRow } from "./scope.ts";
import type { Finding, WebhookChecks } from "./webhook-checks.ts";

export interface Violation {
  invariant: string;
  detail: string;
  /** Operations, SIMs, messages it concerns. */
  ids: string[];
  /** Seconds into the run when it was first seen. */
  foundAtS: number;
}

export const INVARIANTS = [
  "confirmed only by the operator's proof of its exact amount, or a person's recorded decision",
  "a message proves at most one operation, an operation is proven at most once",
  "no two paid operations for one intent (a retry and its parent, two launches of one transaction) without an alert",
  "a SIM's free balance never below zero at a create",
  "every acknowledged write exists",
  "no 5xx but a 503 with Retry-After while a process is down",
  "no operation stuck past its lease",
  "a replay answers the operation of its request id; a revoked right acts no more",
  "a transaction's operation is its launch's (tx-<id>, its receiver, its amount), none when cancelled or closed",
  "a text a wording rule reads as other than a deposit (a balance reply for a balance check) confirms nothing",
  "scope: a transaction another agent launched answers an agent or supervisor 404, never its state",
  "every event is consumed exactly once: each consumer's inbox holds every event it takes, its effects count it once",
  "once drained, analytics and the day's reconciliation agree with dispatch and evidence to the franc",
  "scope: no list, detail or stream hint reaches an agent who may not see it (own operations, its grant's SIMs)",
  "webhooks: each delivery signed with its endpoint's secret, of an event it asked for, true of its subject, the same body when it comes again; each event owed delivered at least once",
  "matching operations and fleet limits as the contract says: a matching operation never claimed nor changed once settled, listed to its owner only; a limit reads back as recorded, never enforced at creation",
] as const;

const DEBITING = ["deposit", "withdrawal", "float_deposit"];
/** Failure reasons no device outcome gives (docs/decisions/dispatch.md). */
const NOT_REPORTED = ["handset_never_reported", "parent_went_through", "sim_deleted", "device_deleted"];

export class Invariants {
  readonly violations = new Map<string, Violation>();
  /** How many times each invariant was evaluated. */
  readonly evaluated: Record<string, number> = {};
  private readonly pendingCreates: CreateRecord[] = [];
  private readonly checks: Checks;
  /** The answers' checks already counted, by invariant index (Actors.checked). */
  private readonly checkedCounted: Record<number, number> = {};

  constructor(
    databaseUrl: string,
    private readonly started: number,
    private readonly o: { leaseS: number; sweepS: number; faultWindows: () => { from: number; to: number }[] },
  ) {
    this.checks = new Checks(databaseUrl, "sim-checks");
  }

  query<T>(sql: string, params: unknown[] = []): Promise<T[]> {
    return this.checks.query<T>(sql, params);
  }

  killServiceConnections(): Promise<number> {
    return this.checks.killServiceConnections();
  }

  onCreate(c: CreateRecord): void {
    this.pendingCreates.push(c);
  }

  private found(invariant: (typeof INVARIANTS)[number], detail: string, ids: string[]): void {
    const key = `${invariant}|${detail}`;
    if (this.violations.has(key)) return;
    this.violations.set(key, {
      invariant,
      detail,
      ids: ids.filter(Boolean),
      foundAtS: (performance.now() - this.started) / 1000,
    });
  }

  private count(invariant: (typeof INVARIANTS)[number], n = 1): void {
    this.evaluated[invariant] = (this.evaluated[invariant] ?? 0) + n;
  }

  /** Exactly once and agreement (set by run.ts). */
  agreement?: Agreement;
  /** Scope of lists, details and stream hints, with the agents and gateways it reads through. */
  scope?: { watch: Scope; agents: SimAgent[]; gateways: string[] };
  private probes = 0;
  private hintsJudged = 0;
  private hintsWaiting: Hint[] = [];
  /** Set when the system did not drain in time: the final agreement is not judged. */
  drainedInTime = true;
  /** Webhook deliveries (set by run.ts). */
  webhooks?: WebhookChecks;

  /** Every check; `final` adds those that need the load stopped (acknowledged writes all in). */
  async run(actors: Actors, o: { final: boolean; notes: Map<string, unknown[]> }): Promise<void> {
    await this.exactlyOnce(o.final);
    await this.scoped(actors);
    await this.confirmations();
    await this.doubles();
    await this.intents();
    await this.freeBalance();
    await this.answers(actors);
    await this.writes(actors, o.final);
    const stuck = await this.checks.stuckRunning(this.o.leaseS, this.o.sweepS + 5);
    this.count("no operation stuck past its lease");
    for (const id of stuck)
      this.found("no operation stuck past its lease", `operation ${id} running past its lease`, [id]);
    await this.lostOutcomes(actors);
    await this.driftedReadings(actors);
    await this.transactions(actors);
    await this.taughtReadings();
    await this.webhooked(o.final);
    this.candidates(actors, o.notes);
  }

  /** Invariant 15: the deliveries received since the last check; at the end, at least once. */
  private async webhooked(final: boolean): Promise<void> {
    if (!this.webhooks) return;
    const inv = INVARIANTS[14];
    const out: Finding[] = [];
    this.count(inv, await this.webhooks.deliveries(out, final));
    if (final) this.count(inv, await this.webhooks.atLeastOnce(out));
    for (const p of out) this.found(inv, p.detail, p.ids);
  }

  /** What the actors checked from answers: `VIOLATION-CANDIDATE(i) ` lines (no index: invariant 8). */
  private candidates(actors: Actors, notes: Map<string, unknown[]>): void {
    actors.matching.judgeRows(); // invariant 16 at every check too, not only at matching actions
    for (const [i, n] of Object.entries(actors.checked)) {
      this.count(INVARIANTS[Number(i)], n - (this.checkedCounted[Number(i)] ?? 0));
      this.checkedCounted[Number(i)] = n;
    }
    for (const [id, lines] of notes)
      for (const l of lines as { line: string }[]) {
        const m = /VIOLATION-CANDIDATE(?:\((\d+)\))? /.exec(l.line);
        if (m) this.found(INVARIANTS[Number(m[1] ?? 7)], l.line.replace(m[0], ""), [id]);
      }
  }

  private async confirmations(): Promise<void> {
    const rows = await this.query<{
      operation_id: string;
      op_type: string;
      operator: "operator_a" | "operator_b";
      montant: string;
      sim_id: string | null;
      confirmed_by: string | null;
      decision_note: string | null;
      decided_by: string | null;
      message_id: string | null;
      sender: string | null;
      kind: string | null;
      amount: string | null;
      message_sim: string | null;
    }>(
      `select o.operation_id::text, o.op_type, o.operator, o.montant::text, o.sim_id, o.confirmed_by, o.decision_note,
              o.decided_by::text, m.id::text as message_id, m.sender, m.kind, m.amount::text, m.sim_id as message_sim
         from dispatch.operations o
         left join evidence.messages m
           on m.id::text = coalesce(o.evidence_message_id,
                (select p.id::text from evidence.messages p where p.operation_id = o.operation_id and p.link = 'proof'))
        where o.status = 'confirmed'`,
    );
    const inv = INVARIANTS[0];
    this.count(inv, rows.length);
    for (const r of rows) {
      // The operation and its message: the SIM's other traffic would only lengthen the history.
      const ids = [r.operation_id, r.message_id ?? ""];
      if (r.confirmed_by === "settle" || r.confirmed_by === "arbitrate") {
        if (!r.decision_note?.trim() || !r.decided_by)
          this.found(inv, `operation ${r.operation_id} confirmed by ${r.confirmed_by} with no recorded decision`, ids);
        continue;
      }
      if (!r.message_id) {
        this.found(
          inv,
          `operation ${r.operation_id} confirmed (${r.confirmed_by ?? "?"}) with no proving message`,
          ids,
        );
        continue;
      }
      const senders = DEFAULT_SENDER_IDS[r.operator].map(senderKey);
      const problems: string[] = [];
      if (!r.sender || !senders.includes(senderKey(r.sender)))
        problems.push(`sender "${r.sender}" is not the operator's`);
      if (r.message_sim !== r.sim_id) problems.push(`the message is on SIM ${r.message_sim}, not ${r.sim_id}`);
      if (r.op_type === "balance") {
        if (r.kind !== "BAL") problems.push(`a ${r.kind ?? "unrecognised"} text confirms a balance check`);
      } else if (r.kind !== "DEP" && r.kind !== null) problems.push(`a ${r.kind} text (not a deposit) confirms it`);
      else if (r.amount !== r.montant)
        problems.push(`the text says ${r.amount ?? "no amount"}, the operation ${r.montant}`);
      if (problems.length)
        this.found(
          inv,
          `operation ${r.operation_id} confirmed by ${r.confirmed_by ?? "?"} with message ${r.message_id}: ${problems.join("; ")}`,
          ids,
        );
    }
  }

  /**
   * Invariant 7, app restarts: an operation whose outcome a kill lost (never reported) leaves
   * `running` by its lease (`no_evidence`, `handset_never_reported`), a proof or a person, never
   * as if reported (`awaiting_evidence`, a failure with another reason).
   */
  private async lostOutcomes(actors: Actors): Promise<void> {
    const inv = INVARIANTS[6];
    const due = actors.restarts.lost.filter(
      (l) => performance.now() - l.claimedAt > (this.o.leaseS + this.o.sweepS + 5) * 1000,
    );
    if (!due.length) return;
    const rows = await this.query<{
      operation_id: string;
      status: string;
      failure_reason: string | null;
      decided_by: string | null;
    }>(
      `select operation_id::text, status, failure_reason, decided_by::text
         from dispatch.operations where operation_id::text = any($1)`,
      [due.map((l) => l.operationId)],
    );
    this.count(inv, rows.length);
    for (const r of rows) {
      const l = due.find((x) => x.operationId === r.operation_id)!;
      // A failure after the lease: a person's (settled did_not_arrive, arbitrated), or not a device's.
      const notReported = [...NOT_REPORTED, "did_not_arrive"].includes(r.failure_reason ?? "") || !!r.decided_by;
      const wrong =
        r.status === "running" ||
        r.status === "awaiting_evidence" ||
        (r.status === "no_evidence" && r.failure_reason !== "handset_never_reported") ||
        (r.status === "failed" && !notReported);
      if (wrong)
        this.found(
          inv,
          `operation ${r.operation_id}, whose outcome an app restart lost (${l.stage}), is ${r.status} (${r.failure_reason ?? "no reason"}), not ended by its lease, a proof or a person`,
          [r.operation_id],
        );
    }
  }

  /**
   * Invariant 1, wording drift: an operator's text sent drifted proves what the same text
   * undrifted would (an operation of its amount, on its SIM, of a deposit's or balance reply's
   * kind; the operation it is about, or one the same text could prove: same amount and
   * customer) or nothing; what it was read as, when it proves, is its amount or balance.
   */
  private async driftedReadings(actors: Actors): Promise<void> {
    const inv = INVARIANTS[0];
    if (!actors.drifted.length) return;
    const rows = await this.query<{
      client_message_id: string;
      message_id: string;
      sim_id: string;
      kind: string | null;
      amount: string | null;
      balance_after: string | null;
      operation_id: string;
      montant: string;
      op_type: string;
      msisdn_dest: string | null;
      about_dest: string | null;
    }>(
      `select m.client_message_id, m.id::text as message_id, m.sim_id, m.kind, m.amount::text, m.balance_after::text,
              o.operation_id::text, o.montant::text, o.op_type, o.msisdn_dest, a.msisdn_dest as about_dest
         from unnest($1::text[], $2::text[], $3::text[]) as d(client_message_id, sim_id, about)
         join evidence.messages m on m.client_message_id = d.client_message_id and m.sim_id::text = d.sim_id
         join dispatch.operations o on o.operation_id::text = m.operation_id::text
         left join dispatch.operations a on a.operation_id::text = d.about
        where m.link = 'proof'`,
      [
        actors.drifted.map((d) => d.clientMessageId),
        actors.drifted.map((d) => d.simId),
        actors.drifted.map((d) => d.operationId ?? ""),
      ],
    );
    this.count(inv, actors.drifted.length);
    for (const r of rows) {
      const d = actors.drifted.find((x) => x.clientMessageId === r.client_message_id && x.simId === r.sim_id);
      if (!d) continue;
      const problems = driftProblems(d, r);
      if (problems.length)
        this.found(
          inv,
          `message ${r.message_id}, an operator's ${d.kind} text (${d.amount ?? ""} F) sent drifted (${d.drift}), proves operation ${r.operation_id} (${r.op_type} ${r.montant} F): ${problems.join("; ")}`,
          [r.operation_id, r.message_id, ...(d.operationId ? [d.operationId] : [])],
        );
    }
  }

  private async doubles(): Promise<void> {
    const inv = INVARIANTS[1];
    this.count(inv);
    for (const p of await this.checks.doubleConfirmations()) {
      const ids = [...p.matchAll(/[0-9a-f]{8}-[0-9a-f-]{27}/g)].map((m) => m[0]);
      this.found(inv, p, ids);
    }
  }

  private async intents(): Promise<void> {
    const rows = await this.query<{
      root: string;
      ops: string[];
      bys: (string | null)[];
      messages: (string | null)[];
      alerts: number;
    }>(
      `with recursive chain as (
         select operation_id, operation_id as root from dispatch.operations where parent_operation_id is null
         union all
         select o.operation_id, c.root from dispatch.operations o join chain c on o.parent_operation_id = c.operation_id
       )
       select c.root::text, array_agg(o.operation_id::text order by o.created_at) as ops,
              array_agg(case when o.status = 'confirmed' then o.confirmed_by else 'contradicted' end
                        order by o.created_at) as bys,
              array_agg(coalesce(o.evidence_message_id, o.contradicting_message_id) order by o.created_at) as messages,
              -- an alert on one of them that names another of the chain (a double payment seen)
              (select count(*)::int from fleet.notifications n
                where n.operation_id = any(array_agg(o.operation_id::text))
                  and exists (select 1 from unnest(array_agg(o.operation_id::text)) as other(id)
                               where other.id <> n.operation_id and position(other.id in n.message) > 0)) as alerts
         from chain c join dispatch.operations o on o.operation_id = c.operation_id
        where o.status = 'confirmed'
           -- failed or rejected, but an operator's text proves it went (a withdrawn retry, never
           -- dialled, carries its parent's text and moved nothing)
           or (o.contradicting_message_id is not null and o.started_at is not null)
        group by c.root having count(*) > 1`,
    );
    const inv = INVARIANTS[2];
    this.count(inv);
    for (const r of rows) {
      const byProofs =
        r.bys.every((b) => b === "proof" || b === "attach" || b === "contradicted") &&
        new Set(r.messages.filter(Boolean)).size === r.ops.length;
      if (byProofs && r.alerts > 0) continue;
      this.found(
        inv,
        `${r.ops.length} confirmed operations for one intent (${r.ops.join(", ")}; confirmed by ${r.bys.join(", ")}; ${r.alerts} alerts)`,
        r.ops,
      );
    }
  }

  /**
   * Transactions (invariants 3 and 9): launches answered 200 name one operation per transaction,
   * the one with request id tx-<id>, which the transaction records; that operation pays the
   * transaction's receiver its amount; a transaction with an operation was launched (not pending,
   * cancelled or closed: the claim is taken before dispatch is called).
   */
  private async transactions(actors: Actors): Promise<void> {
    const rows = await this.query<{
      id: string;
      state: string;
      linked: string | null;
      receiver_phone: string;
      amount: string;
      op: string | null;
      status: string | null;
      msisdn_dest: string | null;
      montant: string | null;
    }>(
      `select t.id::text, t.state, t.operation_id::text as linked, t.receiver_phone, t.received_amount_xaf::text as amount,
              o.operation_id::text as op, o.status, o.msisdn_dest, o.montant::text
         from intake.transactions t left join dispatch.operations o on o.request_id = 'tx-' || t.id::text`,
    );
    const launched = new Map<string, Set<string>>();
    for (const l of actors.intake.launches)
      launched.set(l.transactionId, (launched.get(l.transactionId) ?? new Set()).add(l.operationId));
    const [twice, own] = [INVARIANTS[2], INVARIANTS[8]];
    this.count(twice, launched.size);
    this.count(own, rows.length);
    const local = (p: string | null) => (p ?? "").replace(/\D/g, "").slice(-9);
    for (const t of rows) {
      const answered = [...(launched.get(t.id) ?? [])];
      const ids = [t.id, t.op ?? "", t.linked ?? "", ...answered];
      if (answered.length > 1 || (t.op && answered.some((a) => a !== t.op)))
        this.found(
          twice,
          `transaction ${t.id}: launches answered ${answered.join(", ")} (its tx- operation: ${t.op})`,
          ids,
        );
      if (!t.op) continue;
      if (t.linked && t.linked !== t.op)
        this.found(twice, `transaction ${t.id} records operation ${t.linked}, its tx- operation is ${t.op}`, ids);
      if (!["launched", "done"].includes(t.state))
        this.found(own, `transaction ${t.id} is ${t.state} and its operation ${t.op} exists (${t.status})`, ids);
      if (local(t.msisdn_dest) !== local(t.receiver_phone) || t.montant !== t.amount)
        this.found(
          own,
          `transaction ${t.id} pays ${t.amount} F to ${t.receiver_phone}; its operation ${t.op} ${t.montant} F to ${t.msisdn_dest}`,
          ids,
        );
    }
  }

  /**
   * Every text a taught rule read (evaluated once each): one read as anything but DEP (BAL for a
   * balance check) proves no confirmed operation.
   */
  private async taughtReadings(): Promise<void> {
    const rows = await this.query<{
      message_id: string;
      kind: string | null;
      operation_id: string | null;
      op_type: string | null;
    }>(
      `select m.id::text as message_id, w.kind, o.operation_id::text, o.op_type
         from evidence.messages m
         join evidence.wording_rules w on m.parse_rule = 'taught.' || w.operator || '.' || w.rule_id || '.v' || w.version
         left join dispatch.operations o
           on o.status = 'confirmed' and o.confirmed_by not in ('settle', 'arbitrate')
          and (o.evidence_message_id = m.id::text or (o.operation_id = m.operation_id and m.link = 'proof'))`,
    );
    const inv = INVARIANTS[9];
    this.count(inv, rows.length);
    for (const r of rows) {
      if (!r.operation_id || r.kind === (r.op_type === "balance" ? "BAL" : "DEP")) continue;
      this.found(
        inv,
        `operation ${r.operation_id} (${r.op_type}) confirmed by message ${r.message_id}, read by a taught rule as ${r.kind ?? "no kind"}`,
        [r.operation_id, r.message_id],
      );
    }
  }

  private async freeBalance(): Promise<void> {
    const inv = INVARIANTS[3];
    for (const c of this.pendingCreates.splice(0)) {
      const [op] = await this.query<{ sim_id: string | null; created_at: Date; op_type: string }>(
        `select sim_id, created_at, op_type from dispatch.operations where operation_id = $1`,
        [c.operationId],
      );
      if (!op?.sim_id || !DEBITING.includes(op.op_type)) continue;
      const before = c.before.get(op.sim_id);
      const after = c.after.get(op.sim_id);
      // The measurement current at the create is known only if none landed during it.
      if (!before || before.at === null || before.balance === null || before.at !== after?.at) continue;
      this.count(inv);
      const [d] = await this.query<{ debits: string; ops: string[] }>(
        `select coalesce(sum(montant), 0)::text as debits, array_agg(operation_id::text) as ops
           from dispatch.operations
          where sim_id = $1 and op_type = any($2) and created_at <= $3
            and status not in ('failed', 'rejected')
            -- not gone before the measurement: neither dialled before it nor confirmed before it
            -- (a proof with no dial recorded: a text attached to, or proving, a queued transfer),
            -- nor out of a handset's hands before it: a no_evidence with no dial recorded (its
            -- handset never reported, its lease ran out) was dialled, if ever, before it left
            -- running, and no handset takes it after (seed 568662945: a dial the network refused,
            -- its outcome lost by the app's kill, counted as leaving after a later measurement)
            and (coalesce(executed_at, case when status in ('confirmed', 'no_evidence') then finished_at end) is null
                 or coalesce(executed_at, case when status in ('confirmed', 'no_evidence') then finished_at end) > $4)
            -- nor proven by a text received by then: the balance it printed (the measurement,
            -- when fleet took it from that text) is after the debit
            and not exists (select 1 from evidence.messages m
                             where m.id::text = dispatch.operations.evidence_message_id and m.received_at <= $4)`,
        [op.sim_id, DEBITING, op.created_at, before.at],
      );
      const free = before.balance - Number(d.debits);
      if (free < 0)
        this.found(
          inv,
          `create of ${c.operationId} on SIM ${op.sim_id}: measured ${before.balance} F at ${before.at}, debits that may have left since ${d.debits} F (${d.ops.length} operations): free balance ${free} F`,
          [c.operationId, op.sim_id, ...d.ops],
        );
    }
  }

  private async answers(actors: Actors): Promise<void> {
    const inv = INVARIANTS[5];
    const windows = this.o.faultWindows();
    const during = (t: number) => windows.some((w) => t >= w.from && t <= w.to);
    this.count(inv, actors.answers.length);
    for (const a of actors.answers) {
      if (a.status < 500) continue;
      if (a.status === 503 && a.retryAfter && during(a.at)) continue;
      this.found(
        inv,
        `${a.route} answered ${a.status}${a.retryAfter ? ` (Retry-After ${a.retryAfter})` : ""}${during(a.at) ? " during a fault" : " with no fault"}: ${JSON.stringify(a.body).slice(0, 200)}`,
        [],
      );
    }
  }

  private async writes(actors: Actors, final: boolean): Promise<void> {
    if (!final) return;
    const inv = INVARIANTS[4];
    const lostCreates = await this.checks.lostCreates(actors.creates);
    const lostSms = await this.checks.lostSms(actors.sms);
    await this.lostTransactions(actors);
    this.count(inv, actors.creates.length + actors.sms.length + actors.decisions.length);
    for (const c of lostCreates)
      this.found(inv, `acknowledged create ${c.requestId} (${c.operationId}) missing`, [c.operationId]);
    for (const s of lostSms)
      this.found(inv, `acknowledged SMS ${s.clientMessageId} on SIM ${s.simId} missing`, [s.clientMessageId, s.simId]);
    if (!actors.decisions.length) return;
    const rows = await this.query<{ operation_id: string; decision: string | null; confirmed_by: string | null }>(
      `select operation_id::text, decision, confirmed_by from dispatch.operations where operation_id = any($1)`,
      [actors.decisions.map((d) => d.operationId)],
    );
    const byId = new Map(rows.map((r) => [r.operation_id, r]));
    for (const d of actors.decisions) {
      const r = byId.get(d.operationId);
      if (!r) this.found(inv, `operation ${d.operationId} of an acknowledged ${d.route} missing`, [d.operationId]);
      else if (d.route !== "attach" && r.decision === null)
        this.found(inv, `acknowledged ${d.route} of ${d.operationId} left no recorded decision`, [d.operationId]);
    }
  }

  /** Acknowledged transaction creates (201, or 409 `request_id_exists` to a create tried again) exist. */
  private async lostTransactions(actors: Actors): Promise<void> {
    const inv = INVARIANTS[4];
    const created = actors.intake.created;
    this.count(inv, created.length);
    if (!created.length) return;
    const rows = await this.query<{ id: string; request_id: string }>(
      `select id::text, request_id from intake.transactions where id::text = any($1)`,
      [created.map((t) => t.id)],
    );
    const byId = new Map(rows.map((r) => [r.id, r.request_id]));
    for (const t of created)
      if (byId.get(t.id) !== t.requestId)
        this.found(
          inv,
          `acknowledged transaction ${t.requestId} (${t.id}, ${t.via}) ${byId.has(t.id) ? `holds request id ${byId.get(t.id)}` : "missing"}`,
          [t.id],
        );
  }

  /** Invariants 12 and 13 (13 at the end only, once drained). */
  private async exactlyOnce(final: boolean): Promise<void> {
    if (!this.agreement) return;
    const [once, agree] = [INVARIANTS[11], INVARIANTS[12]];
    const problems: Problem[] = [];
    this.count(once, await this.agreement.exactlyOnce(final, problems));
    for (const p of problems) this.found(once, p.detail, p.ids);
    if (!final || !this.drainedInTime) return;
    const differ: Problem[] = [];
    this.count(agree, await this.agreement.analytics(differ));
    this.count(agree, await this.agreement.reconciliation(differ));
    for (const p of differ) this.found(agree, p.detail, p.ids);
  }

  /** Invariant 14: the agents' lists and details (a probe each check), and every stream hint received. */
  private async scoped(actors: Actors): Promise<void> {
    if (!this.scope) return;
    const inv = INVARIANTS[13];
    const { watch, agents, gateways } = this.scope;
    // The hints received so far, before the operations are read: each names one that exists.
    // A hint to an agent the rights timeline does not hold yet waits for a check that does.
    const received = [...this.hintsWaiting, ...watch.hints.slice(this.hintsJudged)];
    this.hintsJudged = watch.hints.length;
    const hints = received.filter((h) => watch.rights.knows(h.agent));
    this.hintsWaiting = received.filter((h) => !watch.rights.knows(h.agent));
    const rows = await this.query<ScopeRow & { operation_id: string }>(
      `select operation_id::text, agent_id::text, sim_id, op_type from dispatch.operations`,
    );
    const ops = new Map(rows.map((r) => [r.operation_id, r]));
    const gateway = gateways[this.probes++ % gateways.length];
    const http = (gw: string, m: string, p: string, auth: { token?: string }) => actors.http(gw, m, p, auth);
    const { judged, problems } = await watch.probe(http, gateway, agents, ops);
    this.count(inv, judged);
    for (const p of problems) this.found(inv, p.detail, p.ids);
    if (!hints.length) return;
    const txs = new Map(
      (
        await this.query<{ id: string; launched_by: string | null }>(
          `select id::text, launched_by::text from intake.transactions where id::text = any($1)`,
          [hints.filter((h) => h.kind === "transaction").map((h) => h.id)],
        )
      ).map((t) => [t.id, t]),
    );
    const sims = new Map(
      (
        await this.query<{ id: string; sim_id: string | null }>(
          `select id::text, sim_id from evidence.messages where id::text = any($1)`,
          [hints.filter((h) => h.kind === "message").map((h) => h.id)],
        )
      ).map((m) => [m.id, m.sim_id]),
    );
    this.count(inv, hints.length);
    for (const h of hints) {
      const why = watch.judgeHint(h, ops, txs, sims);
      if (why) this.found(inv, `stream hint: ${why}`, [h.id]);
    }
  }

  /** What the tables hold about the entities: operations (and their chain), messages. */
  async facts(ids: string[]): Promise<string[]> {
    const uuids = ids.filter((i) => /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/.test(i));
    const out: string[] = [];
    const ops = await this.query<Record<string, unknown>>(
      `select operation_id, parent_operation_id as parent, status, op_type, montant, sim_id, device_outcome, confirmed_by,
              evidence_message_id as message, decision, decision_note as note, created_at, executed_at, finished_at
         from dispatch.operations
        where operation_id::text = any($1) or parent_operation_id::text = any($1) order by created_at`,
      [uuids],
    );
    for (const o of ops) out.push(`  operation ${JSON.stringify(o)}`);
    const msgs = await this.query<Record<string, unknown>>(
      `select id, client_message_id as client_id, sender, kind, amount, outcome, operation_id, link, linked_by,
              dismiss_reason, received_at
         from evidence.messages
        where id::text = any($1) or operation_id::text = any($1) or client_message_id = any($1) order by stored_at`,
      [ids],
    );
    for (const m of msgs) out.push(`  message ${JSON.stringify(m)}`);
    return out;
  }

  async close(): Promise<void> {
    await this.checks.close();
  }
}

/** What a drifted text that proves an operation must not do (invariants.ts, `driftedReadings`). */
function driftProblems(
  d: DriftedText,
  r: {
    operation_id: string;
    kind: string | null;
    amount: string | null;
    balance_after: string | null;
    montant: string;
    op_type: string;
    msisdn_dest: string | null;
    about_dest: string | null;
  },
): string[] {
  const problems: string[] = [];
  const truth = d.amount === null ? null : String(d.amount);
  if (d.kind === "balance") {
    if (r.op_type !== "balance") problems.push(`a balance reply proves a ${r.op_type}`);
    if (r.balance_after !== null && r.balance_after !== truth)
      problems.push(`read as a balance of ${r.balance_after}, the text says ${truth}`);
    return problems;
  }
  if (d.kind !== "deposit") return [`a ${d.kind} text proves an operation`];
  if (r.op_type === "balance") problems.push("a deposit's receipt proves a balance check");
  if (r.amount !== truth) problems.push(`read as ${r.amount ?? "no amount"}, the text says ${truth}`);
  if (r.montant !== truth) problems.push(`the operation is of ${r.montant}, the text says ${truth}`);
  if (d.operationId && d.operationId !== r.operation_id && r.msisdn_dest !== r.about_dest)
    problems.push(`the receipt of ${d.operationId} (customer ${r.about_dest}) proves one for ${r.msisdn_dest}`);
  return problems;
}
