// The export of what the fleet taught, from a database: each active taught rule with the newest
// texts it read, personal values masked, labelled with what the rule read; and those texts turned
// into corpus entries that the rule (and only a rule, until the built-ins learn them) reads as labelled.

import { create } from "@bufbuild/protobuf";
import { describe, expect, it } from "vitest";
import {
  ActivateWordingRuleRequestSchema,
  AddWordingRuleRequestSchema,
} from "@transferops/kit/gen/transferops/evidence/v1/evidence_service_pb";
import { one, session, useHarness, type Harness } from "../../../../test/support/evidence-harness.ts";
import { parseMessage } from "../domain/parsers/parse.ts";
import { ruleOf } from "../domain/wording-rule.ts";
import { corpusEntries } from "../domain/parsers/testdata/add-taught.ts";
import { activeWordingRules } from "../store/wording-rules.ts";
import { EXAMPLES_PER_RULE, exportTaught } from "./taught-export.ts";
import { activateRule, addRule } from "./wording-rules.ts";

let h: Harness;
useHarness((opened) => (h = opened));

const ADMIN = session("00000000-0000-4000-8000-0000000000ad", "admin");
const APPROVER = session("00000000-0000-4000-8000-0000000000ae", "admin");
const TEMPLATE = "Operation KX9 sortie {name} {phone}: {amount}. Code {ref}. Reste {balance}.";
const text = (n: number) =>
  `Operation KX9 sortie Marie Ngono 6991234${String(n).padStart(2, "0")}: ${15_000 + n} FCFA. Code MP2611.${1000 + n}.A77. Reste ${12_345_678 - n} FCFA.`;

describe("what the fleet taught, exported", () => {
  it("gives each active rule's newest texts, masked, labelled with what the rule read; the corpus takes them once", async () => {
    const draft = await addRule(
      h.deps,
      create(AddWordingRuleRequestSchema, {
        caller: ADMIN,
        operator: "operator_b",
        kind: "UV_OUT",
        language: "fr",
        direction: "out",
        template: TEMPLATE,
      }),
    );
    await activateRule(
      h.deps,
      create(ActivateWordingRuleRequestSchema, { caller: APPROVER, versionId: draft.id }),
      () => {},
    );
    for (let n = 1; n <= EXAMPLES_PER_RULE + 2; n++) expect((await one(h, text(n))).kind).toBe("UV_OUT");

    const exported = await exportTaught(h.db, {
      from: "acme-douala",
      country: "CM",
      now: new Date("2026-11-29T04:00:00Z"),
    });
    expect(exported).toMatchObject({ format: "transferops.taught-wordings.v1", from: "acme-douala", country: "CM" });
    expect(exported.rules).toHaveLength(1);
    const [rule] = exported.rules;
    expect(rule).toMatchObject({
      rule_id: draft.rule_id,
      version: 1,
      operator: "operator_b",
      kind: "UV_OUT",
      template: TEMPLATE,
    });
    // The newest first, as many as an export carries.
    expect(rule!.examples).toHaveLength(EXAMPLES_PER_RULE);
    const n = EXAMPLES_PER_RULE + 2;
    expect(rule!.examples[0]).toEqual({
      text: `Operation KX9 sortie [NAME] [PHONE]: ${15_000 + n} FCFA. Code [TXN_ID]. Reste ${12_345_678 - n} FCFA.`,
      expected: {
        amount: 15_000 + n,
        fee: null,
        balance_after: 12_345_678 - n,
        operator_ref: null,
        counterparty_msisdn: null,
        counterparty_name: null,
        direction: "out",
      },
    });
    for (const e of rule!.examples) expect(e.text).not.toMatch(/Ngono|699|MP2611/);

    // Into the corpus: each text once, with its source and its part by hash; the taught rule
    // reads the masked text as labelled.
    const entries = corpusEntries(exported, []);
    expect(entries).toHaveLength(EXAMPLES_PER_RULE);
    expect(corpusEntries(exported, entries)).toEqual([]);
    const taught = (await activeWordingRules(h.db.em(), "operator_b")).map(ruleOf);
    for (const entry of entries) {
      expect(entry.source).toBe(`fleet: acme-douala export 2026-11-29T04:00:00.000Z, taught rule ${draft.rule_id} v1`);
      expect(["dev", "heldout"]).toContain(entry.split);
      const read = parseMessage("operator_b", entry.text, taught);
      expect({ kind: read.kind, amount: read.amount, balance_after: read.balance_after }).toEqual({
        kind: entry.kind,
        amount: entry.expected.amount,
        balance_after: entry.expected.balance_after,
      });
    }
  });
});
