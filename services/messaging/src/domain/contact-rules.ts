// The rules of a contact's writable fields: lengths, phone and e-mail forms, custom
// field keys, tag names. Pure: the caller turns a refusal into a response.

import type { DomainError } from "@transferops/kit/pure";
import { normalizePhone } from "./phone.ts";
import { refusal } from "./reasons.ts";

export const LIMITS = {
  nameChars: 100,
  emailChars: 254,
  languageChars: 35,
  customFieldKeyChars: 64,
  customFieldValueChars: 1000,
  customFields: 50,
  tagChars: 64,
  tagsPerContact: 100,
  collaborators: 50,
} as const;

/** Writable fields as they arrive: undefined = not sent; "" = clear. */
export interface FieldsInput {
  first_name?: string;
  last_name?: string;
  phone?: string;
  email?: string;
  language?: string;
  custom_fields?: Record<string, string>;
}

/** Validated fields: null clears; undefined leaves unchanged. */
export interface CleanFields {
  first_name?: string | null;
  last_name?: string | null;
  phone?: string | null;
  email?: string | null;
  language?: string | null;
  custom_fields?: Record<string, string>;
}

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const LANGUAGE = /^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$/;
const FIELD_KEY = /^[a-z][a-z0-9_]*$/;
// Control characters (NUL included) are refused in every text field.
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

export type Checked<T> = { ok: true; value: T } | { ok: false; error: DomainError };

const bad = (field: string, message: string): Checked<never> => ({
  ok: false,
  error: refusal("invalid_request", `${field}: ${message}`, { field }),
});

function text(field: string, v: string | undefined, max: number): Checked<string | null | undefined> {
  if (v === undefined) return { ok: true, value: undefined };
  const t = v.trim();
  if (CONTROL.test(t)) return bad(field, "must not contain control characters");
  if (t.length > max) return bad(field, `must be at most ${max} characters`);
  return { ok: true, value: t === "" ? null : t };
}

/** Checks and normalises the fields sent (phone to E.164, e-mail lower-cased). */
export function checkFields(input: FieldsInput): Checked<CleanFields> {
  const out: CleanFields = {};
  for (const [field, max] of [
    ["first_name", LIMITS.nameChars],
    ["last_name", LIMITS.nameChars],
    ["language", LIMITS.languageChars],
  ] as const) {
    const r = text(field, input[field], max);
    if (!r.ok) return r;
    out[field] = r.value;
  }
  if (out.language && !LANGUAGE.test(out.language))
    return bad("language", "must be a language tag such as fr or en-CM");
  const phone = text("phone", input.phone, 40);
  if (!phone.ok) return phone;
  if (phone.value) {
    const e164 = normalizePhone(phone.value);
    if (!e164) {
      return {
        ok: false,
        error: refusal("invalid_phone", `phone ${phone.value} is not an E.164 or Cameroon national number`, {
          field: "phone",
        }),
      };
    }
    out.phone = e164;
  } else out.phone = phone.value;
  const email = text("email", input.email, LIMITS.emailChars);
  if (!email.ok) return email;
  if (email.value && !EMAIL.test(email.value)) {
    return { ok: false, error: refusal("invalid_email", `email ${email.value} is malformed`, { field: "email" }) };
  }
  out.email = email.value ? email.value.toLowerCase() : email.value;
  if (input.custom_fields) {
    const cf = checkCustomFields(input.custom_fields);
    if (!cf.ok) return cf;
    out.custom_fields = cf.value;
  }
  return { ok: true, value: out };
}

function checkCustomFields(fields: Record<string, string>): Checked<Record<string, string>> {
  const entries = Object.entries(fields);
  if (entries.length > LIMITS.customFields) return bad("custom_fields", `at most ${LIMITS.customFields} keys`);
  for (const [k, v] of entries) {
    if (!FIELD_KEY.test(k) || k.length > LIMITS.customFieldKeyChars) {
      return bad(`custom_fields.${k}`, "keys are snake_case, up to 64 characters");
    }
    if (CONTROL.test(v) || v.length > LIMITS.customFieldValueChars) {
      return bad(`custom_fields.${k}`, "values are text up to 1000 characters without control characters");
    }
  }
  return { ok: true, value: fields };
}

/** Tag names: trimmed, 1 to 64 characters, no control characters. */
export function checkTagName(name: string): Checked<string> {
  const t = name.trim();
  if (!t || t.length > LIMITS.tagChars || CONTROL.test(t)) {
    return bad("tag", "a tag name has 1 to 64 characters without control characters");
  }
  return { ok: true, value: t };
}

/** Merges a change of custom fields into the current ones: "" removes a key. */
export function mergeCustomFields(current: Record<string, string>, change: Record<string, string>) {
  const merged = { ...current };
  for (const [k, v] of Object.entries(change)) {
    if (v === "") delete merged[k];
    else merged[k] = v;
  }
  return merged;
}

/** Whether the lifecycle stage is configured (empty clears). */
export function checkLifecycle(stage: string, stages: readonly string[]): Checked<string | null> {
  if (stage === "") return { ok: true, value: null };
  if (!stages.includes(stage)) {
    return {
      ok: false,
      error: refusal("unknown_lifecycle", `lifecycle ${stage.slice(0, 64)} is not one of ${stages.join(", ")}`, {
        lifecycle: stage.slice(0, 64),
        stages,
      }),
    };
  }
  return { ok: true, value: stage };
}
