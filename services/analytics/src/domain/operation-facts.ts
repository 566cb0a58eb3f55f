import { TRANSFER_OP_TYPES } from "@transferops/kit/pure";

/** Deposits, withdrawals and float deposits move money (the kit's transfer types); balance checks and mini statements do not. */
export const isTransfer = (opType: string) => (TRANSFER_OP_TYPES as readonly string[]).includes(opType);

/** Triggers by which a person decided or proved an operation. */
const BY_HAND = new Set(["attach", "settle", "arbitrate"]);
/** Statuses only reached after the handset dialled (or finished dialling). */
const DIALLED = new Set(["awaiting_evidence", "no_evidence"]);

export interface Transition {
  status: string;
  previousStatus: string;
  trigger: string;
  deviceOutcome: string;
  decision: string;
  changedAt: Date;
  evidenceReceivedAt?: Date;
  evidenceFee?: bigint;
}

export interface TransitionFacts {
  dialled: boolean;
  confirmed_by: string | null;
  touched_by_hand: boolean;
  has_message: boolean;
  settled_by_hand: string | null;
  lost: boolean;
  fee: bigint | null;
  proof_delay_s: number | null;
}

/**
 * What one transition teaches analytics about an operation:
 * - dialled: it reached (or left) awaiting_evidence or no_evidence;
 * - confirmed_by: the trigger that confirmed it (`proof` alone is an automatic confirmation);
 * - touched_by_hand: a person attached a message, settled or arbitrated;
 * - has_message: an operator message names it (proof or attach, also after a settlement on word,
 *   or a proof that contradicts a failure: `contradicted`);
 * - settled_by_hand: the decision of a board settle or an admin arbitration;
 * - lost: refused by the operator (`ussd_failed`) or settled as never arrived;
 * - fee and proof delay (message arrival → pairing) from the confirming message.
 */
export function operationFacts(t: Transition): TransitionFacts {
  const confirmed = t.status === "confirmed";
  const withMessage = confirmed && (t.trigger === "proof" || t.trigger === "attach");
  const byHand = BY_HAND.has(t.trigger);
  return {
    dialled: DIALLED.has(t.status) || DIALLED.has(t.previousStatus),
    confirmed_by: confirmed ? t.trigger : null,
    touched_by_hand: byHand,
    has_message: t.trigger === "proof" || t.trigger === "attach" || t.trigger === "contradicted",
    settled_by_hand: (t.trigger === "settle" || t.trigger === "arbitrate") && t.decision ? t.decision : null,
    lost:
      t.status === "failed" &&
      (t.deviceOutcome === "ussd_failed" || t.trigger === "settle" || t.trigger === "arbitrate"),
    fee: withMessage && t.evidenceFee !== undefined ? t.evidenceFee : null,
    proof_delay_s:
      confirmed && t.trigger === "proof" && t.evidenceReceivedAt
        ? Math.max(0, (t.changedAt.getTime() - t.evidenceReceivedAt.getTime()) / 1000)
        : null,
  };
}
