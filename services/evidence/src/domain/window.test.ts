import { describe, expect, it } from "vitest";
import { limitOf, localDayOf, localMidnight, windowOf } from "./window.ts";
import { refusalThrownBy } from "../../../../test/support/refusal.ts";

const now = new Date("2026-03-10T23:30:00Z"); // 00:30 on 11 March, local time (UTC+1)

describe("local days (UTC+1)", () => {
  it("puts 23:30 UTC on the next local day", () => {
    expect(localDayOf(now)).toBe("2026-03-11");
    expect(localMidnight("2026-03-11")!.toISOString()).toBe("2026-03-10T23:00:00.000Z");
  });
  it("refuses days that are not on the calendar", () => {
    expect(localMidnight("2026-02-30")).toBeNull();
    expect(localMidnight("11/03/2026")).toBeNull();
  });
});

describe("the list window", () => {
  it("defaults to the last 30 local days, today included, open at the end", () => {
    const w = windowOf({ days: 0, from: "", to: "", all: false }, now);
    expect(w.from!.toISOString()).toBe("2026-02-09T23:00:00.000Z");
    expect(w.to).toBeNull();
  });
  it("takes days=1 as today alone", () => {
    expect(windowOf({ days: 1, from: "", to: "", all: false }, now).from!.toISOString()).toBe(
      "2026-03-10T23:00:00.000Z",
    );
  });
  it("lets from win over days, and makes to inclusive of its whole day", () => {
    const w = windowOf({ days: 3, from: "2026-01-01", to: "2026-01-02", all: false }, now);
    expect(w.from!.toISOString()).toBe("2025-12-31T23:00:00.000Z");
    expect(w.to!.toISOString()).toBe("2026-01-02T23:00:00.000Z");
  });
  it("reaches the whole backlog with all", () => {
    expect(windowOf({ days: 0, from: "", to: "", all: true }, now)).toEqual({ from: null, to: null });
  });
  it("accepts one day as from and to", () => {
    const w = windowOf({ days: 0, from: "2026-01-05", to: "2026-01-05", all: false }, now);
    expect(w.to!.getTime() - w.from!.getTime()).toBe(24 * 3600_000);
  });
  it.each([
    [{ days: 0, from: "2026-01-03", to: "2026-01-02", all: false }, "from"],
    [{ days: 0, from: "2026-13-01", to: "", all: false }, "from"],
    [{ days: 0, from: "", to: "yesterday", all: false }, "to"],
    [{ days: 366, from: "", to: "", all: false }, "days"],
    [{ days: -1, from: "", to: "", all: false }, "days"],
  ])("refuses %o on %s with 422 invalid_request", (req, field) => {
    const err = refusalThrownBy(() => windowOf(req, now));
    expect(err.status).toBe("invalid");
    expect(err.code).toBe("invalid_request");
    expect(err.context.field).toBe(field);
  });
});

describe("the list limit", () => {
  it("defaults to 50 and accepts 1 to 250", () => {
    expect(limitOf(0)).toBe(50);
    expect(limitOf(1)).toBe(1);
    expect(limitOf(250)).toBe(250);
  });
  it("refuses 251", () => {
    expect(refusalThrownBy(() => limitOf(251)).context.field).toBe("limit");
  });
});
