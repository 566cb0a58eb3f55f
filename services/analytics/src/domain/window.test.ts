import { describe, expect, it } from "vitest";
import { addDays, daysBetween, localFields, mondayOf } from "./local-time.ts";
import { operationFacts } from "./operation-facts.ts";
import { fillSeries, isWeekly } from "./series.ts";
import { previousWindow, resolveWindow, windowParts, windowSince, windowUntil } from "./window.ts";

// 2026-03-04 22:30 UTC is Wednesday 23:30 local; 23:30 UTC is already Thursday 00:30 local.
const WED_LATE = new Date("2026-03-04T22:30:00Z");
const THU_EARLY = new Date("2026-03-04T23:30:00Z");

describe("local time (UTC+1)", () => {
  it("places an instant on its local day, weekday and hour across UTC midnight", () => {
    expect(localFields(WED_LATE)).toEqual({ day: "2026-03-04", weekday: 3, hour: 23 });
    expect(localFields(THU_EARLY)).toEqual({ day: "2026-03-05", weekday: 4, hour: 0 });
    expect(localFields(new Date("2026-03-08T12:00:00Z"))).toEqual({ day: "2026-03-08", weekday: 7, hour: 13 });
  });

  it("dates a week by its Monday", () => {
    expect(mondayOf("2026-03-02")).toBe("2026-03-02");
    expect(mondayOf("2026-03-08")).toBe("2026-03-02");
    expect(mondayOf("2026-03-01")).toBe("2026-02-23");
  });
});

describe("resolveWindow", () => {
  it("defaults to 7 days ending today (local), 1 being today", () => {
    expect(resolveWindow({}, THU_EARLY)).toEqual({ all: false, firstDay: "2026-02-27", lastDay: "2026-03-05" });
    const today = resolveWindow({ days: 1 }, WED_LATE);
    expect(today).toEqual({ all: false, firstDay: "2026-03-04", lastDay: "2026-03-04" });
    expect(windowSince(today)?.toISOString()).toBe("2026-03-03T23:00:00.000Z");
    expect(windowUntil(today)?.toISOString()).toBe("2026-03-04T23:00:00.000Z");
  });

  it("lets from win over days, runs from alone to today, ends a days window on to alone", () => {
    expect(resolveWindow({ days: 30, from: "2026-03-01", to: "2026-03-02" }, WED_LATE)).toMatchObject({
      firstDay: "2026-03-01",
      lastDay: "2026-03-02",
    });
    expect(resolveWindow({ from: "2026-03-01" }, WED_LATE)).toMatchObject({
      firstDay: "2026-03-01",
      lastDay: "2026-03-04",
    });
    expect(resolveWindow({ to: "2026-03-02", days: 3 }, WED_LATE)).toMatchObject({
      firstDay: "2026-02-28",
      lastDay: "2026-03-02",
    });
  });

  it("reaches everything with all, unless from or to are given", () => {
    expect(resolveWindow({ all: true, days: 3 }, WED_LATE)).toEqual({ all: true });
    expect(resolveWindow({ all: true, from: "2026-03-01" }, WED_LATE)).toMatchObject({ all: false });
    expect(previousWindow({ all: true })).toBeUndefined();
  });

  it.each([
    [{ days: 0.5 }, "invalid_window"],
    [{ days: 366 }, "invalid_window"],
    [{ from: "2026-02-29" }, "invalid_window"],
    [{ to: "03/01/2026" }, "invalid_window"],
    [{ from: "2026-03-03", to: "2026-03-02" }, "reversed_range"],
    [{ from: "2026-03-05" }, "future_range"],
  ])("refuses %o with %s (422)", (input, reason) => {
    expect(() => resolveWindow(input, WED_LATE)).toThrowError(expect.objectContaining({ status: "invalid", reason }));
  });

  it("accepts a range starting today at 00:30 local although UTC is still yesterday", () => {
    expect(resolveWindow({ from: "2026-03-05" }, THU_EARLY)).toMatchObject({ firstDay: "2026-03-05" });
  });

  it("takes the previous window of the same length just before", () => {
    const w = resolveWindow({ from: "2026-03-02", to: "2026-03-04" }, WED_LATE);
    expect(previousWindow(w)).toEqual({ all: false, firstDay: "2026-02-27", lastDay: "2026-03-01" });
  });
});

describe("fillSeries", () => {
  const zero = (day: string) => ({ day, n: 0 });
  it("has every day, empty ones included", () => {
    expect(fillSeries("2026-02-27", "2026-03-02", false, [{ day: "2026-03-01", n: 4 }], zero)).toEqual([
      zero("2026-02-27"),
      zero("2026-02-28"),
      { day: "2026-03-01", n: 4 },
      zero("2026-03-02"),
    ]);
  });
  it("buckets by Monday past 120 days", () => {
    expect(isWeekly(120)).toBe(false);
    expect(isWeekly(121)).toBe(true);
    expect(fillSeries("2026-03-01", "2026-03-10", true, [{ day: "2026-03-02", n: 2 }], zero)).toEqual([
      zero("2026-02-23"),
      { day: "2026-03-02", n: 2 },
      zero("2026-03-09"),
    ]);
  });
});

describe("operationFacts", () => {
  const at = new Date("2026-03-02T10:00:30Z");
  const base = { previousStatus: "", deviceOutcome: "", decision: "", changedAt: at };
  it("an automatic proof: confirmed by proof, fee and delay from the message", () => {
    expect(
      operationFacts({
        ...base,
        status: "confirmed",
        previousStatus: "awaiting_evidence",
        trigger: "proof",
        evidenceReceivedAt: new Date("2026-03-02T10:00:00Z"),
        evidenceFee: 150n,
      }),
    ).toEqual({
      dialled: true,
      confirmed_by: "proof",
      touched_by_hand: false,
      has_message: true,
      settled_by_hand: null,
      lost: false,
      fee: 150n,
      proof_delay_s: 30,
    });
  });
  it("a settle as not arrived: settled by hand and lost, no proof", () => {
    expect(
      operationFacts({
        ...base,
        status: "failed",
        previousStatus: "no_evidence",
        trigger: "settle",
        decision: "did_not_arrive",
      }),
    ).toEqual({
      dialled: true,
      confirmed_by: null,
      touched_by_hand: true,
      has_message: false,
      settled_by_hand: "did_not_arrive",
      lost: true,
      fee: null,
      proof_delay_s: null,
    });
  });
  it("a cancel of a queued operation: nothing dialled, nothing lost", () => {
    expect(operationFacts({ ...base, status: "rejected", previousStatus: "queued", trigger: "cancel" })).toEqual({
      dialled: false,
      confirmed_by: null,
      touched_by_hand: false,
      has_message: false,
      settled_by_hand: null,
      lost: false,
      fee: null,
      proof_delay_s: null,
    });
  });
});

describe("a window's whole months and edge days (the monthly rollups' reads)", () => {
  it("splits known windows", () => {
    expect(windowParts({ all: true })).toEqual({ all: true });
    expect(windowParts({ all: false, firstDay: "2026-03-01", lastDay: "2026-03-31" })).toEqual({
      all: false,
      months: { first: "2026-03-01", last: "2026-03-01" },
      days: [],
    });
    expect(windowParts({ all: false, firstDay: "2026-03-02", lastDay: "2026-03-31" })).toEqual({
      all: false,
      days: [{ firstDay: "2026-03-02", lastDay: "2026-03-31" }],
    });
    // 365 days to 2026-11-30: December 2025 to November 2026 less its first day.
    expect(windowParts({ all: false, firstDay: "2025-12-01", lastDay: "2026-11-30" })).toEqual({
      all: false,
      months: { first: "2025-12-01", last: "2026-11-01" },
      days: [],
    });
    expect(windowParts({ all: false, firstDay: "2025-11-29", lastDay: "2026-11-28" })).toEqual({
      all: false,
      months: { first: "2025-12-01", last: "2026-10-01" },
      days: [
        { firstDay: "2025-11-29", lastDay: "2025-11-30" },
        { firstDay: "2026-11-01", lastDay: "2026-11-28" },
      ],
    });
    // February of a leap year ends on the 29th.
    expect(windowParts({ all: false, firstDay: "2028-02-01", lastDay: "2028-02-29" }).all).toBe(false);
    expect(windowParts({ all: false, firstDay: "2028-02-01", lastDay: "2028-02-29" })).toMatchObject({ days: [] });
  });

  it("covers every day of every window up to 365 days once, with at most 12 months and 61 edge days", () => {
    const monthEnd = (first: string) => addDays(first.slice(0, 8) + "28", 4).slice(0, 8) + "01";
    // Every last day over two years (a leap February among them), every length to a year.
    for (let end = 0; end < 731; end += 1) {
      const lastDay = addDays("2027-01-01", end);
      for (let length = 1; length <= 365; length += 1) {
        const firstDay = addDays(lastDay, -(length - 1));
        const parts = windowParts({ all: false, firstDay, lastDay });
        if (parts.all) throw new Error("a window with bounds came back whole");
        const pieces = parts.days.map((d) => [d.firstDay, d.lastDay]);
        let months = 0;
        if (parts.months) {
          pieces.push([parts.months.first, addDays(monthEnd(parts.months.last), -1)]);
          months =
            (Number(parts.months.last.slice(0, 4)) - Number(parts.months.first.slice(0, 4))) * 12 +
            Number(parts.months.last.slice(5, 7)) -
            Number(parts.months.first.slice(5, 7)) +
            1;
        }
        pieces.sort((a, b) => (a[0]! < b[0]! ? -1 : 1));
        const contiguous = pieces.every((p, k) => k === 0 || p[0] === addDays(pieces[k - 1]![1]!, 1));
        const edge = parts.days.reduce((n, d) => n + daysBetween(d.firstDay, d.lastDay) + 1, 0);
        const ok =
          pieces[0]![0] === firstDay &&
          pieces.at(-1)![1] === lastDay &&
          contiguous &&
          pieces.every((p) => p[0]! <= p[1]!) &&
          (!parts.months || parts.months.first.endsWith("-01")) &&
          months <= 12 &&
          edge <= 61;
        if (!ok) expect({ firstDay, lastDay, parts, edge, months }).toBe("covered once, bounded");
      }
    }
  });
});
