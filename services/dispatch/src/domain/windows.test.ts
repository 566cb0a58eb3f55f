import { describe, expect, it } from "vitest";
import type { Result } from "./errors.ts";
import {
  daysBackRange,
  evidenceExpiresAt,
  formatLocalIso,
  hasEvidenceWindowExpired,
  isInCooldown,
  isWithinLateWindow,
  localDateRange,
  localDayOf,
  localDayRange,
  parseLocalDay,
} from "./windows.ts";

const at = (iso: string) => new Date(iso);

/** Ranges as ISO strings, or the refusal's code and detail. */
function show(result: Result<{ from: Date | null; to: Date | null }>): unknown {
  return result.ok
    ? [result.value.from?.toISOString() ?? null, result.value.to?.toISOString() ?? null]
    : [result.error.reason, result.error.message];
}

describe("evidence and late windows", () => {
  const finished = at("2026-11-22T10:00:00Z");

  it("expires the evidence window its length after finished_at", () => {
    expect(evidenceExpiresAt(finished, 600).toISOString()).toBe("2026-11-22T10:10:00.000Z");
  });

  it.each<[string, string, boolean]>([
    ["keeps the window open a second before it closes", "2026-11-22T10:09:59Z", false],
    ["closes the window at its end", "2026-11-22T10:10:00Z", true],
  ])("%s", (_rule, now, expired) => {
    expect(hasEvidenceWindowExpired(finished, at(now), 600)).toBe(expired);
  });

  it.each<[string, Date | null, string, boolean]>([
    ["is within the late window just after finishing", finished, "2026-11-22T10:00:01Z", true],
    ["is within the late window a second before it ends", finished, "2026-11-22T11:59:59Z", true],
    ["is outside at the end of the late window", finished, "2026-11-22T12:00:00Z", false],
    ["has no late window without finished_at", null, "2026-11-22T10:00:01Z", false],
  ])("%s", (_rule, finishedAt, now, within) => {
    expect(isWithinLateWindow(finishedAt, at(now), 7200)).toBe(within);
  });

  it.each<[string, Date | null, string, boolean]>([
    ["keeps a device in cooldown just after it finished", finished, "2026-11-22T10:00:29Z", true],
    ["releases it once the cooldown has passed", finished, "2026-11-22T10:00:30Z", false],
    ["never cools down a device that finished nothing", null, "2026-11-22T10:00:00Z", false],
  ])("%s", (_rule, lastFinished, now, cooling) => {
    expect(isInCooldown(lastFinished, at(now), 30)).toBe(cooling);
  });
});

describe("local days (UTC+1)", () => {
  it.each<[string, string]>([
    ["2026-11-22T22:59:59Z", "2026-11-22"],
    ["2026-11-22T23:00:00Z", "2026-11-23"],
    ["2026-06-30T23:30:00Z", "2026-07-01"],
  ])("puts %s on local day %s", (instant, day) => {
    expect(localDayOf(at(instant))).toBe(day);
  });

  it("formats an instant in local time with its offset", () => {
    expect(formatLocalIso(at("2026-11-22T23:15:30.250Z"))).toBe("2026-11-23T00:15:30+01:00");
  });

  it.each<[string, string | [string, string]]>([
    ["2026-11-22", "2026-11-22"],
    ["2028-02-29", "2028-02-29"],
    ["2026-02-29", ["invalid_request", "date must be a calendar day in the form YYYY-MM-DD, got '2026-02-29'"]],
    ["2026-13-01", ["invalid_request", "date must be a calendar day in the form YYYY-MM-DD, got '2026-13-01'"]],
    ["2026-11-2", ["invalid_request", "date must be a calendar day in the form YYYY-MM-DD, got '2026-11-2'"]],
    ["22/11/2026", ["invalid_request", "date must be a calendar day in the form YYYY-MM-DD, got '22/11/2026'"]],
    [
      "2026-11-22T00:00",
      ["invalid_request", "date must be a calendar day in the form YYYY-MM-DD, got '2026-11-22T00:00'"],
    ],
  ])("parses %s", (text, expected) => {
    const result = parseLocalDay(text);
    expect(result.ok ? result.value : [result.error.reason, result.error.message]).toEqual(expected);
  });

  it("answers a malformed day with 422", () => {
    const result = localDayRange("yesterday");
    expect(result.ok ? null : result.error.status).toBe("invalid");
  });

  it.each<[string, unknown]>([
    ["2026-11-22", ["2026-11-21T23:00:00.000Z", "2026-11-22T23:00:00.000Z"]],
    ["2026-12-31", ["2026-12-30T23:00:00.000Z", "2026-12-31T23:00:00.000Z"]],
    ["2026-11-31", ["invalid_request", "date must be a calendar day in the form YYYY-MM-DD, got '2026-11-31'"]],
  ])("spans local day %s midnight to midnight", (day, expected) => {
    expect(show(localDayRange(day))).toEqual(expected);
  });
});

describe("localDateRange", () => {
  const now = at("2026-11-22T12:00:00Z");

  it.each<[string, string | null, string | null, { now?: Date; fromField?: string; toField?: string }, unknown]>([
    [
      "covers both days whole",
      "2026-11-20",
      "2026-11-22",
      {},
      ["2026-11-19T23:00:00.000Z", "2026-11-22T23:00:00.000Z"],
    ],
    [
      "accepts a one-day range",
      "2026-11-22",
      "2026-11-22",
      {},
      ["2026-11-21T23:00:00.000Z", "2026-11-22T23:00:00.000Z"],
    ],
    ["leaves an open end open", "2026-11-20", null, {}, ["2026-11-19T23:00:00.000Z", null]],
    ["leaves an open start open", null, "2026-11-20", {}, [null, "2026-11-20T23:00:00.000Z"]],
    [
      "refuses a start after the end, in the route's field names",
      "2026-11-23",
      "2026-11-22",
      { fromField: "date_from", toField: "date_to" },
      ["invalid_request", "date_from (2026-11-23) is after date_to (2026-11-22)"],
    ],
    [
      "refuses a range starting in the future when now is given",
      "2026-11-23",
      null,
      { now },
      ["invalid_request", "from (2026-11-23) is in the future"],
    ],
    ["accepts a range starting today", "2026-11-22", null, { now }, ["2026-11-21T23:00:00.000Z", null]],
    [
      "refuses a malformed end",
      "2026-11-20",
      "2026-11-40",
      {},
      ["invalid_request", "to must be a calendar day in the form YYYY-MM-DD, got '2026-11-40'"],
    ],
  ])("%s", (_rule, from, to, options, expected) => {
    expect(show(localDateRange(from, to, options))).toEqual(expected);
  });
});

describe("daysBackRange", () => {
  it.each<[string, number, string, unknown]>([
    ["makes 1 today alone", 1, "2026-11-22T12:00:00Z", ["2026-11-21T23:00:00.000Z", "2026-11-22T23:00:00.000Z"]],
    [
      "makes 7 today and the six days before",
      7,
      "2026-11-22T12:00:00Z",
      ["2026-11-15T23:00:00.000Z", "2026-11-22T23:00:00.000Z"],
    ],
    [
      "takes today in local time just after local midnight",
      1,
      "2026-11-22T23:30:00Z",
      ["2026-11-22T23:00:00.000Z", "2026-11-23T23:00:00.000Z"],
    ],
    ["accepts 365", 365, "2026-11-22T12:00:00Z", ["2025-11-22T23:00:00.000Z", "2026-11-22T23:00:00.000Z"]],
    ["refuses 0", 0, "2026-11-22T12:00:00Z", ["invalid_request", "days must be an integer from 1 to 365, got 0"]],
    ["refuses 366", 366, "2026-11-22T12:00:00Z", ["invalid_request", "days must be an integer from 1 to 365, got 366"]],
    [
      "refuses a fraction",
      1.5,
      "2026-11-22T12:00:00Z",
      ["invalid_request", "days must be an integer from 1 to 365, got 1.5"],
    ],
  ])("%s", (_rule, days, now, expected) => {
    expect(show(daysBackRange(days, at(now)))).toEqual(expected);
  });
});
