import { describe, expect, it } from "vitest";
import {
  checkActivation,
  checkNewVersion,
  checkRetirement,
  parseRuleId,
  ruleOf,
  type WordingRuleRecord,
} from "./wording-rule.ts";
import { refusalThrownBy } from "../../../../test/support/refusal.ts";

const version = (o: Partial<WordingRuleRecord> = {}): WordingRuleRecord => ({
  id: "3b9a52f0-6f7e-4c1a-9a7d-2f5b8c1d0e11",
  rule_id: "a1c4e7b2-3d5f-4a6b-8c9d-0e1f2a3b4c5d",
  version: 2,
  operator: "operator_b",
  kind: "DEP",
  language: "fr",
  direction: "out",
  template: "Operation KX7 terminee: {amount} credites au client {phone}. Code {ref}. Reste {balance}.",
  state: "draft",
  created_at: new Date(),
  created_by: "5e2d1c0b-9a8f-4e7d-b6c5-a4b3c2d1e0f9",
  activated_at: null,
  activated_by: null,
  retired_at: null,
  retired_by: null,
  reread_state: "none",
  reread_after_at: null,
  reread_after_id: null,
  reread_messages: 0,
  reread_confirmed: 0,
  ...o,
});

describe("a wording rule version", () => {
  it("is refused with its first problem as the reason and every problem listed", () => {
    const r = refusalThrownBy(() =>
      checkNewVersion({ operator: "operator_b", kind: "DEP", language: "fr", direction: null, template: "{amount}" }),
    );
    expect(r.reason).toBe("no_literal_text");
    expect(r.context.problems).toEqual(["no_literal_text", "deposit_needs_amount_ref_and_phone"]);
  });

  it("refuses an unknown operator, language or direction before reading the template", () => {
    const base = { operator: "operator_b", kind: null, language: "fr", direction: null, template: "Bonjour {any}" };
    for (const bad of [{ operator: "operator_c" }, { language: "de" }, { direction: "up" }, { template: "  " }]) {
      expect(refusalThrownBy(() => checkNewVersion({ ...base, ...bad })).reason).toBe("invalid_request");
    }
    expect(checkNewVersion(base)).toMatchObject({ operator: "operator_b", kind: null });
  });

  it("moves draft -> active -> retired, never back", () => {
    expect(checkActivation(version())).toBe("activate");
    expect(checkActivation(version({ state: "active" }))).toBe("already");
    expect(refusalThrownBy(() => checkActivation(version({ state: "retired" }))).reason).toBe("wording_rule_retired");
    expect(checkRetirement(version())).toBe("retire");
    expect(checkRetirement(version({ state: "active" }))).toBe("retire");
    expect(checkRetirement(version({ state: "retired" }))).toBe("already");
  });

  it("compiles to a parser rule named after its operator, rule and version", () => {
    const v = version();
    expect(parseRuleId(v)).toBe(`taught.operator_b.${v.rule_id}.v2`);
    expect(ruleOf(v)).toBe(ruleOf(v));
    expect(ruleOf(v)).toMatchObject({ id: parseRuleId(v), kind: "DEP", direction: "out" });
  });
});
