import { describe, expect, it } from "vitest";
import {
  chainBreaks,
  chainOf,
  closeDay,
  dayChainOf,
  dayLinks,
  foldDay,
  linkBreak,
  movementOf,
  reconcileDay,
  startDay,
  type ChainMessage,
} from "./balance-chain.ts";

let n = 0;
const at = (minute: number) => new Date(Date.UTC(2026, 10, 22, 8, minute));
function msg(minute: number, o: Partial<ChainMessage>): ChainMessage {
  n += 1;
  return {
    id: `m${String(n).padStart(3, "0")}`,
    received_at: at(minute),
    kind: "DEP",
    amount: null,
    fee: null,
    balance_after: null,
    direction: "out",
    operator_ref: `R${n}`,
    outcome: "confirmed",
    ...o,
  };
}

describe("balance chain", () => {
  it("moves by amount and fee in the message's direction; a balance reply moves nothing", () => {
    expect(movementOf(msg(0, { amount: 1000, fee: 25, direction: "out" }))).toBe(-1025);
    expect(movementOf(msg(0, { kind: "UV_IN", amount: 1000, fee: null, direction: "in" }))).toBe(1000);
    expect(movementOf(msg(0, { kind: "BAL", balance_after: 5 }))).toBe(0);
    expect(movementOf(msg(0, { kind: null, amount: 1000, direction: null }))).toBeNull();
  });

  it("moves by the net amount when the receipt credits a commission to the same wallet", () => {
    // Orange agent cash-in: Montant 16000, Frais 0, Commission 32, Montant Net Debite 15968.
    expect(movementOf(msg(0, { amount: 16000, fee: 0, commission: 32, direction: "out" }))).toBe(-15968);
    const day = [
      msg(1, { kind: "UV_IN", direction: "in", amount: 16000, balance_after: 16034 }),
      msg(2, { amount: 16000, fee: 0, commission: 32, balance_after: 66 }),
    ];
    expect(chainBreaks(chainOf(day))).toEqual([]);
    expect(reconcileDay(null, day)).toMatchObject({ commissions_xaf: 32, explained_xaf: 32, unexplained_xaf: 0 });
  });

  it("holds when each balance follows from the previous one", () => {
    const day = [
      msg(1, { amount: 1000, balance_after: 9000 }),
      msg(2, { kind: "UV_IN", direction: "in", amount: 500, balance_after: 9500 }),
      msg(3, { kind: "BAL", direction: null, balance_after: 9500 }),
      msg(4, { amount: 2000, fee: 50, balance_after: 7450 }),
    ];
    expect(chainBreaks(chainOf(day))).toEqual([]);
  });

  it("names the two messages and the gap when a message is missing, in any arrival order", () => {
    const a = msg(1, { amount: 1000, balance_after: 9000 });
    msg(2, { amount: 3000, balance_after: 6000 }); // lost
    const c = msg(3, { amount: 500, balance_after: 5500 });
    expect(chainBreaks(chainOf([c, a]))).toEqual([
      { previous_message_id: a.id, message_id: c.id, expected_balance: 8500, found_balance: 5500, gap: -3000 },
    ]);
    expect(linkBreak(a, c)?.gap).toBe(-3000);
  });

  it("puts reordered arrivals back in operator-timestamp order", () => {
    const a = msg(1, { amount: 1000, balance_after: 9000 });
    const b = msg(2, { amount: 3000, balance_after: 6000 });
    const c = msg(3, { amount: 500, balance_after: 5500 });
    expect(chainBreaks(chainOf([c, b, a]))).toEqual([]);
  });

  it("leaves out restatements, unknown senders and a reference read twice", () => {
    const a = msg(1, { amount: 1000, balance_after: 9000 });
    const restated = msg(2, { amount: 1000, balance_after: 9000, outcome: "restated", operator_ref: a.operator_ref });
    const forged = msg(3, { amount: 1000, balance_after: 1, outcome: "unknown_sender" });
    const repeat = msg(4, { amount: 1000, balance_after: 9000, outcome: "orphan", operator_ref: a.operator_ref });
    const b = msg(5, { amount: 1000, balance_after: 8000 });
    expect(chainOf([a, restated, forged, repeat, b]).map((m) => m.id)).toEqual([a.id, b.id]);
    expect(chainBreaks(chainOf([a, restated, forged, repeat, b]))).toEqual([]);
  });

  it("restarts at a message that does not say what it moved", () => {
    const a = msg(1, { amount: 1000, balance_after: 9000 });
    const unknown = msg(2, { kind: null, direction: null, amount: 700, balance_after: 4000 });
    const b = msg(3, { amount: 1000, balance_after: 3000 });
    expect(chainBreaks(chainOf([a, unknown, b]))).toEqual([]);
  });
});

describe("the links of a day's chain", () => {
  it("lists every message with the balance before, the expected and the printed balance, its break flagged", () => {
    const before = msg(0, { amount: 100, balance_after: 10_000 });
    const a = msg(10, { amount: 1000, fee: 25, balance_after: 8975 });
    const silent = msg(11, { kind: "UV_IN", direction: "in", amount: 300 }); // printed no balance
    const b = msg(12, { amount: 500, balance_after: 5000 }); // 3,475 left that no message says
    const links = dayLinks(before, [b, silent, a]);
    expect(
      links.map((l) => [l.message.id, l.balance_before, l.moved, l.expected_balance, l.message.balance_after]),
    ).toEqual([
      [a.id, 10_000, -1025, 8975, 8975],
      [silent.id, 8975, 300, null, null],
      [b.id, 8975, -500, 8475, 5000],
    ]);
    expect(links.map((l) => l.break)).toEqual([
      null,
      null,
      { previous_message_id: a.id, message_id: b.id, expected_balance: 8475, found_balance: 5000, gap: -3475 },
    ]);
    // The same rule as the day's reconciliation: its breaks are the flagged links.
    expect(reconcileDay(before, [b, silent, a]).breaks).toEqual(links.flatMap((l) => (l.break ? [l.break] : [])));
  });

  it("starts without a reference when no message came before the day", () => {
    const a = msg(1, { amount: 1000, balance_after: 9000 });
    expect(dayLinks(null, [a]).map((l) => [l.balance_before, l.expected_balance, l.break])).toEqual([
      [null, null, null],
    ]);
  });
});

describe("the day of one SIM", () => {
  it("reconciles to zero unexplained difference when nothing is lost", () => {
    const before = msg(0, { amount: 100, balance_after: 10_000 });
    const day = [
      msg(10, { amount: 1000, fee: 0, balance_after: 9000 }),
      msg(11, { kind: "UV_IN", direction: "in", amount: 4000, balance_after: 13_000 }),
      msg(12, { kind: "UV_WITH", direction: "out", amount: 2000, fee: 100, balance_after: 10_900 }),
    ];
    expect(reconcileDay(before, day)).toMatchObject({
      opening_balance: 10_000,
      closing_balance: 10_900,
      in_xaf: 4000,
      out_xaf: 3000,
      fees_xaf: 100,
      explained_xaf: 900,
      unexplained_xaf: 0,
      breaks: [],
    });
  });

  it("names the gap and the break when a message is withheld", () => {
    const d1 = msg(10, { amount: 1000, balance_after: 9000 });
    msg(11, { amount: 2500, balance_after: 6500 }); // withheld
    const d3 = msg(12, { amount: 500, balance_after: 6000 });
    const r = reconcileDay(null, [d3, d1]);
    expect(r).toMatchObject({ opening_balance: 10_000, closing_balance: 6000, out_xaf: 1500, unexplained_xaf: -2500 });
    expect(r.breaks).toEqual([
      { previous_message_id: d1.id, message_id: d3.id, expected_balance: 8500, found_balance: 6000, gap: -2500 },
    ]);
  });

  it("opens at the first balance printed, less what came before it", () => {
    const promo = msg(9, { kind: "MKT", direction: null, operator_ref: null });
    const d1 = msg(10, { amount: 1000, balance_after: 9000 });
    expect(reconcileDay(null, [promo, d1])).toMatchObject({ opening_balance: 10_000, unexplained_xaf: 0 });
  });

  it("has no unexplained difference to name without any balance", () => {
    expect(reconcileDay(null, [msg(1, { amount: 5 })]).unexplained_xaf).toBeNull();
    expect(reconcileDay(null, [])).toMatchObject({ opening_balance: null, closing_balance: null, breaks: [] });
  });

  it("sums a day in two parts as it sums it whole, wherever the day is cut", () => {
    // Seeded draws (mulberry32): days of movements, balance replies, unreadable texts, repeated
    // references, breaks and messages with no balance, with and without a message before the day.
    let seed = 7;
    const random = () => {
      seed = (seed + 0x6d2b79f5) | 0;
      let t = Math.imul(seed ^ (seed >>> 15), 1 | seed);
      t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    const pick = <T>(of: readonly T[]) => of[Math.floor(random() * of.length)];
    for (let round = 0; round < 300; round++) {
      let balance = 10_000;
      const day: ChainMessage[] = [];
      for (let i = 0, count = Math.floor(random() * 12); i < count; i++) {
        const amount = 100 * (1 + Math.floor(random() * 20));
        const direction = pick(["in", "out", null] as const);
        const kind = pick(["DEP", "UV_IN", "BAL", "AIRTIME", null] as const);
        if (direction === "in") balance += amount;
        else if (direction === "out") balance -= amount;
        day.push(
          msg(1 + Math.floor(random() * 30), {
            kind,
            direction,
            amount: pick([amount, amount, null]),
            fee: pick([null, 0, 25]),
            commission: pick([null, null, 32]),
            balance_after: pick([balance, balance, balance - 500, null]),
            operator_ref: pick([`R${i}`, "R-same", null]),
            outcome: pick(["confirmed", "orphan", "restated", "unknown_sender"] as const),
          }),
        );
      }
      const before = random() < 0.5 ? msg(0, { balance_after: 10_000 }) : null;
      if (before) before.received_at = new Date(at(0).getTime() - 3_600_000);
      const whole = reconcileDay(before, day);
      const chain = dayChainOf(before, day);
      for (let cut = 0; cut <= chain.length; cut++) {
        const first = foldDay(startDay(before), chain.slice(0, cut));
        // Kept as JSON between the two parts, as today's run is.
        const kept = JSON.parse(JSON.stringify(first)) as typeof first;
        expect(closeDay(foldDay(kept, chain.slice(cut)))).toEqual(whole);
      }
    }
  });
});
