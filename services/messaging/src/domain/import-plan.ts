// What an import does with each mapped row, given the live contacts that hold its phone
// or e-mail and the duplicate policy:
//   skip   — a row matching a live contact is skipped (counted `skipped`);
//   update — a row matching a live contact updates it: fields present overwrite, custom
//            fields merge, tags are added, a lifecycle present replaces;
//   create — only new contacts are created; a row matching a live contact is a failed row
//            `duplicate_contact` (phone and e-mail stay unique among live contacts).
// Rows of the same file see each other: the second row with a phone matches the contact
// the first one created. A row whose phone and e-mail match two different contacts fails
// with `contact_exists`.

import { mergeCustomFields } from "./contact-rules.ts";
import type { MappedRow, RowError } from "./mapping.ts";

export type DuplicatePolicy = "skip" | "update" | "create";

export interface Known {
  customer_id: string;
  first_name: string | null;
  last_name: string | null;
  phone: string | null;
  email: string | null;
  language: string | null;
  custom_fields: Record<string, string>;
  tag_names: string[];
  lifecycle: string | null;
  /** Whether it is created by this batch (not yet in the database). */
  isNew: boolean;
}

export type Decision =
  | { kind: "create"; contact: Known }
  | { kind: "update"; contact: Known }
  | { kind: "skip" }
  | { kind: "fail"; error: RowError };

/** Plans one row against the contacts known so far, updating them as the row would. */
export function planRow(
  row: MappedRow,
  policy: DuplicatePolicy,
  known: { byPhone: Map<string, Known>; byEmail: Map<string, Known> },
  newId: () => string,
): Decision {
  const f = row.fields;
  const byPhone = f.phone ? known.byPhone.get(f.phone) : undefined;
  const byEmail = f.email ? known.byEmail.get(f.email) : undefined;
  if (byPhone && byEmail && byPhone !== byEmail) {
    return {
      kind: "fail",
      error: {
        column: row.sources.email ?? "",
        reason: "contact_exists",
        detail: `The phone belongs to ${byPhone.customer_id} and the e-mail to ${byEmail.customer_id}`,
      },
    };
  }
  const match = byPhone ?? byEmail;
  if (!match) {
    const contact: Known = {
      customer_id: newId(),
      first_name: f.first_name ?? null,
      last_name: f.last_name ?? null,
      phone: f.phone ?? null,
      email: f.email ?? null,
      language: f.language ?? null,
      custom_fields: f.custom_fields ?? {},
      tag_names: dedupe(row.tags),
      lifecycle: row.lifecycle,
      isNew: true,
    };
    remember(known, contact);
    return { kind: "create", contact };
  }
  if (policy === "skip") return { kind: "skip" };
  if (policy === "create") {
    const column = byPhone ? row.sources.phone : row.sources.email;
    return {
      kind: "fail",
      error: {
        column: column ?? "",
        reason: "duplicate_contact",
        detail: `A live contact has this ${byPhone ? "phone" : "e-mail"}: ${match.customer_id}`,
      },
    };
  }
  // update: the row may bring the phone or e-mail the match lacks, if no one else holds it.
  for (const k of ["first_name", "last_name", "phone", "email", "language"] as const) {
    if (f[k]) match[k] = f[k];
  }
  if (f.custom_fields) match.custom_fields = mergeCustomFields(match.custom_fields, f.custom_fields);
  match.tag_names = dedupe([...match.tag_names, ...row.tags]);
  if (row.lifecycle) match.lifecycle = row.lifecycle;
  remember(known, match);
  return { kind: "update", contact: match };
}

function remember(known: { byPhone: Map<string, Known>; byEmail: Map<string, Known> }, c: Known) {
  if (c.phone) known.byPhone.set(c.phone, c);
  if (c.email) known.byEmail.set(c.email, c);
}

function dedupe(names: string[]): string[] {
  const seen = new Map<string, string>();
  for (const n of names) if (!seen.has(n.toLowerCase())) seen.set(n.toLowerCase(), n);
  return [...seen.values()];
}
