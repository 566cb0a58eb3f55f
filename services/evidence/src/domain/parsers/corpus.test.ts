// The parser measured on real operator texts (testdata/corpus.jsonl: each with its public
// source, kind and fields labelled by hand). Its `heldout` part (a third of the texts, chosen
// by the SHA-256 of the text before any rule was written for them) is never used to write
// rules; the test prints kind and field accuracy on it and on the development part, and
// holds the measured level (docs/decisions/evidence.md). It also replays every text of the
// corpus and of the shared samples as if an operation of the same amount and destination
// were active: only a DEP may reach dispatch for a transfer, only a BAL for a balance check.

import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { routeOf } from "../outcomes.ts";
import { canConfirm, parseAsUnrecognised, parseMessage } from "./parse.ts";
import { FIELD_NAMES, type FieldName, type MessageKind, type Operator } from "./types.ts";

interface Labelled {
  id: string;
  operator: Operator;
  kind: MessageKind | null;
  text: string;
  expected: Record<FieldName, string | number | null>;
  split?: "dev" | "heldout";
}

const load = (file: string): Labelled[] =>
  readFileSync(new URL(`./testdata/${file}`, import.meta.url), "utf8")
    .split("\n")
    .filter((line) => line.trim() !== "")
    .map((line) => JSON.parse(line) as Labelled);

const CORPUS = load("corpus.jsonl");
const SAMPLES = load("samples.jsonl");

interface Accuracy {
  texts: number;
  kind: number;
  fields: Record<FieldName, number>;
  misses: string[];
}

function measure(texts: readonly Labelled[]): Accuracy {
  const acc: Accuracy = {
    texts: texts.length,
    kind: 0,
    fields: Object.fromEntries(FIELD_NAMES.map((f) => [f, 0])) as Record<FieldName, number>,
    misses: [],
  };
  for (const t of texts) {
    const p = parseMessage(t.operator, t.text);
    if (p.kind === t.kind) acc.kind += 1;
    else acc.misses.push(`${t.id} kind ${String(p.kind)} (expected ${String(t.kind)})`);
    for (const f of FIELD_NAMES) {
      if (p[f] === t.expected[f]) acc.fields[f] += 1;
      else acc.misses.push(`${t.id} ${f} ${JSON.stringify(p[f])} (expected ${JSON.stringify(t.expected[f])})`);
    }
  }
  return acc;
}

const pct = (n: number, of: number) => (of === 0 ? 100 : Math.round((1000 * n) / of) / 10);

function report(name: string, a: Accuracy): string {
  const fields = FIELD_NAMES.map((f) => `${f} ${pct(a.fields[f], a.texts)}%`).join(", ");
  return `${name}: ${a.texts} texts; kind ${pct(a.kind, a.texts)}%; ${fields}`;
}

/**
 * The level measured on the held-out part when it was set aside, before any rule was written
 * from the corpus (kind and each field, %). The goal is 95% for each, not reached yet:
 * this floor keeps the parser from getting worse; raise it as rules improve.
 */
const HELDOUT_FLOOR: Record<"kind" | FieldName, number> = {
  kind: 83.3,
  amount: 83.3,
  fee: 91.7,
  balance_after: 91.7,
  operator_ref: 83.3,
  counterparty_msisdn: 83.3,
  counterparty_name: 83.3,
};

describe("parser accuracy on the labelled corpus", () => {
  const heldout = CORPUS.filter((t) => t.split === "heldout");
  const dev = CORPUS.filter((t) => t.split === "dev");

  it("has a held-out part and a development part, every text with its source", () => {
    expect(heldout.length).toBeGreaterThanOrEqual(10);
    expect(dev.length).toBeGreaterThanOrEqual(10);
    for (const t of CORPUS) expect((t as unknown as { source: string }).source).toMatch(/^github/);
  });

  it("prints kind and field accuracy on the held-out part and holds the measured level", () => {
    const h = measure(heldout);
    const d = measure(dev);
    // Only the figures of the held-out part are printed, never its texts: rules are written
    // from the development part's misses.
    console.log([report("held-out", h), report("development", d), "development misses:", ...d.misses].join("\n  "));
    expect(pct(h.kind, h.texts)).toBeGreaterThanOrEqual(HELDOUT_FLOOR.kind);
    for (const f of FIELD_NAMES) expect(pct(h.fields[f], h.texts)).toBeGreaterThanOrEqual(HELDOUT_FLOOR[f]);
  });
});

describe("may a text no rule recognises confirm automatically?", () => {
  it("measures the risk on the corpus read as if no wording were known: no, it may not", () => {
    const all = [...SAMPLES, ...CORPUS];
    const amounts = all.filter((t) => parseAsUnrecognised(t.operator, t.text).amount !== null);
    const deposits = amounts.filter((t) => t.kind === "DEP");
    const others = amounts.length - deposits.length;
    console.log(
      `read as unrecognised, ${amounts.length} of ${all.length} texts show a labelled amount: ${deposits.length} ` +
        `deposits and ${others} other texts (transfers, payments, withdrawals...) that auto-confirming would let prove a transfer`,
    );
    // The decision rests on this: most texts with a readable amount are not deposits.
    expect(others).toBeGreaterThan(deposits.length);
    expect(routeOf(null, true, "unrecognised")).toBe("orphan");
  });
});

describe("zero false confirmations: every text replayed against an active operation of its amount", () => {
  it.each([...SAMPLES, ...CORPUS].map((t) => [t.id, t] as const))("%s", (_id, t) => {
    const p = parseMessage(t.operator, t.text);
    const route = routeOf(p.kind, true, p.rule);
    // Only a DEP goes to dispatch to prove a transfer; only a BAL to prove a balance check
    // (dispatch matches a BAL against balance checks only). Everything else is kept, never matched.
    expect(route === "correlate").toBe(p.kind === "DEP" || p.kind === "BAL");
    expect(canConfirm(p.kind)).toBe(p.kind === "DEP");
    // The same words from a sender that is not the operator's never reach dispatch.
    expect(routeOf(p.kind, true, p.rule, false)).toBe("unknown_sender");
    // A text the corpus labels as something else than a deposit never confirms a transfer.
    if (t.kind !== "DEP") expect(canConfirm(p.kind)).toBe(false);
  });
});
