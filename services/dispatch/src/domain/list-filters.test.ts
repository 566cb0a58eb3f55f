import { describe, expect, it } from "vitest";
import {
  checkNote,
  clampLimit,
  parseDayWindow,
  parseOperationListQuery,
  type OperationListQuery,
} from "./list-filters.ts";

const NOW = new Date("2026-11-22T12:00:00Z"); // 13:00 local
const q = (o: Partial<OperationListQuery> = {}): OperationListQuery => ({
  status: "",
  sim_id: "",
  date: "",
  date_from: "",
  date_to: "",
  search: "",
  limit: 0,
  ...o,
});
const parsed = (o: Partial<OperationListQuery>) => {
  const r = parseOperationListQuery(q(o));
  return r.ok ? r.value : [r.error.code, r.error.detail];
};

describe("operations list filters", () => {
  it("takes nothing as the whole scope, 50 rows", () => {
    expect(parsed({})).toEqual({
      status: null,
      sim_id: null,
      from: null,
      to: null,
      search_text: null,
      search_digits: null,
      limit: 50,
    });
  });

  it.each<[string, Partial<OperationListQuery>, unknown]>([
    [
      "refuses an unknown status",
      { status: "done" },
      ["invalid_request", expect.stringContaining("status must be one of")],
    ],
    [
      "accepts each of the eight statuses",
      { status: "no_evidence" },
      expect.objectContaining({ status: "no_evidence" }),
    ],
    [
      "reads date as one local day, UTC+1 midnight to midnight",
      { date: "2026-11-22" },
      expect.objectContaining({ from: new Date("2026-11-21T23:00:00Z"), to: new Date("2026-11-22T23:00:00Z") }),
    ],
    ["refuses a malformed date", { date: "22/11/2026" }, ["invalid_request", expect.stringContaining("date must be")]],
    [
      "refuses an impossible date",
      { date: "2026-02-30" },
      ["invalid_request", expect.stringContaining("date must be")],
    ],
    [
      "lets date win over date_from and date_to",
      { date: "2026-11-22", date_from: "2026-01-01", date_to: "2025-01-01" },
      expect.objectContaining({ from: new Date("2026-11-21T23:00:00Z") }),
    ],
    [
      "takes date_from and date_to inclusive",
      { date_from: "2026-11-01", date_to: "2026-11-02" },
      expect.objectContaining({ from: new Date("2026-10-31T23:00:00Z"), to: new Date("2026-11-02T23:00:00Z") }),
    ],
    [
      "refuses date_from after date_to",
      { date_from: "2026-11-03", date_to: "2026-11-02" },
      ["invalid_request", "date_from (2026-11-03) is after date_to (2026-11-02)"],
    ],
    [
      "searches text case-insensitively and the number on digits alone",
      { search: " Jean 690-12 " },
      expect.objectContaining({ search_text: "jean 690-12", search_digits: "69012" }),
    ],
    [
      "searches text only when the search holds no digit",
      { search: "Ngo" },
      expect.objectContaining({ search_text: "ngo", search_digits: null }),
    ],
    ["clamps the limit to 250", { limit: 999 }, expect.objectContaining({ limit: 250 })],
  ])("%s", (_rule, query, expected) => {
    expect(parsed(query)).toEqual(expected);
  });

  it("sends a validation refusal as the contract's list of problems", () => {
    const r = parseOperationListQuery(q({ status: "done" }));
    expect(r.ok ? null : r.error.violations).toEqual([
      { field: "status", message: expect.stringContaining("status must be one of") },
    ]);
  });
});

describe("queue days window", () => {
  const w = (o: Partial<{ days: number; from: string; to: string; all: boolean }>) => {
    const r = parseDayWindow({ days: 0, from: "", to: "", all: false, ...o }, NOW);
    return r.ok ? r.value : [r.error.code, r.error.detail];
  };

  it.each<[string, Parameters<typeof w>[0], unknown]>([
    [
      "defaults to the last 30 local days",
      {},
      { from: new Date("2026-10-23T23:00:00Z"), to: new Date("2026-11-22T23:00:00Z") },
    ],
    [
      "takes days=1 as today",
      { days: 1 },
      { from: new Date("2026-11-21T23:00:00Z"), to: new Date("2026-11-22T23:00:00Z") },
    ],
    ["refuses days above 365", { days: 366 }, ["invalid_request", "days must be an integer from 1 to 365, got 366"]],
    ["reaches the whole backlog with all", { all: true }, { from: null, to: null }],
    ["lets from win over days", { days: 3, from: "2026-01-01" }, { from: new Date("2025-12-31T23:00:00Z"), to: null }],
    ["ends to at the next local midnight", { to: "2026-11-01" }, { from: null, to: new Date("2026-11-01T23:00:00Z") }],
    [
      "refuses from after to",
      { from: "2026-11-05", to: "2026-11-01" },
      ["invalid_request", "from (2026-11-05) is after to (2026-11-01)"],
    ],
  ])("%s", (_rule, query, expected) => {
    expect(w(query)).toEqual(expected);
  });
});

describe("notes and limits", () => {
  it.each<[string, string, string | null]>([
    ["accepts a note", "Customer confirmed by phone", null],
    ["refuses an empty note", "", "note is required and must not be empty"],
    ["refuses a blank note", "   ", "note is required and must not be empty"],
    ["refuses a note over 500 characters", "x".repeat(501), "note must be at most 500 characters"],
    ["accepts exactly 500 characters", "x".repeat(500), null],
  ])("%s", (_rule, note, expected) => {
    expect(checkNote(note)?.detail ?? null).toBe(expected);
  });

  it("defaults an absent limit and clamps to the ceiling", () => {
    expect([clampLimit(0), clampLimit(10), clampLimit(1000), clampLimit(0, 100)]).toEqual([50, 10, 250, 100]);
  });
});
