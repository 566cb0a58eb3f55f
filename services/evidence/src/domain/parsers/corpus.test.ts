// The parser measured on real operator texts (testdata/corpus.jsonl: each with its public
// source, kind and fields labelled by hand). Its `heldout` part (the texts whose SHA-256 starts
// with a byte divisible by 3, about a third, decided before any rule was written for them) is
// never used to write rules; the test prints kind and field accuracy on it and on the
// development part, and holds the measured level (docs/decisions/evidence.md). Real texts
// collected after the rules were written are split `fresh`, whatever their hash: all held out,
// they measure how the rules generalise to texts nobody had seen. Texts written
// from a known wording family for kinds no public text was found for are split `constructed`:
// measured and printed apart, never counted as held-out. The test also replays every text of
// the corpus and of the shared samples as if an operation of the same amount and destination
// were active: only a DEP may reach dispatch for a transfer, only a BAL for a balance check.

import { describe, expect, it } from "vitest";
import { routeOf } from "../outcomes.ts";
import { canConfirm, parseAsUnrecognised, parseMessage, parseWithoutWordings } from "./parse.ts";
import { heldoutByHash, loadTestdata, type Labelled } from "./testdata/drift.ts";
import { otherDestination, wouldConfirm, wouldProveBalance } from "./testdata/replay.ts";
import { FIELD_NAMES, MESSAGE_KINDS } from "./types.ts";

/**
 * Fields measured: the six the issue names, and the direction its wording gives. The commission
 * credited inside a receipt is read by one wording only and tested through the chain.
 */
const MEASURED = [...FIELD_NAMES.filter((f) => f !== "commission"), "direction"] as const;
type Measured = (typeof MEASURED)[number];

const CORPUS = loadTestdata("corpus.jsonl");
const SAMPLES = loadTestdata("samples.jsonl");

interface Accuracy {
  texts: number;
  kind: number;
  fields: Record<Measured, number>;
  misses: string[];
}

function measure(texts: readonly Labelled[]): Accuracy {
  const acc: Accuracy = {
    texts: texts.length,
    kind: 0,
    fields: Object.fromEntries(MEASURED.map((f) => [f, 0])) as Record<Measured, number>,
    misses: [],
  };
  for (const t of texts) {
    const p = parseMessage(t.operator, t.text);
    if (p.kind === t.kind) acc.kind += 1;
    else acc.misses.push(`${t.id} kind ${String(p.kind)} (expected ${String(t.kind)})`);
    for (const f of MEASURED) {
      if (p[f] === t.expected[f]) acc.fields[f] += 1;
      else acc.misses.push(`${t.id} ${f} ${JSON.stringify(p[f])} (expected ${JSON.stringify(t.expected[f])})`);
    }
  }
  return acc;
}

const pct = (n: number, of: number) => (of === 0 ? 100 : Math.round((1000 * n) / of) / 10);

function report(name: string, a: Accuracy): string {
  const fields = MEASURED.map((f) => `${f} ${pct(a.fields[f], a.texts)}%`).join(", ");
  return `${name}: ${a.texts} texts; kind ${pct(a.kind, a.texts)}%; ${fields}`;
}

/**
 * The level measured on the held-out part once the rules for the enlarged corpus were written
 * (kind and each field, %). The goal is 95% for each; kind is not there yet: this floor
 * keeps the parser from getting worse; raise it as rules improve. A round that adds texts
 * changes the held-out part itself: the floor is then the new part's measured level
 * (docs/benchmarks.md, "Parser accuracy by corpus round", gives each round's figures).
 */
const HELDOUT_FLOOR: Record<"kind" | Measured, number> = {
  kind: 84.9,
  amount: 100,
  fee: 98,
  balance_after: 100,
  operator_ref: 98,
  counterparty_msisdn: 98,
  counterparty_name: 94.1,
  direction: 94.1,
};

/** The level measured on the fresh part when it was collected (after the fixes it showed). */
const FRESH_FLOOR: Record<"kind" | Measured, number> = {
  kind: 78.6,
  amount: 100,
  fee: 100,
  balance_after: 100,
  operator_ref: 100,
  counterparty_msisdn: 100,
  counterparty_name: 64.2,
  direction: 71.4,
};

const kindName = (k: string | null) => k ?? "no kind";

/** Texts per country and operator, with the kinds they hold and the part each is in. */
function countsTable(texts: readonly Labelled[]): string[] {
  const groups = new Map<string, Labelled[]>();
  for (const t of texts) {
    const key = `${t.country ?? "?"} ${t.operator}`;
    groups.set(key, [...(groups.get(key) ?? []), t]);
  }
  const count = (ts: readonly Labelled[], of: (t: Labelled) => string) => {
    const n = new Map<string, number>();
    for (const t of ts) n.set(of(t), (n.get(of(t)) ?? 0) + 1);
    return [...n.entries()]
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, v]) => `${k} ${v}`)
      .join(", ");
  };
  return [...groups.entries()]
    .sort(([, a], [, b]) => b.length - a.length)
    .map(
      ([key, ts]) =>
        `${key.padEnd(14)} ${String(ts.length).padStart(3)}  [${count(ts, (t) => t.split ?? "samples")}]  ${count(ts, (t) => kindName(t.kind))}`,
    );
}

/** Texts per kind (rows) and country (columns), with the totals. */
function kindByCountry(texts: readonly Labelled[]): string[] {
  const countries = [...new Set(texts.map((t) => t.country ?? "?"))].sort();
  const kinds = [...new Set(texts.map((t) => kindName(t.kind)))].sort();
  const cell = (v: string | number) => String(v).padStart(4);
  const row = (name: string, of: (c: string) => number, total: number) =>
    `${name.padEnd(15)}${countries.map((c) => cell(of(c))).join("")}${cell(total)}`;
  return [
    `${"".padEnd(15)}${countries.map(cell).join("")}${cell("all")}`,
    ...kinds.map((k) => {
      const these = texts.filter((t) => kindName(t.kind) === k);
      return row(k, (c) => these.filter((t) => (t.country ?? "?") === c).length, these.length);
    }),
    row("all", (c) => texts.filter((t) => (t.country ?? "?") === c).length, texts.length),
  ];
}

/** Kind accuracy per labelled kind (figures only). */
function perKind(texts: readonly Labelled[]): string {
  const kinds = [...new Set(texts.map((t) => kindName(t.kind)))].sort();
  return kinds
    .map((k) => {
      const these = texts.filter((t) => kindName(t.kind) === k);
      const right = these.filter((t) => parseMessage(t.operator, t.text).kind === t.kind).length;
      return `${k} ${right}/${these.length}`;
    })
    .join(", ");
}

describe("parser accuracy on the labelled corpus", () => {
  const heldout = CORPUS.filter((t) => t.split === "heldout");
  const dev = CORPUS.filter((t) => t.split === "dev");
  const constructed = CORPUS.filter((t) => t.split === "constructed");
  const fresh = CORPUS.filter((t) => t.split === "fresh");

  it("has a held-out part chosen by hash, every real text with its source, constructed texts named as such", () => {
    expect(heldout.length).toBeGreaterThanOrEqual(51);
    expect(dev.length + heldout.length).toBeGreaterThanOrEqual(201);
    expect(fresh.length).toBeGreaterThanOrEqual(14);
    for (const t of [...dev, ...heldout])
      if (t.collected !== "with-rules") expect(t.split === "heldout").toBe(heldoutByHash(t.text));
    for (const t of CORPUS.filter((c) => c.collected === "with-rules")) expect(t.split).toBe("dev");
    for (const t of [...dev, ...heldout, ...fresh]) {
      // A repository, a public page that quotes the operator's SMS word for word ("page: <url> (…)"),
      // or a fleet's export of what it taught ("fleet: <deployment> …", testdata/add-taught.ts).
      expect(t.source).toMatch(/^(?:github|page: https?:\/\/\S+ \(.+\)|fleet: \S+ )/);
      expect(t.country).toMatch(/^[A-Z]{2}$/);
    }
    for (const t of constructed) expect(t.source).toMatch(/^constructed: /);
    expect(new Set(CORPUS.map((t) => t.id)).size).toBe(CORPUS.length);
  });

  it("has a labelled text for every kind of the contract (real or constructed)", () => {
    const kinds = new Set(CORPUS.map((t) => t.kind));
    for (const kind of MESSAGE_KINDS.filter((k) => k !== "TPL" && k !== "FAIL")) expect(kinds).toContain(kind);
  });

  it("prints kind and field accuracy on the held-out part and holds the measured level", () => {
    const h = measure(heldout);
    const d = measure(dev);
    const c = measure(constructed);
    const f = measure(fresh);
    // Only the figures of the held-out and fresh parts are printed, never their texts: rules
    // are written from the development part's misses. Constructed texts are printed apart.
    console.log(
      [
        "texts by country and operator [part] kinds:",
        ...countsTable([...CORPUS, ...SAMPLES.map((t) => ({ ...t, split: undefined }))]),
        "real texts (corpus and samples) by kind and country:",
        ...kindByCountry([...CORPUS.filter((t) => t.split !== "constructed"), ...SAMPLES]),
        "constructed texts by kind and country:",
        ...kindByCountry(constructed),
        report("held-out", h),
        report("fresh (collected after the rules)", f),
        report("held-out and fresh", measure([...heldout, ...fresh])),
        report("development", d),
        report("constructed (not real texts; not held-out)", c),
        `kind per labelled kind, held-out: ${perKind(heldout)}`,
        `kind per labelled kind, fresh: ${perKind(fresh)}`,
        `kind per labelled kind, development: ${perKind(dev)}`,
        "development misses:",
        ...d.misses,
        "constructed misses:",
        ...c.misses,
      ].join("\n  "),
    );
    expect(pct(h.kind, h.texts)).toBeGreaterThanOrEqual(HELDOUT_FLOOR.kind);
    for (const m of MEASURED) expect(pct(h.fields[m], h.texts)).toBeGreaterThanOrEqual(HELDOUT_FLOOR[m]);
    expect(pct(f.kind, f.texts)).toBeGreaterThanOrEqual(FRESH_FLOOR.kind);
    for (const m of MEASURED) expect(pct(f.fields[m], f.texts)).toBeGreaterThanOrEqual(FRESH_FLOOR[m]);
    // The rules for kinds without a public text must read their own constructed texts exactly.
    expect(c.misses).toEqual([]);
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

describe("kinds from cues alone, as for a wording no rule knows", () => {
  it("prints how the cues fare on every real text, and never give a confirming kind a text is not", () => {
    const real = [...SAMPLES, ...CORPUS.filter((t) => t.split !== "constructed")];
    const isReceipt = (t: Labelled) => t.kind !== null && !["MKT", "ADMIN", "TPL", "FAIL"].includes(t.kind);
    const cues = (texts: readonly Labelled[]) => {
      const receipts = texts.filter(isReceipt);
      const right = receipts.filter((t) => parseWithoutWordings(t.operator, t.text).kind === t.kind).length;
      const unknown = receipts.filter((t) => parseWithoutWordings(t.operator, t.text).kind === null).length;
      return { receipts: receipts.length, right, unknown, wrong: receipts.length - right - unknown };
    };
    const known = cues(real.filter((t) => t.split !== "fresh"));
    const late = cues(real.filter((t) => t.split === "fresh"));
    for (const [name, c] of [
      ["real receipts the cues were written with (samples, development, held-out)", known],
      ["fresh receipts", late],
    ] as const)
      console.log(
        `cues alone on ${c.receipts} ${name} (no wording rule): kind right ${c.right} ` +
          `(${pct(c.right, c.receipts)}%), left kind null ${c.unknown}, wrong ${c.wrong}`,
      );
    for (const t of real) {
      const p = parseWithoutWordings(t.operator, t.text);
      if (p.kind === "DEP" || p.kind === "BAL") expect([t.id, p.kind]).toEqual([t.id, t.kind]);
    }
    // The level measured when the cues were written (%): held so they never get worse.
    expect(pct(known.right, known.receipts)).toBeGreaterThanOrEqual(76.5);
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
    // A text that names a number never confirms an operation sent to another one.
    const named = t.expected.counterparty_msisdn;
    if (typeof named === "string") expect(wouldConfirm(p, otherDestination(named))).toBe(false);
    if (t.kind !== "DEP") expect(wouldConfirm(p, otherDestination(null))).toBe(false);
    // Only a balance reply proves a balance check.
    if (t.kind !== "BAL") expect(wouldProveBalance(p)).toBe(false);
  });
});
