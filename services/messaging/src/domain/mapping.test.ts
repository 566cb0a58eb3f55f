import { describe, expect, it } from "vitest";
import { checkColumns, mapRow, resolveColumns, splitFullName, TEMPLATES, type Column } from "./mapping.ts";

const STAGES = ["customer"];
const cols: Column[] = [
  { column: "Name", target: "full_name", transform: "split_full_name" },
  { column: "Phone", target: "phone" },
  { column: "Stage", target: "lifecycle", transform: "lowercase" },
  { column: "Tags", target: "tags" },
  { column: "City", target: "custom_field", custom_field_key: "city" },
];

describe("mapping a row", () => {
  const resolved = resolveColumns([" name ", "PHONE", "Stage", "Tags", "City"], cols);

  it("matches headers ignoring case and spaces", () => expect(resolved.map((r) => r.index)).toEqual([0, 1, 2, 3, 4]));

  it("splits the full name, normalises the phone, splits tags and fills custom fields", () => {
    const r = mapRow(["Jean Paul Mbarga", "6 99 00 00 01", "CUSTOMER", "a;b||c;", "Douala"], resolved, 5, STAGES);
    expect(r).toEqual({
      ok: true,
      row: {
        fields: {
          first_name: "Jean Paul",
          last_name: "Mbarga",
          language: undefined,
          phone: "+237699000001",
          email: undefined,
          custom_fields: { city: "Douala" },
        },
        tags: ["a", "b", "c"],
        lifecycle: "customer",
        sources: { phone: "Phone" },
      },
    });
  });

  it.each([
    [["X", "12", "", "", ""], "Phone", "invalid_phone"],
    [["X", "", "gold", "", ""], "Stage", "unknown_lifecycle"],
    [["X", "699000001", "", `ok;${"t".repeat(65)}`, ""], "Tags", "invalid_tag"],
    [["", "", "", "t", ""], "", "missing_identity"],
    [["X", "699000001"], "", "column_count"],
  ])("refuses %j: column %s, reason %s", (values, column, reason) => {
    const r = mapRow(values, resolved, 5, STAGES);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.errors[0]).toMatchObject({ column, reason });
  });

  it("splits one word as a first name only", () =>
    expect(splitFullName(" Madonna ")).toEqual({ first: "Madonna", last: "" }));
});

describe("checkColumns", () => {
  it("accepts every built-in template", () => {
    for (const t of TEMPLATES) expect(checkColumns(t.columns)).toBeNull();
  });

  it.each([
    [[], "no column"],
    [[{ column: "a", target: "age" }], "unknown target"],
    [[{ column: "a", target: "custom_field" }], "custom field without key"],
    [[{ column: " ", target: "phone" }], "empty header"],
    [[{ column: "a", target: "phone", transform: "reverse" }], "unknown transform"],
  ])("refuses %j (%s) with invalid_mapping", (columns, _why) =>
    expect(checkColumns(columns as Column[])?.reason).toBe("invalid_mapping"),
  );
});
