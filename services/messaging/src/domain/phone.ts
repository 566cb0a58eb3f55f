// Phone numbers to E.164. Cameroon's national numbers have 9 digits (mobile `6…`,
// fixed `2…`); people write them with spaces, dots or dashes, with `+237`, `00237` or
// `237`, or with nothing. Any other number must carry its country code (`+` or `00`).

const SEPARATORS = /[\s.\-()/]/g;

/** The E.164 form of `input`, or null when it is not a phone number we can place. */
export function normalizePhone(input: string): string | null {
  const raw = input.replace(SEPARATORS, "");
  if (!/^\+?\d+$/.test(raw)) return null;
  let international: string | null = null;
  if (raw.startsWith("+")) international = raw.slice(1);
  else if (raw.startsWith("00")) international = raw.slice(2);
  else if (raw.length === 12 && raw.startsWith("237")) international = raw;
  if (international === null) return isCameroonNational(raw) ? `+237${raw}` : null;
  if (international.startsWith("237")) {
    return isCameroonNational(international.slice(3)) ? `+${international}` : null;
  }
  return /^[1-9]\d{7,14}$/.test(international) ? `+${international}` : null;
}

function isCameroonNational(digits: string): boolean {
  return /^[26]\d{8}$/.test(digits);
}

/**
 * The E.164 prefix a phone-like search text stands for, or null when the text is not
 * phone-like (it then searches names and e-mails). `677 12` → `+23767712`;
 * `+33 6` → `+336`; `0023769` → `+23769`.
 */
export function phoneSearchPrefix(text: string): string | null {
  const raw = text.replace(SEPARATORS, "");
  if (!/^\+?\d{3,15}$/.test(raw)) return null;
  if (raw.startsWith("+")) return raw;
  if (raw.startsWith("00")) return `+${raw.slice(2)}`;
  if (raw.startsWith("237")) return `+${raw}`;
  return `+237${raw}`;
}
