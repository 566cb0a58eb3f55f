// The operator's wording drift in the simulation: a share of the operator's texts (receipts,
// refusals, balance replies, money received) is sent reworded by one kind of evidence's drift
// generator (services/evidence/src/domain/parsers/testdata/drift.ts, the one its drift tests
// measure the parsers with). The kind is drawn from the simulation's seed when the action is
// chosen; the variant itself is the generator's, seeded by the text's sim id. A drifted text must
// prove exactly what its undrifted text would, or nothing (invariants.ts, `driftedReadings`).
import {
  DRIFT_KINDS,
  drifted,
  type DriftKind,
  type Labelled,
} from "../../services/evidence/src/domain/parsers/testdata/drift.ts";
import type { MessageKind } from "../../services/evidence/src/domain/parsers/types.ts";
import { promotion } from "../../services/evidence/src/domain/sms-templates.ts";
import type { OutgoingSms } from "../simulator/operator-sms.ts";

/** The share of the operator's texts sent drifted. */
export const DRIFT_SHARE = 0.3;

/**
 * The kinds used: all but `new_numbers`, which prints other amounts, references and numbers
 * (another transfer's text, not the same text reworded).
 */
export const SIM_DRIFTS: readonly DriftKind[] = DRIFT_KINDS.filter((k) => k !== "new_numbers");

const KIND_OF: Record<OutgoingSms["about"]["kind"], MessageKind> = {
  deposit: "DEP",
  balance: "BAL",
  refusal: "FAIL",
  movement: "UV_IN",
  promotion: "MKT",
};

const NO_FIELDS = {
  amount: null,
  fee: null,
  commission: null,
  balance_after: null,
  operator_ref: null,
  counterparty_msisdn: null,
  counterparty_name: null,
};

/** A drift drawn when an action is chosen: `pick` chooses the kind, `id` seeds the variant. */
export interface DriftPick {
  pick: number;
  id: string;
}

/** One drifted text, as sent: what the undrifted one said, to judge what it proves. */
export interface DriftedText {
  clientMessageId: string;
  simId: string;
  drift: DriftKind;
  /** What the undrifted text is. */
  kind: OutgoingSms["about"]["kind"];
  /** Its amount (a balance reply: the balance). */
  amount: number | null;
  /** The operation it is about (a receipt), if any. */
  operationId: string | null;
}

/**
 * The text reworded by the drift `pick` chooses among those that apply to it (the operator's
 * own promotions are the corpus glued promotions come from), or null when none applies.
 */
export function driftText(sms: OutgoingSms, pick: number, id: string): { drift: DriftKind; raw: string } | null {
  const kind = KIND_OF[sms.about.kind];
  const amount = sms.about.amount ?? null;
  const text: Labelled = {
    id,
    operator: sms.operator,
    kind,
    text: sms.raw,
    expected: {
      ...NO_FIELDS,
      amount: kind === "BAL" ? null : amount,
      balance_after: kind === "BAL" ? amount : null,
      operator_ref: sms.about.reference ?? null,
    },
  };
  const promos: Labelled[] = (["fr", "en"] as const).map((language, i) => ({
    id: `${id}/promotion-${i}`,
    operator: sms.operator,
    kind: "MKT",
    text: promotion(sms.operator, { language, prize: 5000 * (1 + (pick % 9)) }),
    expected: NO_FIELDS,
  }));
  const variants = drifted([text, ...promos]).filter(
    (v) => v.text.id.startsWith(`${id}~`) && SIM_DRIFTS.includes(v.drift),
  );
  if (variants.length === 0) return null;
  const v = variants[pick % variants.length];
  return { drift: v.drift, raw: v.text.text };
}
