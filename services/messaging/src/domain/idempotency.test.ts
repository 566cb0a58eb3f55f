import { describe, expect, it } from "vitest";
import { requestHash } from "./idempotency.ts";

describe("requestHash", () => {
  it("is the same whatever the order of object keys", () => {
    expect(requestHash("createContact", { a: 1, b: { c: [1, 2], d: "x" } })).toBe(
      requestHash("createContact", { b: { d: "x", c: [1, 2] }, a: 1 }),
    );
  });

  it("differs for another value, another array order, or another route", () => {
    const base = requestHash("createContact", { a: [1, 2] });
    expect(requestHash("createContact", { a: [2, 1] })).not.toBe(base);
    expect(requestHash("createContact", { a: [1, 3] })).not.toBe(base);
    expect(requestHash("createMapping", { a: [1, 2] })).not.toBe(base);
  });
});
