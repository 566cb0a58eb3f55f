// What a stored message can still prove, as the unmatched queue shows it and attach sends it
// to dispatch. Attach is proof (dispatch's domain/attach-proof.ts decides against the
// operation): only a message that could have proved an operation by itself can be attached.
// This is the part that depends on the message alone:
//
//   sender  the operator's sender ids speak for it (outcome `unknown_sender` otherwise,
//           decided once when the message arrived: senders.ts); an unknown sender's text is
//           never a candidate for any operation;
//   kind    a deposit (DEP) or a balance reply (BAL); a refusal (FAIL), a movement, a notice
//           or a text no rule recognised (kind null) proves nothing;
//   amount  a deposit's amount, a balance reply's balance, to match exactly.

import { canConfirm, canConfirmBalance } from "./parsers/parse.ts";
import type { MessageRecord } from "./message.ts";
import { matchValueOf } from "./outcomes.ts";

export type CannotProve = "unknown_sender" | "kind_cannot_prove" | "no_amount";

export interface ProofStanding {
  sender_is_operator: boolean;
  can_prove: boolean;
  cannot_prove_reason: CannotProve | null;
}

export function proofStanding(m: Pick<MessageRecord, "outcome" | "kind" | "amount" | "balance_after">): ProofStanding {
  const sender_is_operator = m.outcome !== "unknown_sender";
  const reason: CannotProve | null = !sender_is_operator
    ? "unknown_sender"
    : !canConfirm(m.kind) && !canConfirmBalance(m.kind)
      ? "kind_cannot_prove"
      : matchValueOf(m) === null
        ? "no_amount"
        : null;
  return { sender_is_operator, can_prove: reason === null, cannot_prove_reason: reason };
}
