import { describe, expect, it } from "vitest";
import { normalizePhone, phoneSearchPrefix } from "./phone.ts";

describe("normalizePhone", () => {
  it.each([
    ["677123456", "+237677123456"],
    ["6 77 12 34 56", "+237677123456"],
    ["677-12-34-56", "+237677123456"],
    ["(+237) 677 12 34 56", "+237677123456"],
    ["00237677123456", "+237677123456"],
    ["237677123456", "+237677123456"],
    ["222 23 45 67", "+237222234567"],
    ["+33 6 12 34 56 78", "+33612345678"],
    ["0033612345678", "+33612345678"],
    ["+1 202 555 0143", "+12025550143"],
  ])("understands %s as %s", (input, e164) => expect(normalizePhone(input)).toBe(e164));

  it.each([
    ["a number too short", "67712345"],
    ["a national number not starting with 2 or 6", "577123456"],
    ["+237 with 8 digits", "+23767712345"],
    ["letters", "677abc456"],
    ["a foreign number without country code", "0612345678"],
    ["an E.164 number starting with 0", "+0612345678"],
    ["more than 15 digits", "+1234567890123456"],
    ["an empty text", ""],
  ])("refuses %s", (_name, input) => expect(normalizePhone(input)).toBeNull());
});

describe("phoneSearchPrefix", () => {
  it.each([
    ["677 12", "+23767712"],
    ["+33 6", "+336"],
    ["0023769", "+23769"],
    ["23769", "+23769"],
  ])("reads %s as the prefix %s", (text, prefix) => expect(phoneSearchPrefix(text)).toBe(prefix));

  it.each(["jean", "67", "a@b.cm", "677 x"])("treats %s as text, not a phone", (text) =>
    expect(phoneSearchPrefix(text)).toBeNull(),
  );
});
