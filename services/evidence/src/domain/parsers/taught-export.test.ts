import { describe, expect, it } from "vitest";
import { maskPersonal, taughtExample, type TaughtReading } from "./taught-export.ts";

const reading = (text: string, o: Partial<TaughtReading> = {}): TaughtReading => ({
  text,
  kind: "UV_IN",
  amount: 5000,
  fee: 0,
  balance_after: 12_345_678,
  operator_ref: null,
  counterparty_msisdn: null,
  counterparty_name: null,
  direction: "in",
  ...o,
});

describe("what a fleet's export masks", () => {
  it.each([
    ["a number written whole", "Recu 5000 FCFA de 690123456.", "Recu 5000 FCFA de [PHONE]."],
    ["a number with its country code", "Recu 5000 FCFA de +237690123456.", "Recu 5000 FCFA de [PHONE]."],
    ["a number in pairs", "Recu 5000 FCFA du 6 90 12 34 56 le 2026-11-29.", "Recu 5000 FCFA du [PHONE] le 2026-11-29."],
    ["a balance of eight digits, which the reading holds", "Solde 12 345 678 FCFA", "Solde 12 345 678 FCFA"],
    ["a date and a time", "le 2026-11-29 16:54:43, 5000 FCFA", "le 2026-11-29 16:54:43, 5000 FCFA"],
  ])("%s", (_, text, masked) => {
    expect(maskPersonal(reading(text))).toBe(masked);
  });

  it("the name and the reference the reading found, in any case and spacing", () => {
    const r = reading("Transfert de 5000 FCFA de MARIE  NGONO. ID: CI260314.1234.B56. Solde 12 345 678 FCFA", {
      counterparty_name: "Marie Ngono",
      operator_ref: "CI260314.1234.B56",
    });
    expect(taughtExample(r)).toEqual({
      text: "Transfert de 5000 FCFA de [NAME]. ID: [TXN_ID]. Solde 12 345 678 FCFA",
      expected: {
        amount: 5000,
        fee: 0,
        balance_after: 12_345_678,
        operator_ref: null,
        counterparty_msisdn: null,
        counterparty_name: null,
        direction: "in",
      },
    });
  });
});
