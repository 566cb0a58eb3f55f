// What the fleet taught, given back to the product (docs/decisions/evidence.md, "What the fleet
// taught"): each active taught rule with a few texts it read, personal values masked, each text
// labelled with what the rule read of it. `npm run wording:export -w @transferops/evidence`
// writes such an export from a deployment's database; `npm run corpus:add-taught -- <file>`
// turns it into labelled development texts of the corpus (testdata/corpus.jsonl) with their
// source, so the built-in parsers learn the wording release after release.
//
// Masked, as the corpus already masks public texts: the counterparty's number and any other
// phone number ([PHONE]), the counterparty's name ([NAME]) and the operator's reference
// ([TXN_ID]); their labels are then null (nothing to read). Amounts, fees and balances stay:
// they are what the rules read, and they name nobody.

import type { Direction, MessageKind, Operator } from "./types.ts";

/** A text a taught rule read, with what it read. */
export interface TaughtReading {
  text: string;
  kind: MessageKind | null;
  amount: number | null;
  fee: number | null;
  balance_after: number | null;
  operator_ref: string | null;
  counterparty_msisdn: string | null;
  counterparty_name: string | null;
  direction: Direction | null;
}

/** One text of an export: masked, labelled with what the rule read (masked fields null). */
export interface TaughtExample {
  text: string;
  expected: {
    amount: number | null;
    fee: number | null;
    balance_after: number | null;
    operator_ref: null;
    counterparty_msisdn: null;
    counterparty_name: null;
    direction: Direction | null;
  };
}

export interface TaughtRuleExport {
  rule_id: string;
  version: number;
  operator: Operator;
  kind: MessageKind | null;
  language: string;
  direction: Direction | null;
  template: string;
  examples: TaughtExample[];
}

/** The file `wording:export` writes and `corpus:add-taught` reads. */
export interface TaughtExport {
  format: "transferops.taught-wordings.v1";
  /** Who exported it (the deployment's name, `--from`), for the corpus's `source`. */
  from: string;
  /** The country of the fleet's SIMs (`--country`), as the corpus labels texts. */
  country: string;
  exported_at: string;
  rules: TaughtRuleExport[];
}

export const TAUGHT_EXPORT_FORMAT = "transferops.taught-wordings.v1";

/** A phone number as texts write it: 8 to 12 digits, maybe with a `+` and spaces between (a date's dashes are not). */
const PHONE = /\+?(?<!\d)\d(?: ?\d){7,11}(?!\d)/g;

const escape = (s: string) => s.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");

/** `value` in `text`, its letters in any case and its spaces as any run of spaces. */
function anyCase(value: string): RegExp {
  return new RegExp(value.trim().split(/\s+/).map(escape).join("\\s+"), "gi");
}

/** The text with the reading's personal values, and any other phone number, masked. */
export function maskPersonal(r: TaughtReading): string {
  let text = r.text;
  if (r.operator_ref && r.operator_ref.trim()) text = text.replace(anyCase(r.operator_ref), "[TXN_ID]");
  if (r.counterparty_name && r.counterparty_name.trim().length >= 2)
    text = text.replace(anyCase(r.counterparty_name), "[NAME]");
  // A run of digits that is one of the reading's figures (a balance of 12 345 678) is a figure.
  const figures = new Set([r.amount, r.fee, r.balance_after].filter((v) => v !== null).map(String));
  return text.replace(PHONE, (run) => (figures.has(run.replace(/\D/g, "")) ? run : "[PHONE]"));
}

/** An example of an export: the masked text and what the rule read of it. */
export function taughtExample(r: TaughtReading): TaughtExample {
  return {
    text: maskPersonal(r),
    expected: {
      amount: r.amount,
      fee: r.fee,
      balance_after: r.balance_after,
      operator_ref: null,
      counterparty_msisdn: null,
      counterparty_name: null,
      direction: r.direction,
    },
  };
}
