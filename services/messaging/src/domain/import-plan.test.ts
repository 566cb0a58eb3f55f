import { describe, expect, it } from "vitest";
import { planRow, type DuplicatePolicy, type Known } from "./import-plan.ts";
import type { MappedRow } from "./mapping.ts";

const row = (phone: string | undefined, extra: Partial<MappedRow["fields"]> = {}, tags: string[] = []): MappedRow => ({
  fields: { phone, ...extra },
  tags,
  lifecycle: null,
  sources: { phone: "Phone", email: "Email" },
});

const existing = (): Known => ({
  customer_id: "c1",
  first_name: "Old",
  last_name: "Name",
  phone: "+237699000001",
  email: null,
  language: null,
  custom_fields: { a: "1" },
  tag_names: ["keep"],
  lifecycle: null,
  isNew: false,
});

function world() {
  const k = existing();
  return { byPhone: new Map([[k.phone!, k]]), byEmail: new Map<string, Known>() };
}

let ids = 0;
const newId = () => `n${++ids}`;

describe("planRow", () => {
  it.each<[DuplicatePolicy, string]>([
    ["skip", "skip"],
    ["create", "fail"],
    ["update", "update"],
  ])("a row matching a live contact under %s is %s", (policy, kind) =>
    expect(planRow(row("+237699000001"), policy, world(), newId).kind).toBe(kind),
  );

  it("creates a new contact, and a later row of the file with its phone matches it", () => {
    const w = world();
    const first = planRow(row("+237699000002"), "skip", w, newId);
    expect(first).toMatchObject({ kind: "create", contact: { phone: "+237699000002", isNew: true } });
    expect(planRow(row("+237699000002"), "skip", w, newId).kind).toBe("skip");
  });

  it("update overwrites the fields present, merges custom fields and adds tags", () => {
    const d = planRow(
      row("+237699000001", { first_name: "New", custom_fields: { b: "2" } }, ["Fresh"]),
      "update",
      world(),
      newId,
    );
    expect(d).toMatchObject({
      kind: "update",
      contact: {
        first_name: "New",
        last_name: "Name",
        custom_fields: { a: "1", b: "2" },
        tag_names: ["keep", "Fresh"],
      },
    });
  });

  it("fails a row whose phone and e-mail belong to two contacts", () => {
    const w = world();
    const other: Known = { ...existing(), customer_id: "c2", phone: null, email: "x@y.cm" };
    w.byEmail.set("x@y.cm", other);
    const d = planRow(row("+237699000001", { email: "x@y.cm" }), "update", w, newId);
    expect(d).toMatchObject({ kind: "fail", error: { reason: "contact_exists", column: "Email" } });
  });

  it("names the phone column of a duplicate under create", () =>
    expect(planRow(row("+237699000001"), "create", world(), newId)).toMatchObject({
      kind: "fail",
      error: { reason: "duplicate_contact", column: "Phone" },
    }));
});
