import { describe, expect, it } from "vitest";
import { checkName, nameWords, namesMatch, type NameCheck } from "./name-check.ts";

describe("checkName", () => {
  it.each<[string, string | null, string | null, NameCheck]>([
    ["matches identical names", "JEAN DUPONT", "JEAN DUPONT", { match: true }],
    ["ignores case", "Jean Dupont", "JEAN DUPONT", { match: true }],
    ["ignores diacritics", "Hélène Ébodé", "HELENE EBODE", { match: true }],
    ["ignores word order", "DUPONT JEAN", "Jean Dupont", { match: true }],
    [
      "accepts a shorter screen name whose words are all in the expected name",
      "Jean Pierre Dupont",
      "JEAN DUPONT",
      { match: true },
    ],
    ["accepts a shorter expected name whose words are all on screen", "Dupont", "JEAN DUPONT", { match: true }],
    ["splits on hyphens and apostrophes", "Jean-Pierre N'Goa", "JEAN PIERRE N GOA", { match: true }],
    ["ignores repeated words and extra spaces", "  ngo   ngo  BIYA ", "NGO BIYA", { match: true }],
    ["spells out the Œ ligature", "Cœur Mbarga", "COEUR MBARGA", { match: true }],
    [
      "refuses when a word of the shorter name is absent from the longer",
      "Jean Dupont",
      "JEAN DURAND",
      { match: false, reason: "words_missing", missing: ["DUPONT"] },
    ],
    [
      "refuses a shorter name that is only partly inside the longer",
      "Paul Biya",
      "PAUL BIYAS MBARGA",
      { match: false, reason: "words_missing", missing: ["BIYA"] },
    ],
    [
      "refuses names of equal length that differ, reporting the expected words not on screen",
      "Alice Mvondo",
      "ALICE ONANA",
      { match: false, reason: "words_missing", missing: ["MVONDO"] },
    ],
    [
      "refuses an unreadable screen name",
      "Jean Dupont",
      null,
      { match: false, reason: "screen_unreadable", missing: [] },
    ],
    ["refuses an empty screen name", "Jean Dupont", "   ", { match: false, reason: "screen_unreadable", missing: [] }],
    [
      "refuses a screen of punctuation only",
      "Jean Dupont",
      "***",
      { match: false, reason: "screen_unreadable", missing: [] },
    ],
    [
      "refuses when there is no expected name to compare",
      "",
      "JEAN DUPONT",
      { match: false, reason: "expected_missing", missing: [] },
    ],
  ])("%s", (_rule, expected, onScreen, result) => {
    expect(checkName(expected, onScreen)).toEqual(result);
  });

  it("agrees with namesMatch", () => {
    expect([namesMatch("Jean Dupont", "JEAN DUPONT"), namesMatch("Jean Dupont", "PAUL")]).toEqual([true, false]);
  });
});

describe("nameWords", () => {
  it("uppercases, strips diacritics and splits on anything not a letter or digit", () => {
    expect([...nameWords("Ngo'o Ébéné-Éyenga  2")]).toEqual(["NGO", "O", "EBENE", "EYENGA", "2"]);
  });
});
