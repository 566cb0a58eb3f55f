// The operator/prefix rule of the platform, in one place: dispatch's create-operation
// gate and intake's create-transaction check both use it.
//
// Numbers are handled in the contract's 9-digit local form. A caller may write the
// country code (`+237`, `00237` or `237` followed by the 9 local digits) and spaces;
// `normaliseMsisdn` reduces those to the local form before any rule runs. Nothing else
// is rewritten: a number that is not 9 digits afterwards is not a mobile-money number.

import { OPERATORS, type Operator } from "./vocabulary.ts";

const LOCAL_LENGTH = 9;

/** Three-digit prefixes per operator, from the contract's table. Anything else (66x included) is undetermined. */
const PREFIX_RANGES: Readonly<Record<Operator, readonly (readonly [number, number])[]>> = {
  operator_a: [
    [670, 679],
    [650, 654],
    [680, 680],
    [682, 683],
  ],
  operator_b: [
    [690, 699],
    [640, 649],
    [655, 659],
    [681, 681],
    [684, 689],
  ],
};

/** The 9-digit local form, or null when the text is not a Cameroon number in any accepted spelling. */
export function normaliseMsisdn(raw: string): string | null {
  const compact = raw.replace(/\s+/g, "");
  const local = stripCountryCode(compact);
  return /^\d+$/.test(local) && local.length === LOCAL_LENGTH ? local : null;
}

function stripCountryCode(compact: string): string {
  // `237` is stripped only when 9 digits follow, so a local number is never cut.
  for (const prefix of ["+237", "00237", "237"]) {
    if (compact.startsWith(prefix) && compact.length === prefix.length + LOCAL_LENGTH) {
      return compact.slice(prefix.length);
    }
  }
  return compact;
}

/** The operator owning the number's prefix, or null when the number is malformed or the prefix is nobody's. */
export function operatorOf(msisdn: string): Operator | null {
  const local = normaliseMsisdn(msisdn);
  if (local === null) return null;
  const prefix = Number(local.slice(0, 3));
  for (const operator of OPERATORS) {
    if (PREFIX_RANGES[operator].some(([low, high]) => prefix >= low && prefix <= high)) return operator;
  }
  return null;
}

/** What the rule says of a destination: malformed, nobody's prefix, or its operator and local form. */
export type DestinationCheck =
  | { kind: "invalid_msisdn" }
  | { kind: "operator_undetermined"; msisdn: string }
  | { kind: "ok"; msisdn: string; operator: Operator };

export function checkDestination(raw: string): DestinationCheck {
  const local = normaliseMsisdn(raw);
  if (local === null) return { kind: "invalid_msisdn" };
  const operator = operatorOf(local);
  return operator === null ? { kind: "operator_undetermined", msisdn: local } : { kind: "ok", msisdn: local, operator };
}

/** Characters operators print in place of hidden digits ("237699****12", "69XXXX123"). */
const MASK = /[*xX•#]+/g;

/**
 * Whether a number printed in an operator SMS is the destination (its 9-digit local form), in
 * any reading: local, `+237`/`00237`/`237` international, partly masked. `false` when it
 * contradicts the destination in every reading: another local number, a foreign number (it
 * can never be a Cameroon destination), a masked number whose visible digits disagree. `null`
 * when the text shows no digit at all (a name, "ORANGE"): nothing to compare. A proof names
 * the number money went to; a number that is not the destination is a divergence, never a
 * confirmation (contract: "Divergent amount or MSISDN: no confirmation, alert").
 */
export function isSameNumber(printed: string, destination: string): boolean | null {
  const compact = printed.replace(/[\s\-.()/]/g, "").replace(/^\+/, "");
  if (!/\d/.test(compact)) return null;
  // Anything but digits and masks is not a number we could have sent to.
  if (!/^[\d*xX•#]+$/.test(compact)) return false;
  const local = normaliseMsisdn(destination) ?? destination.replace(/\D/g, "");
  const readings = [local, `237${local}`, `00237${local}`];
  // A mask hides one or more digits: its visible digits must sit where the reading has them.
  const shape = new RegExp(`^${compact.replace(MASK, "\\d+")}$`);
  return readings.some((r) => shape.test(r));
}
