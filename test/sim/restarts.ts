// App restarts: the handset app killed by Android at a point of its work and started again. What
// it held in memory is gone (what it was dialling, the outcome not yet written, its client);
// what it keeps on the phone's storage comes back with it: an outcome written before the kill and
// not yet acknowledged (reported again, the same body), and the operator's SMS the phone received
// and the app had not had acknowledged (forwarded again with the same client_message_id). Then it
// polls again with its token. An outcome lost by the kill is never reported: the operation stays
// `running` until its lease runs out and the sweep moves it to `no_evidence`
// (`handset_never_reported`, docs/decisions/dispatch.md "Running timeout"), unless an operator's
// text proves it first or a person decides (invariants.ts, `lostOutcomes`; 1 and 7 judge it too).
import { sleep } from "../infra/util.ts";
import type { DialResult, DispatchPayload, SimulatedHandset } from "../simulator/handset.ts";
import type { OutgoingSms } from "../simulator/operator-sms.ts";
import type { DriftPick } from "./drift.ts";

/** A handset of the simulation (actors.ts's SimHandset), as a restart needs it. */
export interface RestartHandset {
  index: number;
  simId: string;
  token: string;
  busy: boolean;
  handset: SimulatedHandset;
}

/**
 * Where the kill lands: `claimed` (after the claim, before dialling: nothing moved), `dialling`
 * (in the USSD dialog after the PIN: the money moved, the outcome was never written), `reporting`
 * (the outcome written, its report not acknowledged), `forwarding` (the outcome acknowledged, an
 * SMS sent whose acknowledgement the kill lost), `idle` (nothing claimed).
 */
export const RESTART_STAGES = { claimed: 3, dialling: 3, reporting: 3, forwarding: 3 } as const;
export type RestartStage = keyof typeof RESTART_STAGES | "idle";

/** What the app keeps on the phone's storage across a kill. */
export interface AppStore {
  outcome?: { operationId: string; body: Record<string, unknown> };
  sms: OutgoingSms[];
}

/** An operation whose outcome a kill lost: it must end by its lease, a proof or a person. */
export interface LostOutcome {
  operationId: string;
  stage: RestartStage;
  /** performance.now() of the claim. */
  claimedAt: number;
}

export interface RestartContext<H extends RestartHandset> {
  http: (
    gw: string,
    method: string,
    path: string,
    auth: { token?: string },
    body?: unknown,
  ) => Promise<{ status: number; body: any }>;
  forward: (h: H, sms: OutgoingSms, what: string, about?: string) => Promise<void>;
  /** The operator's texts about a dial, drifted as the action drew. */
  textsFor: (h: H, op: DispatchPayload, result: DialResult, drift: DriftPick | null) => OutgoingSms[];
  /** An outcome body the handset reported (repeated reports draw from them). */
  reported: (h: H, body: Record<string, unknown>, operationId: string) => void;
  /** The handset polls again as the app does (dials what it claims). */
  poll: (gw: string, h: H) => Promise<void>;
  note: (ids: string[], line: string) => void;
}

export class Restarts<H extends RestartHandset> {
  readonly lost: LostOutcome[] = [];
  /** Kills by stage. */
  readonly byStage: Record<string, number> = {};
  /** Reports and SMS sent again from the store after a restart. */
  reReported = 0;
  reForwarded = 0;
  private readonly stores = new Map<number, AppStore>();

  constructor(private readonly c: RestartContext<H>) {}

  private store(h: H): AppStore {
    let s = this.stores.get(h.index);
    if (!s) this.stores.set(h.index, (s = { sms: [] }));
    return s;
  }

  /** Kills the app at `stage` of its next claim (a busy handset is left alone), then brings it back. */
  async restart(
    gw: string,
    h: H,
    stage: keyof typeof RESTART_STAGES,
    pauseMs: number,
    drift: DriftPick | null,
  ): Promise<void> {
    if (h.busy) return;
    h.busy = true;
    try {
      const at = await this.workUntilKilled(gw, h, stage, drift);
      this.byStage[at] = (this.byStage[at] ?? 0) + 1;
      h.handset.restart();
      this.c.note([h.simId], `handset ${h.index}'s app is killed (${at}); it comes back in ${pauseMs} ms`);
      await sleep(pauseMs);
      await this.comeBack(gw, h);
    } finally {
      h.busy = false;
    }
    await this.c.poll(gw, h);
  }

  /** The app's work up to the kill; returns where the kill landed. */
  private async workUntilKilled(
    gw: string,
    h: H,
    stage: keyof typeof RESTART_STAGES,
    drift: DriftPick | null,
  ): Promise<RestartStage> {
    const polled = await this.c.http(gw, "GET", "/v1/device/next", { token: h.token });
    if (polled.status !== 200) return "idle";
    const op = polled.body as DispatchPayload;
    const claimedAt = performance.now();
    this.c.note(
      [op.operation_id, op.sim_id],
      `handset ${h.index} claims it (${op.op_type} ${op.montant} F); its app will be killed (${stage})`,
    );
    if (stage === "claimed") {
      this.lost.push({ operationId: op.operation_id, stage, claimedAt });
      return stage;
    }
    const result = await h.handset.dial(op);
    const store = this.store(h);
    // The network's SMS reach the phone whatever the app does; the app's receiver keeps them.
    const texts = this.c.textsFor(h, op, result, drift);
    store.sms.push(...texts);
    if (stage === "dialling") {
      this.lost.push({ operationId: op.operation_id, stage, claimedAt });
      this.c.note(
        [op.operation_id],
        `the app dies in the USSD dialog (${result.receipt ? `money moved: ${result.receipt.amount} F` : result.outcome}); its outcome is lost`,
      );
      return stage;
    }
    const body = {
      operation_id: op.operation_id,
      outcome: result.outcome,
      ussd_response: result.ussd_response,
      executed_at: result.executed_at.toISOString(),
      ...(result.failure_detail ? { failure_detail: result.failure_detail } : {}),
    };
    this.c.reported(h, body, op.operation_id);
    store.outcome = { operationId: op.operation_id, body };
    if (stage === "reporting") return stage;
    await this.report(gw, h, store.outcome);
    store.outcome = undefined;
    // The first SMS goes out; the kill comes before its acknowledgement is written.
    const [first] = store.sms;
    if (first) await this.c.forward(h, first, "receipt (acknowledgement lost by a restart)", op.operation_id);
    return stage;
  }

  /** The app back: what its store holds is reported and forwarded again, then removed. */
  private async comeBack(gw: string, h: H): Promise<void> {
    const store = this.store(h);
    if (store.outcome) {
      await this.report(gw, h, store.outcome, "again after a restart");
      this.reReported += 1;
      store.outcome = undefined;
    }
    for (const sms of store.sms.splice(0)) {
      await this.c.forward(h, sms, "from the store after a restart", sms.about.operationId);
      this.reForwarded += 1;
    }
  }

  /** As the app: the report is sent until it is taken (or refused for good). */
  private async report(gw: string, h: H, o: NonNullable<AppStore["outcome"]>, how = ""): Promise<void> {
    for (let attempt = 0; attempt < 20; attempt++) {
      const a = await this.c.http(gw, "POST", "/v1/device/outcome", { token: h.token }, o.body);
      this.c.note(
        [o.operationId],
        `handset ${h.index} reports ${String(o.body.outcome)}${how ? ` ${how}` : ""} → ${a.status} ${a.body?.status ?? a.body?.context?.reason ?? ""}`,
      );
      if (a.status !== 0 && a.status !== 429 && a.status < 500) return;
      await sleep(Math.min(2000, 200 * 2 ** attempt));
    }
  }
}
