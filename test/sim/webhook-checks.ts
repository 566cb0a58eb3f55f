// Invariant 15: the webhooks' deliveries, as fleet's decision describes them (docs/decisions/
// fleet.md, "Webhooks"; the contract leaves payload, signing and retries open). At every check,
// each delivery the receiver took since the last one: signed with its endpoint's secret
// (`X-Signature: sha256=<hex HMAC-SHA256(secret, X-Timestamp + "." + body)>`, a timestamp within
// five minutes of its arrival), its headers naming the body's event, of an event type its
// subscription asked for, the same body whenever a delivery id (or, on one endpoint, an event id)
// comes again, and about something that is so: an `operation.confirmed` for an operation the API
// shows confirmed, an `operation.failed` for one it shows failed or rejected (both final, so
// what the API shows at the check is what held at the delivery), an `alert.raised` for a stored
// notification of that kind. At the end, at least once: every confirmation and failure (and, for
// a subscription to it, every alert) that fleet took after a webhook's registration was
// acknowledged was delivered to each webhook subscribed to it that was not deleted.
import { createHmac } from "node:crypto";
import { sleep } from "../infra/util.ts";
import type { Http } from "./context.ts";
import type { Received, WebhookReceiver } from "./webhook-receiver.ts";
import { WebhookAdmin, type Registration } from "./webhooks.ts";

type Query = <T>(sql: string, params?: unknown[]) => Promise<T[]>;
export interface Finding {
  detail: string;
  ids: string[];
}

/** How old a delivery's X-Timestamp may be when it arrives (fleet's decision: receivers refuse older). */
const FRESH_S = 300;
/** Where each event type's subject must stand (operation statuses are final). */
const FINAL: Record<string, string[]> = {
  "operation.confirmed": ["confirmed"],
  "operation.failed": ["failed", "rejected"],
};
const PUBLIC_OF: Record<string, string> = {
  OperationConfirmed: "operation.confirmed",
  OperationFailed: "operation.failed",
};

const sign = (secret: string, timestamp: string, body: string) =>
  "sha256=" + createHmac("sha256", secret).update(`${timestamp}.${body}`).digest("hex");

interface Delivery {
  event_id?: string;
  event_type?: string;
  data?: { operation?: { operation_id?: string; status?: string } | null; kind?: string };
}

export class WebhookChecks {
  /** Index of the first delivery not yet judged; those put off (the subject not read yet) wait here. */
  private next = 0;
  private readonly later: Received[] = [];
  /** The body of each delivery id, and of each event id on one endpoint, first seen. */
  private readonly bodies = new Map<string, string>();
  /** Final statuses read through the API, by operation. */
  private readonly states = new Map<string, string>();
  readonly tally = { judged: 0, repeated: 0, unjudgeable: 0, owed: 0 };

  constructor(
    private readonly o: {
      query: Query;
      http: Http;
      gateway: () => string;
      adminToken: string;
      admin: WebhookAdmin;
      receiver: WebhookReceiver;
    },
  ) {}

  /** The deliveries received since the last check (and those put off). Returns how many were judged. */
  async deliveries(out: Finding[], final: boolean): Promise<number> {
    const batch = [...this.later.splice(0), ...this.o.receiver.received.slice(this.next)];
    this.next = this.o.receiver.received.length;
    if (!batch.length) return 0;
    const parsed = batch.map((d) => ({ d, body: parse(d.body) }));
    await this.readStates(parsed.map((p) => p.body?.data?.operation?.operation_id).filter((x): x is string => !!x));
    const alerts = await this.alertKinds(
      parsed.filter((p) => p.body?.event_type === "alert.raised").map((p) => String(p.body?.event_id)),
    );
    let judged = 0;
    for (const { d, body } of parsed) {
      const verdict = await this.judge(d, body, alerts, final);
      if (verdict === "later") this.later.push(d);
      else if (verdict === "unjudgeable") this.tally.unjudgeable++;
      else {
        judged++;
        for (const detail of verdict.problems) out.push({ detail, ids: verdict.ids });
      }
    }
    this.tally.judged += judged;
    return judged;
  }

  /** One delivery's problems; "later" while its endpoint's answer or its operation's state is unknown. */
  private async judge(
    d: Received,
    body: Delivery | undefined,
    alerts: Map<string, string>,
    final: boolean,
  ): Promise<{ problems: string[]; ids: string[] } | "later" | "unjudgeable"> {
    const reg = this.o.admin.byPath(d.path);
    const h = d.headers;
    const what = `delivery ${h["x-delivery-id"]} (attempt ${h["x-delivery-attempt"]}) of ${h["x-event-type"]} ${h["x-event-id"]} to ${d.path}`;
    const operationId = body?.data?.operation?.operation_id ?? "";
    const ids = [operationId, reg?.webhookId ?? "", d.path];
    if (!reg) return { problems: [`${what}: no webhook was registered there`], ids };
    const secret = reg.secret ?? reg.given;
    if (!secret) return reg.status === undefined && !final ? "later" : "unjudgeable";
    const problems: string[] = [];
    if (h["x-signature"] !== sign(secret, h["x-timestamp"] ?? "", d.body)) {
      if (await this.twin(reg, h["x-delivery-id"])) return "unjudgeable";
      problems.push(`${what}: X-Signature is not the HMAC of its timestamp and body with the endpoint's secret`);
    }
    const skewS = Math.abs(d.at / 1000 - Number(h["x-timestamp"]));
    if (!(skewS <= FRESH_S))
      problems.push(`${what}: X-Timestamp ${h["x-timestamp"]} is ${skewS.toFixed(0)} s from its arrival`);
    if (!body) return { problems: [...problems, `${what}: the body is not JSON`], ids };
    if (body.event_id !== h["x-event-id"] || body.event_type !== h["x-event-type"])
      problems.push(`${what}: the body names ${body.event_type} ${body.event_id}`);
    const events = WebhookAdmin.eventsOf(reg);
    if (!events.includes(String(body.event_type)))
      problems.push(`${what}: the webhook asked for ${events.join(", ")} only`);
    const subject = this.subject(body, alerts, final);
    if (subject === "later") return "later";
    if (subject) problems.push(`${what}: ${subject}`);
    problems.push(...this.repeats(d, body, what));
    return { problems, ids };
  }

  /** Whether its subject contradicts the event (a string), agrees (undefined), or is not read yet. */
  private subject(body: Delivery, alerts: Map<string, string>, final: boolean): string | undefined | "later" {
    const type = String(body.event_type);
    if (type === "alert.raised") {
      const kind = alerts.get(String(body.event_id));
      if (kind === undefined) return `no notification ${body.event_id} is stored`;
      return kind === body.data?.kind
        ? undefined
        : `notification ${body.event_id} is a ${kind}, the delivery says ${body.data?.kind}`;
    }
    const want = FINAL[type];
    if (!want) return `unknown event type ${type}`;
    const op = body.data?.operation;
    if (!op?.operation_id) return "it names no operation";
    if (!want.includes(String(op.status))) return `its operation ${op.operation_id} is ${op.status} in the body`;
    const shown = this.states.get(op.operation_id);
    if (shown === undefined) return final ? `GET /v1/operations/${op.operation_id} could not be read` : "later";
    return want.includes(shown) ? undefined : `GET /v1/operations/${op.operation_id} shows it ${shown}`;
  }

  /** A delivery id (or an event id on one endpoint) seen again must carry the same body. */
  private repeats(d: Received, body: Delivery, what: string): string[] {
    const problems: string[] = [];
    for (const key of [`delivery ${d.headers["x-delivery-id"]}`, `event ${d.path} ${body.event_id}`]) {
      const first = this.bodies.get(key);
      if (first === undefined) this.bodies.set(key, d.body);
      else if (first !== d.body) problems.push(`${what}: the ${key.split(" ")[0]} came again with another body`);
      else if (key.startsWith("delivery")) this.tally.repeated++;
    }
    return problems;
  }

  /** A delivery of another webhook at the same URL: a create tried again after its answer was lost. */
  private async twin(reg: Registration, deliveryId: string | undefined): Promise<boolean> {
    if (!reg.webhookId || !deliveryId) return false;
    const [row] = await this.o
      .query<{ webhook_id: string }>(`select webhook_id::text from fleet.webhook_deliveries where id::text = $1`, [
        deliveryId,
      ])
      .catch(() => []);
    return row !== undefined && row.webhook_id !== reg.webhookId;
  }

  /** The operations' statuses through the API (admin), once final. */
  private async readStates(ids: string[]): Promise<void> {
    const wanted = [...new Set(ids)].filter((id) => !this.states.has(id));
    for (let i = 0; i < wanted.length; i += 4)
      await Promise.all(
        wanted.slice(i, i + 4).map(async (id) => {
          const a = await this.o.http(this.o.gateway(), "GET", `/v1/operations/${id}`, { token: this.o.adminToken });
          if (a.status === 200 && typeof a.body?.status === "string") this.states.set(id, a.body.status);
        }),
      );
  }

  private async alertKinds(eventIds: string[]): Promise<Map<string, string>> {
    if (!eventIds.length) return new Map();
    const rows = await this.o.query<{ id: string; kind: string }>(
      `select id::text, kind from fleet.notifications where id::text = any($1)`,
      [[...new Set(eventIds)]],
    );
    return new Map(rows.map((r) => [r.id, r.kind]));
  }

  /** What fleet owes each webhook still registered: the public events it took after the registration. */
  private async owed(): Promise<{ eventId: string; type: string; key: string; at: Date }[]> {
    const operations = await this.o.query<{ event_id: string; type: string; key: string; at: Date }>(
      `select o.id::text as event_id, o.type, o.key, coalesce(i.received_at, o.created_at) as at
         from dispatch.outbox o
         left join fleet.inbox i on i.event_id = o.id and i.consumer = 'fleet.events'
        where o.type ~ '\\.(OperationConfirmed|OperationFailed)$'`,
    );
    const alerts = await this.o.query<{ event_id: string; key: string; at: Date }>(
      `select id::text as event_id, coalesce(operation_id, sim_id, device_id, '') as key, created_at as at from fleet.notifications`,
    );
    return [
      ...operations.map((e) => ({
        eventId: e.event_id,
        type: PUBLIC_OF[e.type.replace(/.*\./, "")],
        key: e.key,
        at: e.at,
      })),
      ...alerts.map((e) => ({ eventId: e.event_id, type: "alert.raised", key: e.key, at: e.at })),
    ];
  }

  /** At the end: each event owed to a webhook still registered reached it at least once. Returns judged. */
  async atLeastOnce(out: Finding[]): Promise<number> {
    const events = await this.owed();
    let judged = 0;
    for (const reg of this.o.admin.alive()) {
      const subscribed = WebhookAdmin.eventsOf(reg);
      const got = new Set(
        this.o.receiver.received.filter((d) => d.path === reg.path).map((d) => d.headers["x-event-id"]),
      );
      const owed = events.filter((e) => subscribed.includes(e.type) && new Date(e.at).getTime() > reg.ackAt!);
      judged += owed.length;
      const missing = owed.filter((e) => !got.has(e.eventId));
      if (!missing.length) continue;
      const status = new Map(
        (
          await this.o.query<{ event_id: string; status: string; attempts: number }>(
            `select event_id, status, attempt_count as attempts from fleet.webhook_deliveries where webhook_id::text = $1`,
            [reg.webhookId],
          )
        ).map((r) => [r.event_id, `${r.status} after ${r.attempts} attempts`]),
      );
      for (const e of missing)
        out.push({
          detail: `webhook ${reg.path} (${reg.webhookId}) never received ${e.type} ${e.eventId} of ${e.key}, taken by fleet at ${new Date(e.at).toISOString()}, after its registration at ${new Date(reg.ackAt!).toISOString()} (fleet's delivery: ${status.get(e.eventId) ?? "none"})`,
          ids: [e.key, reg.webhookId ?? "", reg.path],
        });
    }
    this.tally.owed += judged;
    return judged;
  }

  /** The figures for the report. */
  summary(): string {
    const regs = this.o.admin.registrations;
    const received = this.o.receiver.received;
    const answered = (n: number) => received.filter((d) => d.answered === n).length;
    return (
      `webhooks: ${regs.filter((r) => r.webhookId).length} registered (${regs.filter((r) => r.deletedAt).length} deleted, ` +
      `${this.o.admin.alive().length} at the end), ${received.length} deliveries received (answered 500: ${answered(500)}, ` +
      `past the timeout: ${answered(0)}), ${this.tally.judged} judged, ${this.tally.repeated} repeated delivery ids, ` +
      `${this.tally.unjudgeable} unjudgeable, ${this.tally.owed} owed events checked`
    );
  }

  /** Until fleet has taken every public event and delivered what it owes the webhooks still registered (at most `ms`). */
  async settled(ms: number): Promise<boolean> {
    const ids = () => this.o.admin.alive().map((r) => r.webhookId!);
    for (const until = Date.now() + ms; Date.now() < until; await sleep(1000)) {
      const [r] = await this.o.query<{ untaken: number; pending: number }>(
        `select (select count(*) from dispatch.outbox o
                  where o.type ~ '\\.(OperationConfirmed|OperationFailed)$'
                    and not exists (select 1 from fleet.inbox i where i.event_id = o.id and i.consumer = 'fleet.events'))::int as untaken,
                (select count(*) from fleet.webhook_deliveries where status = 'pending' and webhook_id::text = any($1))::int as pending`,
        [ids()],
      );
      if (r.untaken === 0 && r.pending === 0) return true;
    }
    return false;
  }
}

function parse(body: string): Delivery | undefined {
  try {
    const v = JSON.parse(body) as unknown;
    return v && typeof v === "object" ? (v as Delivery) : undefined;
  } catch {
    return undefined;
  }
}
