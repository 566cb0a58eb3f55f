// The simulated operator's SMS side. Plugged into a SimulatedHandset's `onDialled` hook, it
// answers each dialled operation with the SMS the real networks send, in the real formats of
// both operators (built with services/evidence/src/domain/sms-templates.ts, which are the
// shapes of the samples), with varied names, languages and references; adds balance
// replies, movements (transfers received) and noise (promotions, refusals); and forwards
// them as the handset app does, with POST /v1/device/messages.
//
// Faults, per delivery:
// - `lost`: never forwarded.
// - `delayed`: held until `releaseDelayed()` (a test lets the evidence window pass first).
// - `duplicated`: `by: "handset"` forwards the same SMS again with the same client id (an
//   app retry: one message); `by: "operator"` has the network send it twice (two SMS, same
//   words and reference, two client ids: the second is a restatement).
// - `reordered`: held, then forwarded right after the next SMS, so it arrives second.
// Two same-amount transfers racing on one SIM need no fault: queue both and let the handset
// dial them (see `raceSameAmount` in the journeys).

import { createHash, randomUUID } from "node:crypto";
import {
  balanceReply,
  depositConfirmation,
  failure,
  promotion,
  transferReceived,
} from "../../services/evidence/src/domain/sms-templates.ts";
import type { Language } from "../../services/evidence/src/domain/parsers/types.ts";
import type { DialResult, DispatchPayload } from "./handset.ts";
import { depositFee, type OperatorName, type Receipt } from "./operator.ts";
import { Api } from "../support/api.ts";

export type SmsFault =
  | { kind: "lost" }
  | { kind: "delayed" }
  | { kind: "duplicated"; by: "handset" | "operator"; concurrent?: boolean }
  | { kind: "reordered" };

/** One SMS as the handset app forwards it. */
export interface OutgoingSms {
  simId: string;
  operator: OperatorName;
  sender: string;
  raw: string;
  /** Operator timestamp. */
  receivedAt: Date;
  clientMessageId: string;
  /** What the text says, for assertions. */
  about: {
    kind: "deposit" | "balance" | "refusal" | "movement" | "promotion";
    operationId?: string;
    amount?: number;
    reference?: string;
  };
}

export interface Delivery {
  sms: OutgoingSms;
  status: number;
  body: any;
}

/** How a submission reaches the gateway; tests of this file stand in for it. */
export type Transport = (token: string, body: unknown) => Promise<{ status: number; body: any }>;

export interface OperatorSmsOptions {
  baseUrl: string;
  /** Device token of the handset that forwards the SMS. */
  token: string;
  /** Seed of the names, languages, commissions and references: a run reproduces exactly. */
  seed?: number;
  /** Decides a fault per dialled operation; `failNext` overrides it once. */
  faultFor?: (op: DispatchPayload, result: DialResult) => SmsFault | undefined;
  transport?: Transport;
}

const SENDERS: Record<OperatorName, string> = { operator_a: "MobileMoney", operator_b: "OrangeMoney" };

const FIRST = [
  "AMINA",
  "JEAN",
  "MARIE-CLAIRE",
  "PAUL",
  "ROSE",
  "HELENE",
  "ABDOU",
  "CLARISSE",
  "BLAISE",
  "ESTHER",
  "SAMUEL",
  "NADEGE",
];
const LAST = [
  "NGONO",
  "KAMDEM",
  "ABENA",
  "TCHOUMI",
  "NJOYA",
  "ETOA",
  "FOTSO",
  "ESSOMBA",
  "MBALLA",
  "NANA",
  "ATEBA",
  "D'ALMEIDA",
];

/** A small seeded generator (mulberry32): the same seed gives the same texts. */
export function seeded(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const digest = (s: string) => createHash("sha256").update(s).digest();

/**
 * The operator's reference for a receipt, in each network's style: operator_a prints a
 * numeric transaction id, operator_b `CI<yymmdd>.<hhmm>.<letter><5 digits>`. Derived from
 * the simulator's own reference, so every SMS about one transfer carries the same one.
 */
export function referenceOf(operator: OperatorName, simulatorRef: string, at: Date): string {
  const h = digest(simulatorRef);
  if (operator === "operator_a") return String(10_000_000_000 + (h.readUInt32BE(0) % 9_000_000_000));
  const local = new Date(at.getTime() + 3600_000).toISOString();
  const ymd = local.slice(2, 10).replace(/-/g, "");
  const hm = local.slice(11, 16).replace(":", "");
  return `CI${ymd}.${hm}.${"ABCD"[h[4] % 4]}${String(h.readUInt32BE(5) % 100_000).padStart(5, "0")}`;
}

/** A printable customer name: the one the network registered, else one derived from the number. */
export function nameOf(msisdn: string, registered: string | null): string {
  const clean = registered?.normalize("NFD").replace(/\p{M}/gu, "").toUpperCase().trim();
  if (clean && /^\p{L}[\p{L}\p{N}'&-]*(?: [\p{L}\p{N}'&-]+)*$/u.test(clean)) return clean;
  const h = digest(msisdn);
  return `${FIRST[h[0] % FIRST.length]} ${LAST[h[1] % LAST.length]}`;
}

/** How each network prints a customer's number: operator_a with the country code. */
const printedMsisdn = (operator: OperatorName, msisdn: string) => (operator === "operator_a" ? `237${msisdn}` : msisdn);

export class OperatorSms {
  private readonly random: () => number;
  private api: Api | undefined;
  private readonly transport: Transport;
  private once: SmsFault | undefined;
  private readonly delayed: OutgoingSms[] = [];
  private readonly reordered: OutgoingSms[] = [];
  /** Every forwarded SMS with the gateway's answer, in order. */
  readonly deliveries: Delivery[] = [];
  /** SMS the network sent that never reached the service. */
  readonly lost: OutgoingSms[] = [];
  /** The references issued, by the simulator's reference of their transfer (referenceFor). */
  private readonly issued = new Map<string, string>();
  private readonly used = new Set<string>();

  constructor(private readonly o: OperatorSmsOptions) {
    this.random = seeded(o.seed ?? 20261122);
    this.transport =
      o.transport ??
      (async (token, body) => {
        // Through the typed client, which checks the answer against the served OpenAPI document.
        this.api ??= new Api(o.baseUrl);
        const res = await this.api.request("POST", "/v1/device/messages", { token, body });
        return { status: res.status, body: res.body };
      });
  }

  /** The next dialled operation's SMS suffer this fault (overrides `faultFor` once). */
  failNext(fault: SmsFault): void {
    this.once = fault;
  }

  /** The handset's hook: the network's SMS about what was just dialled. */
  readonly onDialled = async (op: DispatchPayload, result: DialResult): Promise<void> => {
    const texts = this.smsFor(op, result);
    const fault = this.once ?? this.o.faultFor?.(op, result);
    this.once = undefined;
    for (const sms of texts) await this.deliver(sms, fault);
  };

  /** What the network sends about one dialled operation (nothing when nothing happened). */
  smsFor(op: DispatchPayload, result: DialResult): OutgoingSms[] {
    const r = result.receipt;
    const base = (raw: string, about: OutgoingSms["about"], at = new Date()): OutgoingSms => ({
      simId: op.sim_id,
      operator: op.operator,
      sender: SENDERS[op.operator],
      raw,
      receivedAt: at,
      clientMessageId: randomUUID(),
      about: { operationId: op.operation_id, ...about },
    });
    if (!r) {
      // The network refused after the PIN (insufficient balance): a refusal SMS, no receipt.
      if (result.outcome === "ussd_failed" && /solde insuffisant|insufficient/i.test(result.ussd_response ?? "")) {
        return [
          base(failure(op.operator, { language: this.language(op.operator, "failure"), amount: op.montant }), {
            kind: "refusal",
            amount: op.montant,
          }),
        ];
      }
      return [];
    }
    if (r.kind === "deposit")
      return [
        base(
          this.depositText(r),
          { kind: "deposit", amount: r.amount, reference: this.referenceFor(r.operator, r.reference, r.at) },
          r.at,
        ),
      ];
    if (r.kind === "balance") {
      return [
        base(
          balanceReply(r.operator, { balance: r.amount, language: this.language(r.operator, "balance") }),
          { kind: "balance", amount: r.amount },
          r.at,
        ),
      ];
    }
    // Withdrawals, float and mini statements: the templates hold no real wording for them yet.
    return [];
  }

  /**
   * The reference a transfer's SMS carry, as referenceOf prints it, but never one this network
   * already gave another transfer: a real one does not reuse them, and the service takes a
   * message whose reference is already proven on its SIM for a restatement of that proof.
   * operator_b's format holds 400,000 references a minute: a run's busy SIM met a collision
   * about once in a hundred runs, and the run failed on a transfer left unproven.
   */
  private referenceFor(operator: OperatorName, simulatorRef: string, at: Date): string {
    const known = this.issued.get(simulatorRef);
    if (known) return known;
    let ref = referenceOf(operator, simulatorRef, at);
    for (let again = 1; this.used.has(ref); again++) ref = referenceOf(operator, `${simulatorRef}/${again}`, at);
    this.issued.set(simulatorRef, ref);
    this.used.add(ref);
    return ref;
  }

  /** The deposit confirmation of a receipt, in the operator's format. */
  depositText(r: Receipt): string {
    const language = this.language(r.operator, "deposit");
    return depositConfirmation(r.operator, {
      amount: r.amount,
      fee: r.operator === "operator_b" ? r.fee : null,
      balanceAfter: r.balance_after,
      ref: this.referenceFor(r.operator, r.reference, r.at),
      msisdn: printedMsisdn(r.operator, r.counterparty_msisdn ?? "690000000"),
      name: nameOf(r.counterparty_msisdn ?? "", r.counterparty_name),
      at: r.at,
      language,
      commission: r.operator === "operator_b" ? Math.floor(this.random() * 3) * 25 : Math.floor(this.random() * 2) * 10,
    });
  }

  /** A transfer received by the SIM from a customer (a movement, kind UV_IN). */
  movement(
    simId: string,
    operator: OperatorName,
    o: { amount?: number; balanceAfter?: number; at?: Date } = {},
  ): OutgoingSms {
    const amount = o.amount ?? 500 + Math.floor(this.random() * 200) * 25;
    const from = `${operator === "operator_a" ? "67" : "69"}${String(Math.floor(this.random() * 10_000_000)).padStart(7, "0")}`;
    const at = o.at ?? new Date();
    const ref = this.referenceFor(operator, randomUUID(), at);
    const raw = transferReceived(operator, {
      amount,
      fee: operator === "operator_b" ? 0 : null,
      balanceAfter: o.balanceAfter ?? 100_000 + Math.floor(this.random() * 1_000_000),
      ref,
      msisdn: printedMsisdn(operator, from),
      name: nameOf(from, null),
      at,
      language: this.language(operator, "movement"),
    });
    return {
      simId,
      operator,
      sender: SENDERS[operator],
      raw,
      receivedAt: at,
      clientMessageId: randomUUID(),
      about: { kind: "movement", amount, reference: ref },
    };
  }

  /**
   * A day of one SIM's SMS with a consistent running balance, as the network sends them:
   * deposits to customers (out: amount and, on operator_b, the printed fee), transfers
   * received (in), balance replies and promotions, `everyMinutes` apart from `start`
   * (operator timestamps). No commission is printed, so each balance follows from the
   * previous one. Deliver them with `deliver` and its faults to simulate the handset's day.
   */
  dayOf(
    simId: string,
    operator: OperatorName,
    o: { start: Date; opening: number; count: number; everyMinutes?: number },
  ): OutgoingSms[] {
    let balance = o.opening;
    const out: OutgoingSms[] = [];
    for (let i = 0; i < o.count; i += 1) {
      const at = new Date(o.start.getTime() + i * (o.everyMinutes ?? 7) * 60_000);
      const roll = this.random();
      const amount = 1000 + Math.floor(this.random() * 98) * 500;
      const fee = operator === "operator_b" ? depositFee(amount) : null;
      if (roll < 0.5 && balance >= amount + (fee ?? 0)) {
        balance -= amount + (fee ?? 0);
        const msisdn = `${operator === "operator_a" ? "67" : "69"}${String(Math.floor(this.random() * 10_000_000)).padStart(7, "0")}`;
        const ref = this.referenceFor(operator, randomUUID(), at);
        const raw = depositConfirmation(operator, {
          amount,
          fee,
          balanceAfter: balance,
          ref,
          msisdn: printedMsisdn(operator, msisdn),
          name: nameOf(msisdn, null),
          at,
          language: this.language(operator, "deposit"),
          commission: 0,
        });
        out.push({
          simId,
          operator,
          sender: SENDERS[operator],
          raw,
          receivedAt: at,
          clientMessageId: randomUUID(),
          about: { kind: "deposit", amount, reference: ref },
        });
      } else if (roll < 0.85) {
        balance += amount;
        out.push(this.movement(simId, operator, { amount, balanceAfter: balance, at }));
      } else if (roll < 0.95) {
        out.push({ ...this.balanceSms(simId, operator, balance), receivedAt: at });
      } else {
        out.push({ ...this.promotionSms(simId, operator), receivedAt: at });
      }
    }
    return out;
  }

  /** Marketing with a prize amount that must never be read as money. */
  promotionSms(simId: string, operator: OperatorName): OutgoingSms {
    const prize = (1 + Math.floor(this.random() * 50)) * 1000;
    const raw = promotion(operator, { language: this.random() < 0.5 ? "fr" : "en", prize });
    return {
      simId,
      operator,
      sender: SENDERS[operator],
      raw,
      receivedAt: new Date(),
      clientMessageId: randomUUID(),
      about: { kind: "promotion" },
    };
  }

  /** A balance reply nobody asked for (the agent checked by hand). */
  balanceSms(simId: string, operator: OperatorName, balance: number): OutgoingSms {
    const raw = balanceReply(operator, { balance, language: this.random() < 0.5 ? "fr" : "en" });
    return {
      simId,
      operator,
      sender: SENDERS[operator],
      raw,
      receivedAt: new Date(),
      clientMessageId: randomUUID(),
      about: { kind: "balance", amount: balance },
    };
  }

  /** Forwards one SMS, applying a fault. */
  async deliver(sms: OutgoingSms, fault?: SmsFault): Promise<Delivery[]> {
    switch (fault?.kind) {
      case "lost":
        this.lost.push(sms);
        return [];
      case "delayed":
        this.delayed.push(sms);
        return [];
      case "reordered":
        this.reordered.push(sms);
        return [];
      case "duplicated": {
        const twin = fault.by === "handset" ? sms : { ...sms, clientMessageId: randomUUID() };
        if (fault.concurrent) return Promise.all([this.post([sms]), this.post([twin])]).then((d) => d.flat());
        return [...(await this.post([sms])), ...(await this.post([twin]))];
      }
      default: {
        const out = await this.post([sms]);
        // What was held to be reordered now arrives after this one.
        const held = this.reordered.splice(0);
        for (const h of held) out.push(...(await this.post([h])));
        return out;
      }
    }
  }

  /** Forwards what was delayed (e.g. once the evidence window has passed). */
  async releaseDelayed(): Promise<Delivery[]> {
    const held = this.delayed.splice(0);
    const out: Delivery[] = [];
    for (const sms of held) out.push(...(await this.post([sms])));
    return out;
  }

  /** Several SMS in one submission, as a handset flushing its spool does. */
  async batch(list: OutgoingSms[]): Promise<Delivery[]> {
    return this.post(list);
  }

  private async post(list: OutgoingSms[]): Promise<Delivery[]> {
    const body = {
      sim_id: list[0].simId,
      subscription_slot: 0,
      messages: list.map((s) => ({
        sender: s.sender,
        raw: s.raw,
        received_at: s.receivedAt.toISOString(),
        device_received_at: new Date().toISOString(),
        client_message_id: s.clientMessageId,
      })),
    };
    const res = await this.transport(this.o.token, body);
    const out = list.map((sms, i) => ({ sms, status: res.status, body: res.body?.results?.[i] ?? res.body }));
    this.deliveries.push(...out);
    return out;
  }

  private language(operator: OperatorName, what: "deposit" | "balance" | "movement" | "failure"): Language {
    // operator_b's deposit and transfer wordings are known in French only.
    if (operator === "operator_b" && (what === "deposit" || what === "movement")) return "fr";
    return this.random() < 0.5 ? "fr" : "en";
  }
}
