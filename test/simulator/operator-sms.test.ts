// The simulated operator's SMS: every text it sends reads back, through the evidence
// parsers, as exactly what the simulated network did; faults change delivery only.

import { describe, expect, it } from "vitest";
import { reconcileDay, type ChainMessage } from "../../services/evidence/src/domain/balance-chain.ts";
import { parseMessage, isMovement } from "../../services/evidence/src/domain/parsers/parse.ts";
import type { DialResult, DispatchPayload } from "./handset.ts";
import type { OperatorName, Receipt } from "./operator.ts";
import { nameOf, OperatorSms, referenceOf, seeded, type SmsFault } from "./operator-sms.ts";

function op(operator: OperatorName, o: Partial<DispatchPayload> = {}): DispatchPayload {
  return {
    operation_id: `op-${Math.random().toString(36).slice(2)}`,
    sim_id: "sim-1",
    subscription_slot: 0,
    ussd_string: "",
    ussd_steps: [],
    expected_sender: "",
    timeout_seconds: 90,
    montant: 5000,
    op_type: "deposit",
    partner_verified: true,
    dest_name: null,
    msisdn_dest: operator === "operator_a" ? "670555555" : "690555555",
    operator,
    ...o,
  };
}

function dialled(r: Receipt): DialResult {
  return { outcome: "ussd_ok", ussd_response: "ok", failure_detail: null, receipt: r, executed_at: r.at };
}

function receipts(seed: number, n: number): Receipt[] {
  const random = seeded(seed);
  const int = (min: number, max: number) => min + Math.floor(random() * (max - min + 1));
  return Array.from({ length: n }, (_, i) => {
    const operator: OperatorName = i % 2 ? "operator_a" : "operator_b";
    const amount = int(100, 500_000);
    return {
      kind: "deposit",
      operator,
      sim_msisdn: operator === "operator_a" ? "670100100" : "690100100",
      amount,
      fee: Math.max(50, Math.round(amount / 100)),
      balance_after: int(0, 5_000_000),
      reference: `CI261122.${int(0, 0xffffff).toString(16)}`,
      counterparty_msisdn: `${operator === "operator_a" ? "67" : "69"}${String(int(0, 9_999_999)).padStart(7, "0")}`,
      counterparty_name: [null, "", "Marie-Claire Ngo", "Jean Dupont", "Élodie Abéna"][int(0, 4)],
      at: new Date(Date.UTC(2026, int(0, 11), int(1, 28), int(0, 23), int(0, 59), int(0, 59))),
    };
  });
}

const noTransport = async () => ({ status: 200, body: { results: [] } });

describe("deposit confirmations read back as what the network did (both operators, seeded)", () => {
  const sms = new OperatorSms({ baseUrl: "", token: "", seed: 7, transport: noTransport });
  it.each(receipts(20261122, 80).map((r, i) => [i, r.operator, r]))("receipt %i (%s)", (_i, operator, r) => {
    const [out] = sms.smsFor(op(operator), dialled(r));
    const parsed = parseMessage(operator, out.raw);
    expect(parsed).toMatchObject({
      kind: "DEP",
      amount: r.amount,
      fee: operator === "operator_b" ? r.fee : null,
      balance_after: r.balance_after,
      operator_ref: referenceOf(operator, r.reference, r.at),
      counterparty_msisdn: operator === "operator_a" ? `237${r.counterparty_msisdn}` : r.counterparty_msisdn,
      counterparty_name: nameOf(r.counterparty_msisdn!, r.counterparty_name),
    });
    expect(out).toMatchObject({
      sender: operator === "operator_a" ? "MobileMoney" : "OrangeMoney",
      receivedAt: r.at,
      about: { kind: "deposit" },
    });
  });

  it("gives every SMS about one transfer the same reference, and two transfers two references", () => {
    const [r1, r2] = receipts(5, 2);
    expect(referenceOf("operator_b", r1.reference, r1.at)).toBe(referenceOf("operator_b", r1.reference, r1.at));
    expect(referenceOf("operator_b", r1.reference, r1.at)).not.toBe(referenceOf("operator_b", r2.reference, r1.at));
    expect(referenceOf("operator_b", r1.reference, r1.at)).toMatch(/^CI\d{6}\.\d{4}\.[A-D]\d{5}$/);
    expect(referenceOf("operator_a", r1.reference, r1.at)).toMatch(/^\d{11}$/);
  });

  it("varies languages and names, and reproduces exactly with the same seed", () => {
    const rs = receipts(11, 40).filter((r) => r.operator === "operator_a");
    const texts = (seed: number) => {
      const s = new OperatorSms({ baseUrl: "", token: "", seed, transport: noTransport });
      return rs.map((r) => s.smsFor(op("operator_a"), dialled(r))[0].raw);
    };
    expect(texts(3)).toEqual(texts(3));
    const langs = new Set(texts(3).map((t) => (t.startsWith("Cash in") ? "en" : "fr")));
    expect(langs).toEqual(new Set(["en", "fr"]));
    expect(new Set(rs.map((r) => nameOf(r.counterparty_msisdn!, r.counterparty_name))).size).toBeGreaterThan(5);
  });
});

describe("the other texts", () => {
  const sms = new OperatorSms({ baseUrl: "", token: "", seed: 9, transport: noTransport });

  it.each<OperatorName>(["operator_a", "operator_b"])(
    "answers a balance check on %s with a balance reply",
    (operator) => {
      const r: Receipt = {
        ...receipts(1, 1)[0],
        operator,
        kind: "balance",
        amount: 123_456,
        fee: 0,
        counterparty_msisdn: null,
        counterparty_name: null,
      };
      const [out] = sms.smsFor(op(operator, { op_type: "balance" }), dialled(r));
      expect(parseMessage(operator, out.raw)).toMatchObject({ kind: "BAL", balance_after: 123_456 });
    },
  );

  it.each<OperatorName>(["operator_a", "operator_b"])(
    "sends a refusal on %s when the network refused for lack of funds",
    (operator) => {
      const result: DialResult = {
        outcome: "ussd_failed",
        ussd_response: "Echec: solde insuffisant pour effectuer cette transaction.",
        failure_detail: null,
        executed_at: new Date(),
      };
      const [out] = sms.smsFor(op(operator), result);
      expect(parseMessage(operator, out.raw)).toMatchObject({ kind: "FAIL", amount: null });
    },
  );

  it("sends nothing when nothing happened (no dialog, wrong PIN)", () => {
    expect(
      sms.smsFor(op("operator_b"), {
        outcome: "no_service",
        ussd_response: null,
        failure_detail: null,
        executed_at: new Date(),
      }),
    ).toEqual([]);
    expect(
      sms.smsFor(op("operator_b"), {
        outcome: "ussd_failed",
        ussd_response: "Code secret incorrect.",
        failure_detail: null,
        executed_at: new Date(),
      }),
    ).toEqual([]);
  });

  it.each<OperatorName>(["operator_a", "operator_b"])(
    "builds movements and promotions on %s that never confirm",
    (operator) => {
      for (let i = 0; i < 20; i += 1) {
        const m = sms.movement("sim-1", operator);
        const parsed = parseMessage(operator, m.raw);
        expect(parsed.kind).toBe("UV_IN");
        expect(isMovement(parsed.kind)).toBe(true);
        expect(parsed.amount).toBe(m.about.amount);
        const p = parseMessage(operator, sms.promotionSms("sim-1", operator).raw);
        expect(p).toMatchObject({ kind: "MKT", amount: null, balance_after: null });
      }
    },
  );
});

describe("faults change delivery, never the texts", () => {
  function harness(fault?: SmsFault) {
    const posted: { message_ids: string[]; raws: string[] }[] = [];
    const sms = new OperatorSms({
      baseUrl: "",
      token: "t",
      seed: 1,
      transport: async (_token, body) => {
        const b = body as { messages: { client_message_id: string; raw: string }[] };
        posted.push({ message_ids: b.messages.map((m) => m.client_message_id), raws: b.messages.map((m) => m.raw) });
        return { status: 200, body: { results: b.messages.map(() => ({ outcome: "orphan" })) } };
      },
    });
    if (fault) sms.failNext(fault);
    const [r1, r2] = receipts(3, 4).filter((r) => r.operator === "operator_b");
    return {
      sms,
      posted,
      first: () => sms.onDialled(op("operator_b"), dialled(r1)),
      second: () => sms.onDialled(op("operator_b"), dialled(r2)),
    };
  }

  it("forwards each SMS once without a fault", async () => {
    const h = harness();
    await h.first();
    expect(h.posted).toHaveLength(1);
    expect(h.sms.deliveries[0].body).toEqual({ outcome: "orphan" });
  });

  it("loses an SMS", async () => {
    const h = harness({ kind: "lost" });
    await h.first();
    await h.second();
    expect(h.posted).toHaveLength(1);
    expect(h.sms.lost).toHaveLength(1);
  });

  it("holds a delayed SMS until released", async () => {
    const h = harness({ kind: "delayed" });
    await h.first();
    expect(h.posted).toHaveLength(0);
    await h.sms.releaseDelayed();
    expect(h.posted).toHaveLength(1);
  });

  it("duplicates by the handset with one client id, by the operator with two", async () => {
    const handset = harness({ kind: "duplicated", by: "handset" });
    await handset.first();
    expect(handset.posted.map((p) => p.message_ids[0])).toEqual([
      handset.posted[0].message_ids[0],
      handset.posted[0].message_ids[0],
    ]);
    const operator = harness({ kind: "duplicated", by: "operator", concurrent: true });
    await operator.first();
    expect(operator.posted).toHaveLength(2);
    expect(operator.posted[0].raws).toEqual(operator.posted[1].raws);
    expect(operator.posted[0].message_ids[0]).not.toBe(operator.posted[1].message_ids[0]);
  });

  it("reorders: the held SMS arrives right after the next one", async () => {
    const h = harness({ kind: "reordered" });
    await h.first();
    expect(h.posted).toHaveLength(0);
    await h.second();
    expect(h.posted).toHaveLength(2);
    const [a, b] = h.posted.map((p) => parseMessage("operator_b", p.raws[0]).amount);
    const [r1, r2] = receipts(3, 4).filter((r) => r.operator === "operator_b");
    expect([a, b]).toEqual([r2.amount, r1.amount]);
  });
});

describe("a simulated day of one SIM's SMS", () => {
  const transport = async () => ({ status: 200, body: { results: [] } });
  const asChain = (s: { raw: string; operator: OperatorName; receivedAt: Date }, i: number): ChainMessage => {
    const p = parseMessage(s.operator, s.raw);
    return { ...p, id: `m${i}`, received_at: s.receivedAt, outcome: "orphan" };
  };

  it.each(["operator_a", "operator_b"] as const)("%s: every balance follows from the previous one", (operator) => {
    const sms = new OperatorSms({ baseUrl: "http://unused", token: "t", seed: 3, transport });
    const day = sms.dayOf("sim-1", operator, { start: new Date("2026-11-20T07:00:00Z"), opening: 250_000, count: 60 });
    expect(new Set(day.map((s) => s.about.kind))).toEqual(new Set(["deposit", "movement", "balance", "promotion"]));
    const r = reconcileDay(null, day.map(asChain));
    expect(r).toMatchObject({ opening_balance: 250_000, unexplained_xaf: 0, breaks: [], unreadable_movements: 0 });
  });

  it("names the gap of a lost message", () => {
    const sms = new OperatorSms({ baseUrl: "http://unused", token: "t", seed: 4, transport });
    const day = sms.dayOf("sim-1", "operator_b", {
      start: new Date("2026-11-20T07:00:00Z"),
      opening: 250_000,
      count: 30,
    });
    const lost = day.findIndex((s, i) => i > 3 && s.about.kind === "deposit");
    const chain = day.map(asChain);
    const r = reconcileDay(
      null,
      chain.filter((_, i) => i !== lost),
    );
    const moved = -(chain[lost].amount! + chain[lost].fee!);
    expect(r.unexplained_xaf).toBe(moved);
    expect(r.breaks).toHaveLength(1);
    expect(r.breaks[0].gap).toBe(moved);
  });
});

describe("the network's references", () => {
  it("never give two transfers one reference, where operator_b's format would (then the second reads as a restatement)", () => {
    // Two simulator references whose operator_b references collide in one minute.
    const at = new Date(Date.UTC(2026, 11, 1, 9, 30));
    const seen = new Map<string, string>();
    let pair: [string, string] | undefined;
    for (let i = 0; !pair; i++) {
      const ref = referenceOf("operator_b", `CI261201.${i}`, at);
      const other = seen.get(ref);
      if (other) pair = [other, `CI261201.${i}`];
      else seen.set(ref, `CI261201.${i}`);
    }
    expect(referenceOf("operator_b", pair[0], at)).toBe(referenceOf("operator_b", pair[1], at));
    const sms = new OperatorSms({ baseUrl: "", token: "", seed: 7, transport: noTransport });
    const receipt = (reference: string, amount: number): Receipt => ({
      kind: "deposit",
      operator: "operator_b",
      sim_msisdn: "690100100",
      amount,
      fee: 50,
      balance_after: 100_000,
      reference,
      counterparty_msisdn: "690555555",
      counterparty_name: null,
      at,
    });
    const refOf = (r: Receipt) => {
      const [out] = sms.smsFor(op("operator_b"), dialled(r));
      return out.about.kind === "deposit" ? out.about.reference : undefined;
    };
    const first = refOf(receipt(pair[0], 1000));
    const second = refOf(receipt(pair[1], 2000));
    expect(first).toBe(referenceOf("operator_b", pair[0], at));
    expect(second).not.toBe(first);
    expect(second).toMatch(/^CI261201\.1030\.[A-D]\d{5}$/);
    // Every SMS about one transfer still carries its one reference.
    expect(refOf(receipt(pair[1], 2000))).toBe(second);
    expect(sms.depositText(receipt(pair[1], 2000))).toContain(second);
  });
});
