// Mappings of a file's columns to contact fields, the built-in templates, and the
// mapping of one row. Pure: the import worker applies the result.

import type { DomainError } from "@transferops/kit/pure";
import { checkFields, checkTagName, type CleanFields, type FieldsInput } from "./contact-rules.ts";
import { refusal } from "./reasons.ts";

export const TARGETS = [
  "first_name",
  "last_name",
  "full_name",
  "phone",
  "email",
  "language",
  "lifecycle",
  "tags",
  "custom_field",
  "ignore",
] as const;
export const TRANSFORMS = ["none", "trim", "lowercase", "split_full_name", "normalize_phone"] as const;
export type Target = (typeof TARGETS)[number];
export type Transform = (typeof TRANSFORMS)[number];

export interface Column {
  column: string;
  target: Target;
  custom_field_key?: string;
  transform?: Transform;
}

export interface Template {
  template: string;
  description: string;
  columns: Column[];
}

const col = (column: string, target: Target, extra: Partial<Column> = {}): Column => ({ column, target, ...extra });

/** Built-in mappings for the files people bring. Columns absent from a file are ignored. */
export const TEMPLATES: Template[] = [
  {
    template: "google_contacts",
    description: "Google Contacts export (Google CSV), also what Android phones export through Google",
    columns: [
      col("Given Name", "first_name"),
      col("First Name", "first_name"),
      col("Family Name", "last_name"),
      col("Last Name", "last_name"),
      col("Phone 1 - Value", "phone"),
      col("E-mail 1 - Value", "email"),
      col("Labels", "tags"),
      col("Group Membership", "tags"),
      col("Notes", "custom_field", { custom_field_key: "notes" }),
    ],
  },
  {
    template: "outlook_contacts",
    description: "Outlook / Microsoft 365 contacts export (also the iPhone contacts exported through iCloud to CSV)",
    columns: [
      col("First Name", "first_name"),
      col("Last Name", "last_name"),
      col("Mobile Phone", "phone"),
      col("E-mail Address", "email"),
      col("Categories", "tags"),
      col("Company", "custom_field", { custom_field_key: "company" }),
    ],
  },
  {
    template: "spreadsheet",
    description: "A simple sheet (Excel, LibreOffice, Google Sheets): Name, Phone, Email, Tags; French headers too",
    columns: [
      col("Name", "full_name", { transform: "split_full_name" }),
      col("Nom", "full_name", { transform: "split_full_name" }),
      col("Phone", "phone"),
      col("Téléphone", "phone"),
      col("Telephone", "phone"),
      col("Email", "email"),
      col("E-mail", "email"),
      col("Tags", "tags"),
      col("Language", "language"),
      col("Langue", "language"),
    ],
  },
  {
    template: "hubspot",
    description: "HubSpot contacts export",
    columns: [
      col("First Name", "first_name"),
      col("Last Name", "last_name"),
      col("Phone Number", "phone"),
      col("Mobile Phone Number", "phone"),
      col("Email", "email"),
      col("Lifecycle Stage", "lifecycle", { transform: "lowercase" }),
      col("Preferred language", "language"),
    ],
  },
  {
    template: "respond_io",
    description: "respond.io contacts export",
    columns: [
      col("firstName", "first_name"),
      col("lastName", "last_name"),
      col("phone", "phone"),
      col("email", "email"),
      col("language", "language"),
      col("tags", "tags"),
      col("lifecycle", "lifecycle"),
    ],
  },
];

export const findTemplate = (name: string) => TEMPLATES.find((t) => t.template === name);

/** A mapping's columns: 1 to 100, known targets and transforms, custom fields named. */
export function checkColumns(columns: Column[]): DomainError | null {
  const bad = (detail: string) => refusal("invalid_mapping", detail);
  if (!columns.length || columns.length > 100) return bad("A mapping has 1 to 100 columns");
  for (const c of columns) {
    if (!c.column.trim() || c.column.length > 200) return bad("A column header has 1 to 200 characters");
    if (!TARGETS.includes(c.target)) return bad(`Unknown target ${String(c.target).slice(0, 40)}`);
    if (c.transform && !TRANSFORMS.includes(c.transform)) {
      return bad(`Unknown transform ${String(c.transform).slice(0, 40)}`);
    }
    if (c.target === "custom_field" && !/^[a-z][a-z0-9_]{0,63}$/.test(c.custom_field_key ?? "")) {
      return bad(`Column ${c.column} needs a snake_case custom_field_key`);
    }
  }
  return null;
}

export interface Resolved {
  index: number;
  column: Column;
}

/** The mapped columns present in the header (matched ignoring case and spaces). */
export function resolveColumns(header: string[], columns: Column[]): Resolved[] {
  const key = (s: string) => s.trim().toLowerCase();
  const at = new Map<string, number>();
  header.forEach((h, i) => at.has(key(h)) || at.set(key(h), i));
  return columns
    .filter((c) => c.target !== "ignore" && at.has(key(c.column)))
    .map((c) => ({ index: at.get(key(c.column))!, column: c }));
}

export interface RowError {
  column: string;
  reason: string;
  detail: string;
}

export interface MappedRow {
  fields: CleanFields;
  tags: string[];
  lifecycle: string | null;
  /** Source column of each contact field, to name it in errors. */
  sources: Partial<Record<"phone" | "email", string>>;
}

/** Splits a full name: the last word is the family name ("Jean Paul Mbarga" → "Jean Paul" / "Mbarga"). */
export function splitFullName(full: string): { first: string; last: string } {
  const words = full.trim().split(/\s+/).filter(Boolean);
  if (words.length <= 1) return { first: words[0] ?? "", last: "" };
  return { first: words.slice(0, -1).join(" "), last: words[words.length - 1] };
}

const transformed = (value: string, t: Transform | undefined) =>
  t === "lowercase" ? value.trim().toLowerCase() : value.trim();

/** One record → the contact's fields, or the row's errors. */
export function mapRow(
  values: string[],
  resolved: Resolved[],
  headerLength: number,
  stages: readonly string[],
): { ok: true; row: MappedRow } | { ok: false; errors: RowError[] } {
  if (values.length !== headerLength) {
    return {
      ok: false,
      errors: [
        {
          column: "",
          reason: "column_count",
          detail: `The row has ${values.length} fields; the header has ${headerLength}`,
        },
      ],
    };
  }
  const { input, sources, custom, tags, lifecycle, errors } = gatherRow(values, resolved, stages);
  if (Object.keys(custom).length) input.custom_fields = custom;
  const checked = checkFields(input);
  if (!checked.ok) errors.push(fieldError(checked.error, sources, resolved));
  if (errors.length) return { ok: false, errors };
  const fields = (checked as { ok: true; value: CleanFields }).value;
  if (!fields.phone && !fields.email && !fields.first_name && !fields.last_name) {
    return {
      ok: false,
      errors: [{ column: "", reason: "missing_identity", detail: "The row has no name, phone or e-mail" }],
    };
  }
  return { ok: true, row: { fields, tags, lifecycle, sources } };
}

/** What a record's columns give, before the contact's fields are checked together. */
interface GatheredRow {
  input: FieldsInput;
  sources: MappedRow["sources"];
  custom: Record<string, string>;
  tags: string[];
  lifecycle: string | null;
  errors: RowError[];
}

function gatherRow(values: string[], resolved: Resolved[], stages: readonly string[]): GatheredRow {
  const row: GatheredRow = { input: {}, sources: {}, custom: {}, tags: [], lifecycle: null, errors: [] };
  for (const { index, column: c } of resolved) {
    const value = transformed(values[index] ?? "", c.transform);
    if (value) gatherColumn(row, c, value, stages);
  }
  return row;
}

/** One column's value into the row: the first of a field wins, tags and custom fields add up. */
function gatherColumn(row: GatheredRow, c: Column, value: string, stages: readonly string[]): void {
  const { input, sources } = row;
  switch (c.target) {
    case "full_name": {
      const { first, last } = splitFullName(value);
      input.first_name ??= first;
      if (last) input.last_name ??= last;
      break;
    }
    case "first_name":
    case "last_name":
    case "language":
      input[c.target] ??= value;
      break;
    case "phone":
    case "email":
      if (input[c.target] === undefined) {
        input[c.target] = value;
        sources[c.target] = c.column;
      }
      break;
    case "lifecycle":
      if (!stages.includes(value)) {
        row.errors.push({ column: c.column, reason: "unknown_lifecycle", detail: `Unknown lifecycle stage ${value}` });
      } else row.lifecycle = value;
      break;
    case "tags":
      gatherTags(row, c, value);
      break;
    case "custom_field":
      row.custom[c.custom_field_key!] = value;
      break;
  }
}

function gatherTags(row: GatheredRow, c: Column, value: string): void {
  for (const name of value.split(/[,;|]/)) {
    if (!name.trim()) continue; // "a,,b" and a trailing separator name no tag
    const t = checkTagName(name);
    if (t.ok) row.tags.push(t.value);
    else row.errors.push({ column: c.column, reason: "invalid_tag", detail: t.error.detail });
  }
}

/** The contact's refusal as the row's error, on the column its field came from. */
function fieldError(error: DomainError, sources: MappedRow["sources"], resolved: Resolved[]): RowError {
  const field = String(error.context.field ?? "");
  const column = sources[field as "phone" | "email"] ?? resolved.find((r) => r.column.target === field)?.column.column;
  return { column: column ?? "", reason: error.reason ?? "invalid_request", detail: error.detail };
}
