import { describe, expect, it } from "vitest";
import { isMovement } from "./parsers/parse.ts";
import { MESSAGE_KINDS, type MessageKind } from "./parsers/types.ts";
import {
  inUnmatchedQueue,
  isMatched,
  isRestated,
  matchValueOf,
  MOVEMENT_KINDS,
  OUTCOMES,
  outcomeOfProof,
  provenBalanceOf,
  routeOf,
  initialOutcome,
} from "./outcomes.ts";

describe("what a new message is routed to (rules 2 to 4, in precedence order)", () => {
  // One row per kind: the route with correlate=true, then with correlate=false.
  const table: [MessageKind | null, string, string][] = [
    ["DEP", "correlate", "not_correlated"],
    [null, "orphan", "not_correlated"],
    ["BAL", "correlate", "not_correlated"],
    ["UV_OUT", "movement", "movement"],
    ["UV_IN", "movement", "movement"],
    ["FLOAT_OUT", "movement", "movement"],
    ["FLOAT_IN", "movement", "movement"],
    ["UV_WITH", "movement", "movement"],
    ["FLOAT_WITH", "movement", "movement"],
    ["AIRTIME", "movement", "movement"],
    ["COM_SWEEP", "movement", "movement"],
    ["REV", "movement", "movement"],
    ["OPERATOR_A_REC", "stored", "stored"],
    ["OPERATOR_B_REC", "stored", "stored"],
    ["ADMIN", "stored", "stored"],
    ["COM", "stored", "stored"],
    ["MKT", "stored", "stored"],
    ["TPL", "stored", "stored"],
    ["FAIL", "stored", "stored"],
  ];

  it.each(table)("kind %s: %s when correlating, %s when not", (kind, withCorrelate, without) => {
    expect(routeOf(kind, true)).toBe(withCorrelate);
    expect(routeOf(kind, false)).toBe(without);
  });

  it("never correlates a wording a rule recognised without a kind (merchant payment, repayment)", () => {
    expect(routeOf(null, true, "a.fr.payment.effectue")).toBe("stored");
    expect(routeOf(null, true, "too_long")).toBe("stored");
    expect(routeOf(null, true, null)).toBe("orphan");
    expect(routeOf(null, true, "unrecognised")).toBe("orphan");
    expect(routeOf("DEP", true, "a.fr.dep.cash_in")).toBe("correlate");
  });

  it("never correlates a message from a sender that is not the operator's, whatever its kind", () => {
    for (const kind of [...MESSAGE_KINDS, null]) {
      expect(routeOf(kind, true, null, false)).toBe("unknown_sender");
      expect(routeOf(kind, false, null, false)).toBe("unknown_sender");
    }
    expect(initialOutcome("unknown_sender")).toBe("unknown_sender");
    expect(initialOutcome("orphan")).toBe("orphan");
  });

  it("covers every kind of the contract", () => {
    expect(
      table
        .map((r) => r[0])
        .filter((k) => k !== null)
        .sort(),
    ).toEqual([...MESSAGE_KINDS].sort());
  });

  it("stores a message to correlate as pending and the others finished", () => {
    expect(initialOutcome("correlate")).toBe("pending");
    expect(initialOutcome("movement")).toBe("movement");
    expect(initialOutcome("stored")).toBe("stored");
    expect(initialOutcome("not_correlated")).toBe("not_correlated");
  });

  it("lists the same movement kinds as the parser", () => {
    for (const k of MESSAGE_KINDS) expect(MOVEMENT_KINDS.includes(k)).toBe(isMovement(k));
  });
});

describe("dispatch's answer", () => {
  it.each([
    ["confirmed", "confirmed"],
    ["ambiguous", "ambiguous"],
    ["divergent", "divergent"],
    ["no_candidate", "orphan"],
    ["restated", "restated"],
  ])("%s is the outcome %s", (answer, outcome) => {
    expect(outcomeOfProof(answer)).toBe(outcome);
  });

  it("refuses an answer it does not know rather than reading it as anything", () => {
    expect(() => outcomeOfProof("maybe")).toThrow(/unknown proof answer from dispatch: maybe/);
    expect(() => outcomeOfProof("")).toThrow(/unknown proof answer/);
  });
});

describe("the value dispatch matches by (rule 6)", () => {
  it.each([
    [{ kind: "DEP", amount: 5000, balance_after: 100 }, 5000],
    [{ kind: null, amount: 700, balance_after: null }, 700],
    [{ kind: "DEP", amount: null, balance_after: 100 }, null],
    [{ kind: "BAL", amount: null, balance_after: 25_000 }, 25_000],
    [{ kind: "BAL", amount: 3, balance_after: null }, null],
  ] as const)("%o -> %s", (m, value) => {
    expect(matchValueOf(m as never)).toBe(value);
  });
});

describe("the balance a proof writes to fleet", () => {
  it("reads the balance after, as an SMS reading or a balance check", () => {
    expect(provenBalanceOf({ kind: "DEP", balance_after: 1200 })).toEqual({ balance: 1200, source: "sms" });
    expect(provenBalanceOf({ kind: null, balance_after: 0 })).toEqual({ balance: 0, source: "sms" });
    expect(provenBalanceOf({ kind: "BAL", balance_after: 9 })).toEqual({ balance: 9, source: "balance_check" });
  });
  it("writes nothing when the text had no readable balance", () => {
    expect(provenBalanceOf({ kind: "DEP", balance_after: null })).toBeNull();
  });
});

describe("matched and restated flags", () => {
  it.each(OUTCOMES.map((o) => [o]))("%s", (o) => {
    expect(isMatched(o)).toBe(o === "confirmed" || o === "restated" || o === "attached");
    expect(isRestated(o)).toBe(o === "restated");
  });
});

describe("the unmatched queue", () => {
  it("holds what could prove something and operator refusals, never movements or notices", () => {
    const inQueue = [null, ...MESSAGE_KINDS].filter((k) => inUnmatchedQueue(k));
    expect(inQueue).toEqual([null, "DEP", "BAL", "FAIL"]);
  });
});
