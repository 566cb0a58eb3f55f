import { describe, expect, it } from "vitest";
import { amountFigures, type AmountCount } from "./amount-counts.ts";

// The median and the largest from counts per amount, against percentile_cont computed from the
// values themselves: the counts given are those the store reads (the buckets of the two middle
// ranks and the highest bucket), here with buckets 1,000 FCFA wide.

const bucketOf = (v: number) => Math.floor(v / 1000);

/** percentile_cont(p) of the values, as PostgreSQL computes it. */
function percentileCont(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  const pos = p * (sorted.length - 1);
  const lo = Math.floor(pos);
  const hi = Math.ceil(pos);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

/** What the store returns for these values: the needed buckets' amounts, ascending. */
function countsOf(values: number[], p: number): AmountCount[] {
  const sorted = [...values].sort((a, b) => a - b);
  const total = sorted.length;
  const pos = p * (total - 1);
  const needed = new Set([Math.floor(pos), Math.ceil(pos)].map((r) => bucketOf(sorted[r])));
  needed.add(bucketOf(sorted.at(-1)!));
  const out: AmountCount[] = [];
  for (const v of sorted) {
    const bucket = bucketOf(v);
    if (!needed.has(bucket)) continue;
    const last = out.at(-1);
    if (last?.montant === v) last.n++;
    else out.push({ bucket, below: sorted.filter((x) => bucketOf(x) < bucket).length, total, montant: v, n: 1 });
  }
  return out;
}

describe("amountFigures", () => {
  it.each([
    ["one transfer", [5000]],
    ["an odd count in one bucket", [1500, 1500, 1600]],
    ["an even count: the mean of the middle two", [8000, 20000]],
    ["the middle two in two buckets", [1000, 1000, 9000, 9500, 12000, 12000]],
    ["the middle two of one amount", [500, 3000, 3000, 70000]],
    ["the middle rank at a bucket's first amount", [100, 200, 2000, 2100, 2200]],
    ["the largest alone in the highest bucket", [1000, 1000, 1000, 1000, 2_000_000]],
    ["every transfer of one amount", [25000, 25000, 25000, 25000]],
  ])("%s: percentile_cont's median and the largest", (_, values) => {
    expect(amountFigures(countsOf(values, 0.5), 0.5)).toEqual({
      percentile: percentileCont(values, 0.5),
      largest: Math.max(...values),
    });
  });

  it("gives any percentile exactly over many amounts", () => {
    let seed = 11;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    for (let round = 0; round < 200; round++) {
      const values = Array.from({ length: 1 + Math.floor(next() * 60) }, () => 500 * (1 + Math.floor(next() * 40)));
      for (const p of [0.1, 0.5, 0.9]) {
        expect(amountFigures(countsOf(values, p), p)!.percentile).toBeCloseTo(percentileCont(values, p), 9);
      }
    }
  });

  it("has nothing to say of a window without transfers", () => {
    expect(amountFigures([], 0.5)).toBeUndefined();
  });
});
