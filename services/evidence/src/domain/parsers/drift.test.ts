// The parser on realistic drift of every text of the labelled corpus (testdata/drift.ts: each
// kind of drift named). Prints, per kind of drift, the accuracy of the kind and of each field
// beside the accuracy on the same texts undrifted, so that what the drift alone costs is
// visible. Fails on a false confirmation, and when a figure falls below the floor measured
// (docs/decisions/evidence.md gives the figures and the goal of 95%).

import { describe, expect, it } from "vitest";
import { parseMessage } from "./parse.ts";
import { DRIFT_KINDS, drifted, loadTestdata, type DriftKind, type Labelled } from "./testdata/drift.ts";
import { otherDestination, wouldConfirm, wouldProveBalance } from "./testdata/replay.ts";

const CORPUS = loadTestdata("corpus.jsonl");

const SCORED = ["kind", "amount", "fee", "balance_after", "operator_ref", "counterparty_msisdn"] as const;
type Scored = (typeof SCORED)[number];

interface Score {
  texts: number;
  right: Record<Scored, number>;
}

function score(texts: readonly Labelled[]): Score {
  const s: Score = {
    texts: texts.length,
    right: Object.fromEntries(SCORED.map((f) => [f, 0])) as Record<Scored, number>,
  };
  for (const t of texts) {
    const p = parseMessage(t.operator, t.text);
    for (const f of SCORED) if ((f === "kind" ? t.kind : t.expected[f]) === p[f]) s.right[f] += 1;
  }
  return s;
}

const pct = (n: number, of: number) => (of === 0 ? 100 : Math.floor((1000 * n) / of) / 10);
const line = (name: string, s: Score) =>
  `${name.padEnd(22)} ${String(s.texts).padStart(4)}  ${SCORED.map((f) => `${f} ${pct(s.right[f], s.texts)}%`).join(", ")}`;

/**
 * The figures measured on every drifted variant together (%, rounded down), held so the
 * parser never gets worse; the goal is 95% for the kind and each field.
 */
const DRIFT_FLOOR: Record<Scored, number> = {
  // 98.1 since the drifts of issue 40 (a promotion glued after a balance, doubled spaces in a
  // notice, a balance reply's items in another order): doubled spaces cost nothing, but count
  // the held-out notices read wrong undrifted a second time.
  kind: 98.1,
  // 99.9 since new_numbers rewrites numbers grouped by a no-break space ("250 000 FCFA"): it
  // used to change the labels and leave the text as it was.
  amount: 99.9,
  fee: 99.4,
  balance_after: 99.7,
  operator_ref: 99.3,
  counterparty_msisdn: 99.4,
};

const PARTS = [
  ["development", "dev"],
  ["held-out", "heldout"],
  ["fresh", "fresh"],
  ["constructed", "constructed"],
] as const;

describe("the parser on drifted texts", () => {
  const variants = drifted(CORPUS);

  it("drifts every text of the corpus in each named way", () => {
    // A balance reply's items are drifted on the few balance replies of the corpus.
    const fewest: Partial<Record<DriftKind, number>> = { balance_order: 3 };
    for (const drift of DRIFT_KINDS)
      expect(variants.filter((v) => v.drift === drift).length).toBeGreaterThanOrEqual(fewest[drift] ?? 21);
  });

  it("prints accuracy per kind of drift and per field, and holds the floor", () => {
    const lines = ["drift                  texts  (undrifted: the same texts before the drift)"];
    for (const drift of DRIFT_KINDS) {
      const these = variants.filter((v) => v.drift === drift);
      const originals = these.map((v) => CORPUS.find((t) => `${t.id}~${drift}` === v.text.id)!);
      lines.push(line(drift, score(these.map((v) => v.text))), line("  undrifted", score(originals)));
    }
    lines.push(line("all drifted", score(variants.map((v) => v.text))));
    for (const [name, split] of PARTS) {
      const these = variants.filter((v) => v.text.split === split);
      lines.push(line(`${name} drifted`, score(these.map((v) => v.text))));
    }
    // The floor was measured on the parts rules were written with or held out from; the texts
    // collected after the rules (fresh) are printed, not floored.
    const notFresh = variants.filter((v) => v.text.split !== "fresh");
    const floored = score(notFresh.map((v) => v.text));
    lines.push(
      line("floored (not fresh)", floored),
      "per drift, fresh left out (the goal: 95% for each), and what the drift costs: points lost against the same texts undrifted",
    );
    const below95: [DriftKind, Scored, number][] = [];
    for (const drift of DRIFT_KINDS) {
      const these = notFresh.filter((v) => v.drift === drift);
      const after = score(these.map((v) => v.text));
      const before = score(these.map((v) => CORPUS.find((t) => `${t.id}~${drift}` === v.text.id)!));
      const cost = SCORED.map(
        (f) => [f, pct(before.right[f], these.length) - pct(after.right[f], these.length)] as const,
      )
        .filter(([, c]) => c > 0)
        .map(([f, c]) => `${f} ${c.toFixed(1)}`);
      lines.push(`${line(`  ${drift}`, after)}  cost: ${cost.length > 0 ? cost.join(", ") : "none"}`);
      // The goal, per kind of drift and field: 95%, or (where the texts themselves are read
      // below it before any drift: held-out notices no rule reads) a drift that costs nothing.
      for (const f of SCORED)
        if (pct(after.right[f], these.length) < 95) below95.push([drift, f, after.right[f] - before.right[f]]);
    }
    console.log(lines.join("\n"));
    for (const f of SCORED) expect(pct(floored.right[f], floored.texts)).toBeGreaterThanOrEqual(DRIFT_FLOOR[f]);
    expect(below95.filter(([, , lost]) => lost < 0)).toEqual([]);
  });

  it("never confirms what a drifted text does not prove", () => {
    const wrong: string[] = [];
    for (const { drift, text: t } of variants) {
      const p = parseMessage(t.operator, t.text);
      const named = t.expected.counterparty_msisdn;
      if (t.kind !== "DEP" && wouldConfirm(p, otherDestination(null)))
        wrong.push(`${t.id}: a ${String(t.kind)} confirms`);
      if (t.kind !== "BAL" && wouldProveBalance(p)) wrong.push(`${t.id}: a ${String(t.kind)} proves a balance check`);
      if (typeof named === "string" && wouldConfirm(p, otherDestination(named)))
        wrong.push(`${t.id} (${drift as DriftKind}): confirms an operation to another number than ${named}`);
    }
    expect(wrong).toEqual([]);
  });
});
