// The proposer on every text of the labelled corpus: given only the text, its operator and
// the kind and direction a person would choose, the proposed template (compiled as the admin
// wording rules are) must read its own example exactly as labelled — kind, direction and every
// measured field — for at least 95% of the texts, every text of the corpus counted (all four
// parts). The figure is printed per part; misses are printed for the development part and the
// constructed texts (written from the operators' wording families); of the held-out and fresh
// texts, which are never written for, only how many misses of each field and manner.

import { describe, expect, it } from "vitest";
import { parseMessage } from "./parse.ts";
import { proposeTemplate } from "./propose.ts";
import { loadTestdata, type Labelled } from "./testdata/drift.ts";
import { FIELD_NAMES, type Direction, type MessageKind, type ParsedMessage } from "./types.ts";
import { compileWordingRule, templateProblems } from "./wording-rules.ts";

const CORPUS = loadTestdata("corpus.jsonl");
const MEASURED = [...FIELD_NAMES.filter((f) => f !== "commission"), "direction"] as const;
/** The goal, held (95.4% measured: development 98.1%, held-out 86.7%, fresh 78.5%, constructed 100%). */
const GOAL_PCT = 95;

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
    const manner = read[f] === null ? "missing" : want === null ? "extra" : "wrong";
    if (read[f] !== want) out.push(`${f} ${manner} ${JSON.stringify(read[f])} (expected ${JSON.stringify(want)})`);
  }
  return out.length > 0 ? [...out, `template ${proposal.template}`] : [];
}

const SPLITS = ["dev", "heldout", "fresh", "constructed"] as const;
const pct = (n: number, of: number) => (of === 0 ? 100 : Math.floor((1000 * n) / of) / 10);

describe("a template proposed from one example", () => {
  const results = CORPUS.map((t) => ({ t, diff: differences(t) }));

  it(`reads its own example exactly as labelled for at least ${GOAL_PCT}% of every text of the corpus`, () => {
    const right = results.filter((r) => r.diff.length === 0).length;
    const lines = [
      `proposer on its own example: ${right}/${CORPUS.length} = ${pct(right, CORPUS.length)}% exactly as labelled (goal ${GOAL_PCT}%)`,
    ];
    for (const split of SPLITS) {
      const these = results.filter((r) => r.t.split === split);
      const ok = these.filter((r) => r.diff.length === 0).length;
      lines.push(`  ${split.padEnd(12)} ${ok}/${these.length} = ${pct(ok, these.length)}%`);
    }
    // Of the held-out and fresh texts only what was missed is counted (field and manner:
    // missing, extra, wrong), never the texts shown.
    const missed = new Map<string, number>();
    for (const r of results.filter((x) => x.diff.length > 0 && (x.t.split === "heldout" || x.t.split === "fresh")))
      for (const d of r.diff.filter((x) => !x.startsWith("template"))) {
        const reason = d.startsWith("problems") || d.startsWith("read") ? d.split(" ")[0] : d.split(" ", 2).join(" ");
        missed.set(reason, (missed.get(reason) ?? 0) + 1);
      }
    lines.push(`  missed in held-out and fresh texts: ${[...missed].map(([f, n]) => `${f} ${n}`).join(", ")}`);
    for (const r of results.filter((x) => x.diff.length > 0 && (x.t.split === "dev" || x.t.split === "constructed")))
      lines.push(`  miss ${r.t.id}: ${r.diff.join("; ")}`);
    console.log(lines.join("\n"));
    // Every text is counted, and each in one of the parts printed.
    expect(SPLITS.reduce((n, split) => n + CORPUS.filter((t) => t.split === split).length, 0)).toBe(CORPUS.length);
    expect(pct(right, CORPUS.length)).toBeGreaterThanOrEqual(GOAL_PCT);
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

  // Texts written for this test in the operators' wordings, one general shape each: the names
  // people and shops have (accents, hyphens, apostrophes, several words, capitals, initials,
  // function words and digits inside), amounts with separators, references of either operator.
  it.each<[string, "operator_a" | "operator_b", MessageKind, Direction, string, Partial<ParsedMessage>]>([
    [
      "accents, hyphen and apostrophe",
      "operator_b",
      "UV_IN",
      "in",
      "Vous avez recu 5000 FCFA de Jean-Pierre N'GUESSAN (237699112233). Solde: 10000 FCFA. ID: 123456789",
      { counterparty_name: "Jean-Pierre N'GUESSAN", counterparty_msisdn: "237699112233" },
    ],
    [
      "accents, no brackets",
      "operator_b",
      "UV_OUT",
      "out",
      "Transfert de 5000 FCFA à Éloïse MBALLA réussi. Frais: 0 FCFA. Ref: MP240102.1234.A12345",
      { counterparty_name: "Éloïse MBALLA", operator_ref: "MP240102.1234.A12345" },
    ],
    [
      "several words in mixed case",
      "operator_b",
      "UV_OUT",
      "out",
      "Transfert de 5000 FCFA vers Marie-Claire Ngo Bayiha effectue. Frais 50 FCFA. Nouveau solde 1000 FCFA. ID transaction: PP240102.1234.A12345",
      { counterparty_name: "Marie-Claire Ngo Bayiha", fee: 50, balance_after: 1000 },
    ],
    [
      "an initial before a name, no brackets",
      "operator_b",
      "UV_OUT",
      "out",
      "Transfert de 5000 FCFA vers A. TOURE effectue. Frais 50 FCFA. Nouveau solde 1000 FCFA. ID transaction: PP240102.1234.A12345",
      { counterparty_name: "A. TOURE" },
    ],
    [
      "a title inside a name, no brackets",
      "operator_b",
      "UV_OUT",
      "out",
      "Vous avez envoye 5000 FCFA a AMINATOU Épse. SALI le 02/01/2025. Frais 50 FCFA. Solde 1000 FCFA. Trans. ID: PP240102.1234.A12345",
      { counterparty_name: "AMINATOU Épse. SALI" },
    ],
    [
      "initials after a name",
      "operator_a",
      "UV_IN",
      "in",
      "You have received 5,000 XAF from MBARGA J.P. (237699112233). Your new balance is 12,500 XAF. Transaction ID: 1234567890",
      { counterparty_name: "MBARGA J.P.", amount: 5000, balance_after: 12500 },
    ],
    [
      "a capital DE inside a shop's name",
      "operator_b",
      "UV_IN",
      "in",
      "Vous avez recu 5000 FCFA de BOUTIQUE DE LA PAIX (237699112233). Solde: 10000 FCFA. ID: 123456789",
      { counterparty_name: "BOUTIQUE DE LA PAIX" },
    ],
    [
      "a capital AGENT inside a name",
      "operator_a",
      "UV_WITH",
      "out",
      "Vous avez retire 20000 FCFA chez MASTER AGENT BASSA (237699112233) le 2025-01-02 10:00:00. Frais: 200 FCFA. Solde: 1000 FCFA. ID de la transaction: 1234567890",
      { counterparty_name: "MASTER AGENT BASSA", fee: 200 },
    ],
    [
      "a capital TO inside a name",
      "operator_a",
      "UV_OUT",
      "out",
      "You have sent 5000 XAF to SHOP TO GO (237699112233). Fee: 100 XAF. Balance: 4000 XAF. Transaction ID: 1234567890",
      { counterparty_name: "SHOP TO GO" },
    ],
    [
      "digits glued inside a name",
      "operator_a",
      "UV_OUT",
      "out",
      "Paiement 5000F a ETS MEGA2000 SARL (237699112233) 2025-01-02 10:00:00 Frais:0F Solde:4000F ID:1234567890",
      { counterparty_name: "ETS MEGA2000 SARL", operator_ref: "1234567890" },
    ],
    [
      "a whole text in capitals",
      "operator_b",
      "UV_IN",
      "in",
      "VOUS AVEZ RECU 5000 FCFA DE PAUL ATEBA (237699112233). SOLDE: 10000 FCFA. ID: 123456789",
      { counterparty_name: "PAUL ATEBA" },
    ],
    [
      "amounts grouped by spaces, and decimals",
      "operator_b",
      "UV_IN",
      "in",
      "Vous avez recu 5 000 FCFA de Abdoulaye N'Diaye (237699112233). Votre solde est de 10 500.50 FCFA. ID de la transaction: MP240102.1234.A12345",
      { amount: 5000, balance_after: 10500, counterparty_name: "Abdoulaye N'Diaye" },
    ],
    [
      "amounts grouped by commas",
      "operator_a",
      "UV_IN",
      "in",
      "You have received 1,250,000 XAF from jean dupont (237699112233). Your new balance is 2,500,000 XAF. Transaction ID: 1234567890",
      { amount: 1250000, balance_after: 2500000, operator_ref: "1234567890" },
    ],
  ])("reads its example's %s", (_, operator, kind, direction, text, want) => {
    const p = proposeTemplate({ operator, text, kind, direction });
    expect(p.problems).toEqual([]);
    expect(p.reading).toMatchObject({ kind, direction, ...want });
  });

  it("never takes a number standing alone for part of a name", () => {
    const t = "Vous avez recu 5000 FCFA de ETS 2000 PLUS (237699112233). Solde: 10000 FCFA. ID: 123456789";
    const p = proposeTemplate({ operator: "operator_b", text: t, kind: "UV_IN", direction: "in" });
    expect(p.reading?.counterparty_name).not.toMatch(/\d/);
    expect(p.reading).toMatchObject({ amount: 5000, counterparty_msisdn: "237699112233" });
  });

  it("reads no value from a refusal, and a commission notice's commission as its amount", () => {
    const refusal = proposeTemplate({
      operator: "operator_b",
      text: "Votre transfert de 105 000 FCFA au 237699112233 a echoue. ID transaction CO240102.2208.B10750.",
      kind: "FAIL",
      direction: null,
    });
    expect(refusal.slots.filter((s) => s.slot !== "date" && s.slot !== "number")).toEqual([]);
    expect(refusal.reading).toMatchObject({ kind: "FAIL", amount: null, operator_ref: null });
    const commission = proposeTemplate({
      operator: "operator_a",
      text: "Vous avez recu une commission de 890 FCFA pour la transaction 1826906 le 2026-08-08 17:36:27. Votre nouveau solde: 507220 FCFA. ID: 183000008.",
      kind: "COM",
      direction: "in",
    });
    expect(commission.reading).toMatchObject({ kind: "COM", amount: 890, balance_after: 507220 });
  });

  it("reads nothing from a notice or an offer: its values are only {any}", () => {
    const t = "Profitez de 20.000F de bonus pour 5000F de recharge. Composez *123# avant le 30/09.";
    const p = proposeTemplate({ operator: "operator_a", text: t, kind: "MKT", direction: null });
    expect(p.slots.filter((s) => s.slot !== "date" && s.slot !== "number")).toEqual([]);
    expect(p.reading).toMatchObject({ kind: "MKT", amount: null, balance_after: null });
  });
});
