import { describe, expect, it } from "vitest";
import { checkFields, checkLifecycle, checkTagName, mergeCustomFields } from "./contact-rules.ts";

describe("checkFields", () => {
  it("trims, normalises the phone, lower-cases the e-mail, turns empty text into a clear", () => {
    const r = checkFields({ first_name: "  Ana ", last_name: "", phone: "6 77 12 34 56", email: "A@B.CM" });
    expect(r).toEqual({
      ok: true,
      value: { first_name: "Ana", last_name: null, language: undefined, phone: "+237677123456", email: "a@b.cm" },
    });
  });

  it.each([
    [{ phone: "123" }, "invalid_phone"],
    [{ email: "a@b" }, "invalid_email"],
    [{ first_name: "x".repeat(101) }, "invalid_request"],
    [{ first_name: "a\u0000" }, "invalid_request"],
    [{ language: "french!" }, "invalid_request"],
    [{ custom_fields: { "1x": "v" } }, "invalid_request"],
    [{ custom_fields: { ok: "v".repeat(1001) } }, "invalid_request"],
  ])("refuses %j with %s", (input, reason) => {
    const r = checkFields(input);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.error.reason).toBe(reason);
  });
});

describe("other contact rules", () => {
  it("merges custom fields, removing keys set to an empty text", () =>
    expect(mergeCustomFields({ a: "1", b: "2" }, { a: "", c: "3" })).toEqual({ b: "2", c: "3" }));

  it("accepts configured lifecycle stages, clears on empty, refuses others", () => {
    expect(checkLifecycle("customer", ["customer"])).toEqual({ ok: true, value: "customer" });
    expect(checkLifecycle("", ["customer"])).toEqual({ ok: true, value: null });
    const r = checkLifecycle("gold", ["customer"]);
    expect(r.ok || r.error.reason).toBe("unknown_lifecycle");
  });

  it("refuses empty or over-long tag names", () => {
    expect(checkTagName(" VIP ")).toEqual({ ok: true, value: "VIP" });
    expect(checkTagName("  ").ok).toBe(false);
    expect(checkTagName("x".repeat(65)).ok).toBe(false);
  });
});
