// The simulation's wording drift: deterministic, a rewording (never other figures), and what
// evidence's parser reads from a drifted text is what the text says or nothing.
import { describe, expect, it } from "vitest";
import { parseMessage } from "../../services/evidence/src/domain/parsers/parse.ts";
import {
  balanceReply,
  depositConfirmation,
  failure,
  transferReceived,
} from "../../services/evidence/src/domain/sms-templates.ts";
import type { OutgoingSms } from "../simulator/operator-sms.ts";
import type { OperatorName } from "../simulator/operator.ts";
import { driftText, SIM_DRIFTS } from "./drift.ts";

const at = new Date("2026-11-29T10:15:00Z");

function texts(operator: OperatorName): OutgoingSms[] {
  const base = { simId: "sim-0", operator, sender: "x", receivedAt: at, clientMessageId: "c" };
  const fr = "fr" as const;
  const customer = operator === "operator_a" ? "237677000001" : "699000001";
  return [
    {
      ...base,
      raw: depositConfirmation(operator, {
        amount: 12_500,
        fee: operator === "operator_b" ? 125 : null,
        balanceAfter: 137_375,
        ref: operator === "operator_a" ? "12345678901" : "CI261129.1115.A12345",
        msisdn: customer,
        name: "JEAN NGONO",
        at,
        language: fr,
      }),
      about: { kind: "deposit", amount: 12_500 },
    },
    {
      ...base,
      raw: balanceReply(operator, { balance: 88_000, language: fr }),
      about: { kind: "balance", amount: 88_000 },
    },
    { ...base, raw: failure(operator, { amount: 7_000, language: fr }), about: { kind: "refusal", amount: 7_000 } },
    {
      ...base,
      raw: transferReceived(operator, {
        amount: 4_000,
        fee: operator === "operator_b" ? 0 : null,
        balanceAfter: 92_000,
        ref: operator === "operator_a" ? "10987654321" : "CI261129.1115.B54321",
        msisdn: customer,
        name: "ROSE ETOA",
        at,
        language: fr,
      }),
      about: { kind: "movement", amount: 4_000 },
    },
  ];
}

describe("the simulation's wording drift", () => {
  it("gives the same variant for the same pick and id, and never prints other figures", () => {
    for (const operator of ["operator_a", "operator_b"] as const)
      for (const sms of texts(operator))
        for (let pick = 0; pick < 12; pick++) {
          const v = driftText(sms, pick, `sim-7-${pick}`);
          expect(v).toEqual(driftText(sms, pick, `sim-7-${pick}`));
          if (!v) continue;
          expect(SIM_DRIFTS).toContain(v.drift);
          expect(v.raw).not.toBe(sms.raw);
          expect(v.drift).not.toBe("new_numbers");
        }
  });

  it("is read by evidence's parser as what the text says, or as nothing", () => {
    for (const operator of ["operator_a", "operator_b"] as const)
      for (const sms of texts(operator))
        for (let pick = 0; pick < 12; pick++) {
          const v = driftText(sms, pick, `sim-7-${pick}`);
          if (!v) continue;
          const p = parseMessage(operator, v.raw);
          const read = sms.about.kind === "balance" ? p.balance_after : p.amount;
          if (p.kind === "DEP" || p.kind === "BAL")
            expect({ drift: v.drift, kind: p.kind, read }).toEqual({
              drift: v.drift,
              kind: sms.about.kind === "balance" ? "BAL" : "DEP",
              read: sms.about.amount,
            });
        }
  });
});
