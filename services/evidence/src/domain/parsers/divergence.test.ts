// A text that names a counterparty number other than the operation's destination never
// confirms it. Evidence sends the number as read; dispatch compares it with the kit's
// isSameNumber (dispatch/src/domain/correlation.ts). These tests read real wordings through
// the parser and apply that comparison, as the two services do together.

import { describe, expect, it } from "vitest";
import { parseMessage } from "./parse.ts";
import { wouldConfirm } from "./testdata/replay.ts";
import type { Operator } from "./types.ts";

const DESTINATION = "690000001";

// The credited wallet's copy of a cash-in in MTN's terse wording (corpus x-a-033, Benin 2025),
// with the number in each reading.
const terse = (number: string) =>
  `Depot recu 3250F de NORBERT DOSSOU BLADON (${number} - ) le 2025-11-12 20:48:52 Solde:4222F ID:10932256987Frais:0F.`;

describe("a counterparty number that is not the destination in any reading: no confirmation", () => {
  it.each<[string, Operator, string, string, boolean]>([
    [
      "the upper-cased terse MTN deposit from a Benin number",
      "operator_a",
      terse("2290167744314").toUpperCase(),
      "2290167744314",
      false,
    ],
    ["the terse MTN deposit from a Benin number", "operator_a", terse("2290167744314"), "2290167744314", false],
    ["the terse MTN deposit from another local number", "operator_a", terse("690000009"), "690000009", false],
    ["the terse MTN deposit from another number, +237", "operator_a", terse("+237690000009"), "237690000009", false],
    ["the terse MTN deposit from the destination, 237", "operator_a", terse("237690000001"), "237690000001", true],
    ["the terse MTN deposit from the destination, local", "operator_a", terse("690000001"), "690000001", true],
    ["a masked number whose visible digits contradict", "operator_a", terse("2376XXXXX009"), "2376XXXXX009", false],
    ["a masked number whose visible digits agree", "operator_a", terse("2376XXXXX001"), "2376XXXXX001", true],
    [
      "Orange's agent deposit to another number",
      "operator_b",
      "Depot vers 690000009 reussi from 698765432. Informations detaillees: Montant: 5000 FCFA, Frais: 0 FCFA, Transaction Id: CI250101.1200.A00001, Nouveau Solde: 100000 FCFA",
      "690000009",
      false,
    ],
  ])("%s", (_case, operator, text, read, confirms) => {
    const p = parseMessage(operator, text);
    expect(p.kind).toBe("DEP");
    expect(p.counterparty_msisdn).toBe(read);
    expect(wouldConfirm(p, DESTINATION)).toBe(confirms);
  });

  it("never confirms a kind other than DEP, whatever its number", () => {
    const p = parseMessage("operator_a", terse("690000001").replace("Depot recu", "Transfert"));
    expect(p.kind).not.toBe("DEP");
    expect(wouldConfirm(p, DESTINATION)).toBe(false);
  });
});
