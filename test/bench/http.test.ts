import { describe, expect, it } from "vitest";
import { goalOf, percentile, percentileRatioInterval, referenceOf } from "./http.ts";

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

describe("referenceOf", () => {
  it("is the empty database for an answer that is not a list, or whose page it fills as well", () => {
    expect(referenceOf([undefined, undefined, undefined])).toBe("empty");
    expect(referenceOf([50, 50, 50])).toBe("empty");
    expect(referenceOf([0, 0, 0])).toBe("empty");
  });

  it("is the small history for a page only it fills as the history does", () => {
    expect(referenceOf([0, 200, 200])).toBe("small");
    expect(referenceOf([51, 250, 250])).toBe("small");
  });

  it("is the empty database where no side holds the history's rows", () => {
    expect(referenceOf([0, 86, 99])).toBe("empty");
    expect(referenceOf([0, undefined, 100])).toBe("empty");
  });
});

describe("goalOf", () => {
  const path = (reference: "empty" | "small", ratio: number, toSmall: number, low: number) => ({
    reference,
    ratio,
    ratio_interval: [low, ratio + 0.5] as [number, number],
    ratio_to_small: toSmall,
    ratio_to_small_interval: [low, toSmall + 0.5] as [number, number],
    history_p50_ms: 10,
    empty_p50_ms: 5,
    small_p50_ms: 9,
  });

  it("judges each path against its reference's p95, and tells what the run cannot place", () => {
    const goal = goalOf({
      "a page of the small history": path("small", 3.0, 1.1, 0.9),
      "a page of both": path("empty", 1.2, 1.0, 0.9),
      "a slower path": path("empty", 1.8, 1.8, 1.6),
      "a doubtful path": path("small", 2.0, 1.6, 1.2),
    });
    expect(goal).toEqual({
      of: 4,
      within: 2,
      at_p50: 2,
      outside: ["a slower path (1.80)", "a doubtful path (1.60)"],
      above: ["a slower path"],
      undecided: ["a page of the small history", "a page of both", "a doubtful path"],
    });
  });

  it("judges every path against one side when asked", () => {
    const figures = {
      "a page of the small history": path("small", 3.0, 1.1, 0.9),
      "a slower path": path("empty", 1.8, 1.4, 1.6),
    };
    expect(goalOf(figures, "empty").outside).toEqual(["a page of the small history (3.00)", "a slower path (1.80)"]);
    expect(goalOf(figures, "small").outside).toEqual([]);
  });
});
