import { describe, expect, it } from "vitest";
import { percentile, percentileRatioInterval } from "./http.ts";

/** Call durations as a run gives them: a body around `median` ms and one call in fifty slow. */
function durations(n: number, median: number, seed: number): number[] {
  let x = seed;
  const next = () => {
    x = (x * 1103515245 + 12345) % 2147483648;
    return x / 2147483648;
  };
  return Array.from({ length: n }, () => (next() < 0.02 ? median * (2 + 4 * next()) : median * (0.8 + 0.4 * next())));
}

describe("percentileRatioInterval", () => {
  it("holds 1 when both samples come from the same distribution", () => {
    const [lo, hi] = percentileRatioInterval(durations(200, 5, 1), durations(200, 5, 2), 95);
    expect(lo).toBeLessThan(1);
    expect(hi).toBeGreaterThan(1);
  });

  it("lies above 1.5 when one sample is twice as slow", () => {
    const [lo, hi] = percentileRatioInterval(durations(200, 10, 3), durations(200, 5, 4), 95);
    expect(lo).toBeGreaterThan(1.5);
    expect(hi).toBeLessThan(4);
  });

  it("holds the ratio of the samples' own p95", () => {
    const a = durations(200, 7, 5);
    const b = durations(200, 5, 6);
    const p95 = (xs: number[]) =>
      percentile(
        [...xs].sort((x, y) => x - y),
        95,
      );
    const [lo, hi] = percentileRatioInterval(a, b, 95);
    expect(lo).toBeLessThanOrEqual(p95(a) / p95(b));
    expect(hi).toBeGreaterThanOrEqual(p95(a) / p95(b));
  });

  it("is the same for the same samples and seed", () => {
    const a = durations(100, 6, 7);
    const b = durations(100, 5, 8);
    expect(percentileRatioInterval(a, b, 95)).toEqual(percentileRatioInterval(a, b, 95));
  });

  it("is undefined on an empty sample", () => {
    expect(percentileRatioInterval([], [1, 2], 95)).toEqual([NaN, NaN]);
  });
});
