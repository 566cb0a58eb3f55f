import { describe, expect, it } from "vitest";
import { wordingDrift } from "./wording-drift.ts";

describe("an operator's wording changed: the share of unrecognised texts jumps", () => {
  it.each<[string, [number, number], [number, number], boolean]>([
    ["every text unrecognised on a SIM that read them all", [6, 6], [200, 4], true],
    ["half unrecognised against a usual tenth", [10, 5], [300, 30], true],
    ["the usual share of unrecognised notices", [10, 2], [300, 60], false],
    ["too few texts in the hour to say", [4, 4], [200, 0], false],
    ["a share that doubles but stays low", [20, 2], [300, 15], false],
    ["a new SIM whose texts are all unrecognised", [5, 5], [0, 0], true],
  ])("%s", (_case, [texts, unrecognised], [usualTexts, usualUnrecognised], jump) => {
    expect(wordingDrift({ texts, unrecognised }, { texts: usualTexts, unrecognised: usualUnrecognised }).jump).toBe(
      jump,
    );
  });
});
