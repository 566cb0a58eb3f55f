import { describe, expect, it } from "vitest";
import { parseMessage } from "./parse.ts";
import {
  compileWordingRule,
  isMoneyReceived,
  templateProblems,
  tryWordingRule,
  type WordingRuleSpec,
} from "./wording-rules.ts";

// A rewording of MTN's terse deposit no built-in rule reads (written for this test).
const NEW_WORDING =
  "CREDIT MOMO: 3250F recus de NORBERT DOSSOU (237670000009) | Nouveau solde 4222F | Trx 10932256987 | Frais 0F";
const SPEC: WordingRuleSpec = {
  operator: "operator_a",
  kind: "UV_IN",
  language: "fr",
  direction: "in",
  template: "CREDIT MOMO: {amount} recus de {name} ({phone}) | Nouveau solde {balance} | Trx {ref} | Frais {fee}",
};

describe("a wording rule taught as a template", () => {
  it("reads a text no built-in rule reads, every field from its slot", () => {
    expect(parseMessage("operator_a", NEW_WORDING).rule).not.toMatch(/^taught/);
    const rule = compileWordingRule(SPEC, "taught.operator_a.r1.v1");
    expect(parseMessage("operator_a", NEW_WORDING, [rule])).toMatchObject({
      kind: "UV_IN",
      direction: "in",
      amount: 3250,
      fee: 0,
      balance_after: 4222,
      operator_ref: "10932256987",
      counterparty_msisdn: "237670000009",
      counterparty_name: "NORBERT DOSSOU",
      rule: "taught.operator_a.r1.v1",
    });
  });

  it("forgives case, accents and whitespace as the built-in rules do", () => {
    const rule = compileWordingRule(SPEC, "taught.operator_a.r1.v1");
    const text = NEW_WORDING.toLowerCase().replace("recus", "reçus").replace(/ \| /g, "\n|  ");
    expect(parseMessage("operator_a", text, [rule])).toMatchObject({
      kind: "UV_IN",
      amount: 3250,
      balance_after: 4222,
    });
  });

  it.each<[string, Partial<WordingRuleSpec>, string]>([
    [
      "a deposit without a number",
      { kind: "DEP", template: "Depot de {amount} ref {ref}" },
      "deposit_needs_amount_ref_and_phone",
    ],
    [
      "a balance reply without a balance",
      { kind: "BAL", template: "Votre solde est {amount}" },
      "balance_needs_balance",
    ],
    ["an unknown slot", { template: "Recu {montant} de {name}" }, "unknown_slot"],
    ["a slot twice", { template: "Recu {amount} puis {amount}" }, "repeated_slot"],
    ["slots alone", { template: "{amount} {name} {ref}" }, "no_literal_text"],
    [
      "a movement without an amount",
      { kind: "UV_OUT", template: "Envoye a {name} ref {ref}" },
      "movement_needs_amount",
    ],
    ["an over-long template", { template: `Recu {amount} ${"x".repeat(700)}` }, "template_too_long"],
  ])("refuses %s", (_case, change, problem) => {
    const spec = { ...SPEC, ...change };
    expect(templateProblems(spec)).toContain(problem);
    expect(() => compileWordingRule(spec, "taught.x.v1")).toThrow(problem);
  });

  it("reads a name with digits glued to its words, never a number standing alone as a name", () => {
    const rule = compileWordingRule(
      { ...SPEC, template: "Paiement {amount} a {name} le {date}. Solde: {balance}. ID: {ref}" },
      "taught.operator_a.r2.v1",
    );
    const read = (name: string) =>
      parseMessage("operator_a", `Paiement 5000F a ${name} le 2025-01-02 10:00. Solde: 100F. ID: 123456789`, [rule]);
    expect(read("LA VENDEUSE P2M")).toMatchObject({ rule: rule.id, counterparty_name: "LA VENDEUSE P2M" });
    expect(read("LYCEE DE NYLON-1er cycle")).toMatchObject({ counterparty_name: "LYCEE DE NYLON-1er cycle" });
    // "ETS 2000": a number on its own is a value; the wording is not this one's.
    expect(read("ETS 2000 PLUS").rule).not.toBe(rule.id);
    expect(read("237699112233").rule).not.toBe(rule.id);
  });

  it("is tried on every stored text it would read differently; only what nothing proved is read again", () => {
    const rule = compileWordingRule(SPEC, "taught.operator_a.r1.v1");
    const unread = {
      kind: null,
      rule: "unrecognised",
      direction: null,
      amount: null,
      fee: null,
      balance_after: null,
      operator_ref: null,
      counterparty_msisdn: null,
    };
    const stored = (id: string, outcome: string, text = NEW_WORDING) => ({
      ...unread,
      id,
      operator: "operator_a" as const,
      raw_text: text,
      outcome,
    });
    const reads = tryWordingRule(rule, "operator_a", [
      stored("orphan", "orphan"),
      stored("confirmed", "confirmed"),
      stored("attached", "attached"),
      stored("other wording", "orphan", "Bonjour"),
      { ...stored("other operator", "orphan"), operator: "operator_b" },
    ]);
    expect(reads.map((r) => [r.message_id, r.rereadable])).toEqual([
      ["orphan", true],
      ["confirmed", false],
      ["attached", false],
    ]);
    expect(reads[0].after).toMatchObject({ kind: "UV_IN", amount: 3250 });
    expect(reads[0].before).toEqual(unread);
    // Read today exactly as the rule reads it: nothing differs, nothing listed.
    const same = { ...stored("same", "movement"), ...reads[0].after, rule: "a.fr.uv_in.recu" };
    expect(tryWordingRule(rule, "operator_a", [same])).toEqual([]);
  });

  it("marks a text read today as money received that a confirming rule would read as proof", () => {
    const received =
      "Vous avez recu 2000 FCFA de AWA BELLO (237677000111) le 2026-11-20 10:00:00. ID: CI261120.1000.A12345. Solde: 12000 FCFA.";
    const today = parseMessage("operator_a", received);
    expect([today.kind, today.direction]).toEqual(["UV_IN", "in"]);
    const deposit = compileWordingRule(
      {
        operator: "operator_a",
        kind: "DEP",
        language: "fr",
        direction: "out",
        template: "Vous avez recu {amount} de {name} ({phone}) le {any}. ID: {ref}. Solde: {balance}.",
      },
      "taught.operator_a.dep.v1",
    );
    const [read] = tryWordingRule(deposit, "operator_a", [
      { ...today, id: "m1", operator: "operator_a", raw_text: received, outcome: "movement" },
    ]);
    expect([read.after.kind, read.rereadable, read.money_received_as_proof]).toEqual(["DEP", false, true]);
    expect(isMoneyReceived({ kind: "DEP", direction: "out" })).toBe(false);
    expect(isMoneyReceived({ kind: "FLOAT_IN", direction: null })).toBe(true);
  });
});
