import { describe, expect, it } from "vitest";
import { decodeCursor, encodeCursor, pageLimit } from "./cursor.ts";

describe("cursors", () => {
  it("round-trips a sequence number through an opaque cursor", () => {
    const c = encodeCursor("contacts", "12345");
    expect(c).toMatch(/^[A-Za-z0-9_-]+$/);
    expect(decodeCursor("contacts", c)).toEqual({ ok: true, seq: "12345" });
  });

  it("starts at the beginning without a cursor", () =>
    expect(decodeCursor("contacts", "")).toEqual({ ok: true, seq: "0" }));

  it.each([
    ["a cursor of another list", encodeCursor("imports", 5)],
    ["garbage", "%%%"],
    ["base64 of text", Buffer.from("hello").toString("base64url")],
    ["a huge number", Buffer.from("contacts:99999999999999999999").toString("base64url")],
    ["an over-long cursor", "A".repeat(65)],
  ])("refuses %s with invalid_cursor", (_name, cursor) => {
    const d = decodeCursor("contacts", cursor);
    expect(d.ok).toBe(false);
    if (!d.ok) expect(d.error.reason).toBe("invalid_cursor");
  });

  it.each([
    [0, 50],
    [10, 10],
    [200, 200],
    [5000, 200],
  ])("limit %i becomes %i", (limit, applied) => expect(pageLimit(limit)).toBe(applied));
});
