import { describe, expect, it } from "vitest";
import { delayPercentile, type DelayBucket } from "./delay-histogram.ts";

/** Whole-second buckets of `delays` (below the fine limit), as delay_seconds sums them. */
const secondBuckets = (delays: number[]): DelayBucket[] => {
  const m = new Map<number, DelayBucket>();
  for (const v of delays) {
    const k = Math.floor(v);
    const b = m.get(k) ?? { bucket: k, n: 0, sum_s: 0 };
    b.n += 1;
    b.sum_s += v;
    m.set(k, b);
  }
  return [...m.values()].sort((a, b) => a.bucket - b.bucket);
};

describe("delayPercentile (percentile_cont from summed buckets)", () => {
  it.each([
    ["odd count, median and p90 interpolated", [10, 30, 90], 0.5, 30],
    ["odd count, p90 between 30 and 90", [10, 30, 90], 0.9, 78],
    ["even count, median averages the middle two", [30, 90], 0.5, 60],
    ["even count, p90", [30, 90], 0.9, 84],
    ["one delay", [42], 0.9, 42],
    ["many delays in one bucket", [40, 40, 40, 40, 41], 0.5, 40],
  ])("is exact when each bucket holds one value: %s", (_, delays, p, expected) => {
    expect(delayPercentile(secondBuckets(delays), p)).toBe(expected);
  });

  it("is undefined without delays", () => {
    expect(delayPercentile([], 0.5)).toBeUndefined();
  });

  it("is within a second of percentile_cont on fractional delays (a known skewed distribution)", () => {
    // 20,000 delays, most of them 5 to 60 s, a tail to 10 minutes: deterministic (an LCG).
    let seed = 41;
    const next = () => (seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31;
    const delays = Array.from({ length: 20_000 }, () => {
      const u = next();
      return u < 0.9 ? 5 + 55 * next() : 60 + 539 * next();
    });
    const sorted = [...delays].sort((a, b) => a - b);
    const exact = (p: number) => {
      const pos = p * (sorted.length - 1);
      const r = Math.floor(pos);
      return sorted[r]! + (pos - r) * (sorted[Math.min(r + 1, sorted.length - 1)]! - sorted[r]!);
    };
    for (const p of [0.1, 0.5, 0.9, 0.99]) {
      const got = delayPercentile(secondBuckets(delays), p)!;
      expect(Math.abs(got - exact(p))).toBeLessThan(1);
    }
  });
});
