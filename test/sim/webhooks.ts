// Webhooks in the simulation, the admin's side: a standing subscription registered before the
// actions (operation.confirmed and operation.failed, never deleted: every confirmation of the
// run is owed to it), and others (a first one before the actions, for every event) registered,
// rotated and deleted by the admins at random, each
// to a path of its own on the simulation's receiver (webhook-receiver.ts), for some of the
// events or for all (none named), with a secret of the admin's or one fleet generates (returned
// by the 201 only). The contract has no route that changes a webhook: a rotation registers a
// new endpoint (a new secret) and deletes the old one a moment later, as a receiver rotating
// its secret would. Every choice is drawn when the action is chosen. The deliveries are judged
// in webhook-checks.ts (invariant 15).
import { WEBHOOK_EVENTS } from "../../services/fleet/src/domain/webhook-events.ts";
import { sleep } from "../infra/util.ts";
import { outcomeOf, type SimContext } from "./context.ts";

export const WEBHOOK_ACTIONS = { webhookRegister: 1.5, webhookRotate: 1, webhookDelete: 0.5 } as const;
export type WebhookAction = keyof typeof WEBHOOK_ACTIONS;

/** The standing subscription's events. */
const STANDING_EVENTS = ["operation.confirmed", "operation.failed"];
/** Webhooks the admins keep besides the standing one, at most. */
const CHURNED_MAX = 2;

/** One registration, as the admin made it and as fleet answered. */
export interface Registration {
  /** The receiver's path it was registered with (one per registration). */
  path: string;
  /** Registered before the actions and never deleted. */
  standing: boolean;
  /** The events asked for; undefined: none named, which means all. */
  asked?: string[];
  /** The admin's secret; undefined: fleet generated one. */
  given?: string;
  /** The create's answer status; undefined while in flight. */
  status?: number;
  webhookId?: string;
  /** The secret the 201 returned. */
  secret?: string;
  /** The events the 201 names. */
  events?: string[];
  /** Date.now() when the 201 came back: events fleet takes after it are delivered here. */
  ackAt?: number;
  /** Date.now() when its deletion was sent, and when it was answered (204, or 404: gone already). */
  deleteSentAt?: number;
  deletedAt?: number;
}

export class WebhookAdmin {
  readonly registrations: Registration[] = [];

  constructor(private readonly c: SimContext) {}

  byPath(path: string): Registration | undefined {
    return this.registrations.find((r) => r.path === path);
  }

  /** Acknowledged, and no deletion sent. */
  alive(): Registration[] {
    return this.registrations.filter((r) => r.webhookId && r.deleteSentAt === undefined);
  }

  /** The events a registration receives: those the 201 names, else those asked, else all. */
  static eventsOf(r: Registration): readonly string[] {
    return r.events?.length ? r.events : r.asked?.length ? r.asked : WEBHOOK_EVENTS;
  }

  prepare(action: WebhookAction, n: number, gw: string): () => Promise<void> {
    const r = this.c.random;
    // Each event in or out; none in: the events are not named (all of them).
    const bits = r.int(8);
    const asked = bits ? WEBHOOK_EVENTS.filter((_, i) => bits & (1 << i)) : undefined;
    const given = r.chance(0.6) ? `sim-secret-${r.seed}-${n}-${r.int(1_000_000_000)}` : undefined;
    const pick = r.int(1000);
    const holdMs = 500 + r.int(3000);
    const admin = r.int(2);
    return async () => {
      const churned = this.alive().filter((x) => !x.standing);
      const old = churned[pick % Math.max(1, churned.length)];
      if (action === "webhookRegister") {
        if (churned.length < CHURNED_MAX) await this.register(gw, admin, `/hooks/${n}`, asked, given);
        return;
      }
      if (!old) return;
      if (action === "webhookRotate") {
        // The new endpoint first (its own secret), then the old one: no event falls between.
        const fresh = await this.register(gw, admin, `/hooks/${n}`, old.asked, given);
        if (!fresh?.webhookId) return;
        await sleep(holdMs);
      }
      await this.remove(gw, admin, old, action === "webhookRotate" ? "rotated out" : "deleted");
    };
  }

  /**
   * Before the actions: the standing subscription, and one the admins may rotate or delete from
   * the start (every event, a secret fleet generates).
   */
  async registerAtStart(gw: string): Promise<void> {
    const secret = `sim-standing-${this.c.random.seed}-secret`;
    const standing = await this.register(gw, 0, "/hooks/standing", STANDING_EVENTS, secret, true);
    const first = await this.register(gw, 1, "/hooks/start", undefined, undefined);
    for (const reg of [standing, first])
      if (!reg?.webhookId) throw new Error(`webhook ${reg?.path} was not registered: ${reg?.status}`);
  }

  private token(admin: number): string {
    return admin === 0 ? this.c.adminToken : this.c.secondAdminToken;
  }

  private async register(
    gw: string,
    admin: number,
    path: string,
    asked: string[] | undefined,
    given: string | undefined,
    standing = false,
  ): Promise<Registration | undefined> {
    if (!this.c.webhookBaseUrl) return undefined;
    const reg: Registration = { path, standing, asked, given };
    this.registrations.push(reg);
    const body = {
      url: `${this.c.webhookBaseUrl}${path}`,
      ...(given ? { secret: given } : {}),
      ...(asked ? { events: asked } : {}),
    };
    const a = await this.c.http(gw, "POST", "/v1/admin/webhooks", { token: this.token(admin) }, body);
    reg.status = a.status;
    if (a.status === 201) {
      reg.ackAt = Date.now();
      reg.webhookId = String(a.body?.webhook_id);
      reg.secret = typeof a.body?.secret === "string" ? a.body.secret : given;
      reg.events = Array.isArray(a.body?.events) ? (a.body.events as string[]) : undefined;
    }
    this.c.note(
      [reg.webhookId ?? "", path],
      `admin ${admin + 1} registers webhook ${path}${standing ? " (standing)" : ""} for ${asked?.join(", ") ?? "every event"}, ${given ? "its own secret" : "secret generated"} → ${a.status} ${outcomeOf(a)} ${reg.webhookId ?? ""}`,
    );
    return reg;
  }

  private async remove(gw: string, admin: number, reg: Registration, why: string): Promise<void> {
    reg.deleteSentAt = Date.now();
    const path = `/v1/admin/webhooks/${reg.webhookId}`;
    const a = await this.c.http(gw, "DELETE", path, { token: this.token(admin) });
    // 404 to a call tried again after a reset: the first try deleted it.
    if (a.status === 204 || a.status === 404) reg.deletedAt = Date.now();
    this.c.note(
      [reg.webhookId ?? "", reg.path],
      `admin ${admin + 1} deletes webhook ${reg.path} (${why}) → ${a.status} ${outcomeOf(a)}`,
    );
  }
}
