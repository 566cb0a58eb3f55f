import { describe, expect, it } from "vitest";
import { proofStanding } from "./proof-standing.ts";
import type { MessageRecord } from "./message.ts";

type Facts = Pick<MessageRecord, "outcome" | "kind" | "amount" | "balance_after">;
const dep: Facts = { outcome: "orphan", kind: "DEP", amount: 5000, balance_after: 10_000 };

describe("what an orphan can prove by itself", () => {
  it.each<[string, Facts, boolean, boolean, string | null]>([
    ["the operator's deposit with an amount", dep, true, true, null],
    ["a balance reply with a balance", { ...dep, kind: "BAL", amount: null }, true, true, null],
    ["an ambiguous deposit", { ...dep, outcome: "ambiguous" }, true, true, null],
    ["an unknown sender's deposit", { ...dep, outcome: "unknown_sender" }, false, false, "unknown_sender"],
    [
      "an unknown sender's refusal",
      { ...dep, outcome: "unknown_sender", kind: "FAIL" },
      false,
      false,
      "unknown_sender",
    ],
    ["the operator's refusal (FAIL)", { ...dep, outcome: "stored", kind: "FAIL" }, true, false, "kind_cannot_prove"],
    ["a text no rule recognised", { ...dep, kind: null }, true, false, "kind_cannot_prove"],
    ["a movement", { ...dep, outcome: "movement", kind: "UV_IN" }, true, false, "kind_cannot_prove"],
    ["a deposit whose amount is unreadable", { ...dep, amount: null }, true, false, "no_amount"],
    ["a balance reply without a balance", { ...dep, kind: "BAL", balance_after: null }, true, false, "no_amount"],
  ])("%s", (_name, m, sender, can, reason) => {
    expect(proofStanding(m)).toEqual({ sender_is_operator: sender, can_prove: can, cannot_prove_reason: reason });
  });
});
