// Attach is proof, arbitration is word (docs/decisions/dispatch.md, "Attach"). A person who
// attaches an orphan message to an operation confirms it as the operator's proof, so the
// message must be one that could have proved the operation by itself. Checked in this order,
// the first that disagrees is the refusal (422, `context.reason`):
//
//   1. sender   the message came from one of the operator's sender ids for that SIM, not from
//               an unknown sender (anyone can text a SIM the operator's wording):
//               `evidence_unknown_sender`;
//   2. kind     a deposit for a transfer, a balance reply for a balance check; a refusal
//               (FAIL), a movement, a notice or a text no rule recognised proves nothing:
//               `evidence_kind_cannot_prove`;
//   3. amount   a deposit's amount is exactly the operation's (a balance reply carries the
//               balance, not the placeholder amount of a balance check): `evidence_amount_mismatch`;
//   4. number   a number the message names is the operation's destination in some reading
//               (local, international, partly masked): `evidence_number_mismatch`;
//   5. dialled  the operation was dialled, by a handset or (matching) by a person: a queued
//               operation no handset ever claimed cannot be what the operator answered:
//               `operation_never_dialled`.
//
// The time rule of correlation (an operation created after the handset received the message
// is not what it answers) does not apply: a deposit dialled by hand is recorded as a matching
// operation after its SMS arrived, and attaching that SMS is how it is proven.
//
// A person who knows better than the message uses arbitration, which records a decision and a
// note as word, not as proof. Correlation's rules (kind, amount, number) are the ones of
// correlation.ts, so the two never disagree on what a message proves.

import { divergentNumber, kindProves, matchesAmount } from "./correlation.ts";
import type { DomainError } from "./errors.ts";
import type { OperationStatus } from "./operation-state.ts";
import { refusal } from "./reasons.ts";
import type { OpType } from "./vocabulary.ts";

/** The operation as the rule reads it. */
export interface AttachTarget {
  readonly operation_id: string;
  readonly status: OperationStatus;
  readonly op_type: OpType;
  readonly montant: number;
  readonly msisdn_dest: string;
}

/** What evidence says of the message. */
export interface AttachedMessage {
  readonly message_id: string;
  /** Sent by one of the operator's sender ids (evidence decided it when the message arrived). */
  readonly sender_is_operator: boolean;
  /** `DEP`, `BAL`, ...; null when no rule recognised the text. */
  readonly kind: string | null;
  /** A deposit's amount; a balance reply's balance. */
  readonly amount: number;
  readonly counterparty_msisdn: string | null;
}

/** Never dialled: queued, no handset ever claimed it (a matching operation is dialled by a person). */
const NEVER_DIALLED: readonly OperationStatus[] = ["queued"];

/** Null when the message could have proved the operation by itself; else the refusal naming what disagrees. */
export function checkAttachProof(op: AttachTarget, m: AttachedMessage): DomainError | null {
  const base = { operation_id: op.operation_id, evidence_id: m.message_id };
  if (!m.sender_is_operator) {
    return refusal(
      "evidence_unknown_sender",
      `Message ${m.message_id} was not sent by the operator's sender; it proves nothing (arbitration records a decision)`,
      base,
    );
  }
  if (!kindProves(m.kind, op.op_type)) {
    return refusal(
      "evidence_kind_cannot_prove",
      `A message of kind ${m.kind ?? "unrecognised"} cannot prove a ${op.op_type} operation`,
      { ...base, evidence_kind: m.kind, op_type: op.op_type },
    );
  }
  if (!matchesAmount(m.kind, op, m.amount)) {
    return refusal(
      "evidence_amount_mismatch",
      `Message ${m.message_id} moved ${m.amount} FCFA; operation ${op.operation_id} is for ${op.montant} FCFA`,
      { ...base, expected_amount: op.montant, found_amount: m.amount },
    );
  }
  const other = divergentNumber(m, op);
  if (other !== null) {
    return refusal(
      "evidence_number_mismatch",
      `Message ${m.message_id} names ${other}; operation ${op.operation_id} was sent to ${op.msisdn_dest}`,
      { ...base, expected_msisdn: op.msisdn_dest, found_msisdn: other },
    );
  }
  if (NEVER_DIALLED.includes(op.status)) {
    return refusal(
      "operation_never_dialled",
      `Operation ${op.operation_id} was never dialled; no operator message can prove it`,
      { ...base, operation_status: op.status },
    );
  }
  return null;
}
