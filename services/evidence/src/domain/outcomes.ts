// What becomes of a message: the rules of the contract's "Submit SMS messages" in their
// order of precedence, as pure decisions. The flow in ../flows/ applies them under locks.
//
//   1. duplicate (same sms_hash)           -> the stored result, nothing processed again
//   1b. sender is not one of the operator's sender ids -> `unknown_sender` (alert, never matched)
//   2. kind is a movement                   -> `movement` (movements list, never matched)
//   3. kind can never confirm               -> `stored` (mini statements, notices, FAIL)
//   3b. no rule recognised the text (kind null) -> `orphan` (unmatched queue, never confirms)
//   4. correlate is false                   -> `not_correlated`
//   5. operator_ref already proved an operation on this SIM -> `restated` (same operation)
//   6. nothing to match by (no amount; no balance for BAL)   -> `orphan`
//   7. dispatch's answer: confirmed | ambiguous | divergent | no_candidate (-> `orphan`) |
//      contradicting (-> `divergent`, linked to the failed or rejected operation it proves)
//
// See message-state.md for the states a stored message goes through.

import { canConfirm, canConfirmBalance, isMovement, MOVEMENT_KINDS, UNRECOGNISED_RULE } from "./parsers/parse.ts";
import type { MessageKind } from "./parsers/types.ts";

export const OUTCOMES = [
  "pending", // stored; correlation not finished yet (a retry or the re-drive finishes it)
  "confirmed", // proved an operation: dispatch confirmed it with this message
  "restated", // repeated a reference already proved on this SIM: names the same operation
  "ambiguous", // several operations matched on amount: nothing confirmed, left for a person
  "divergent", // amount or MSISDN contradicts the operation: nothing confirmed, alert raised
  "orphan", // matched nothing: kept in the unmatched queue, never deleted
  "movement", // money moved that no operation asked for: movements list
  "stored", // a kind that never confirms (mini statement, notice, marketing, template, FAIL)
  "not_correlated", // submitted with correlate=false: stored only
  "attached", // a person attached it to an operation (attach route)
  "unknown_sender", // not sent by one of the operator's sender ids: alert raised, never matched
] as const;

export type Outcome = (typeof OUTCOMES)[number];

/** What to do with a new message before any correlation: rules 2 to 4. */
export type Route = "correlate" | "movement" | "stored" | "not_correlated" | "orphan" | "unknown_sender";

export function routeOf(
  kind: MessageKind | null,
  correlate: boolean,
  rule: string | null = null,
  senderKnown = true,
): Route {
  // Anyone can text a SIM the operator's wording: only the operator's sender ids speak for it.
  if (!senderKnown) return "unknown_sender";
  if (isMovement(kind)) return "movement";
  if (kind === null) {
    // A wording a rule recognised without giving it a kind (a merchant payment, a loan
    // repayment, an over-long text) moved money nobody asked us to send.
    if (rule !== null && rule !== UNRECOGNISED_RULE) return "stored";
    if (!correlate) return "not_correlated";
    // A text no rule recognises is the contract's "possible deposit": it waits in the
    // unmatched queue with what could be read of it, for a person. It never confirms
    // automatically: nothing proves it is a deposit (docs/decisions/evidence.md).
    return "orphan";
  }
  if (!canConfirm(kind) && !canConfirmBalance(kind)) return "stored";
  if (!correlate) return "not_correlated";
  return "correlate";
}

/** The outcome a message has once stored, before correlation. */
export function initialOutcome(route: Route): Outcome {
  return route === "correlate" ? "pending" : route;
}

/** Dispatch's answer to a proof request (ProveOperationResponse.outcome). */
export type ProofAnswer = "confirmed" | "ambiguous" | "no_candidate" | "divergent" | "restated" | "contradicting";

export function outcomeOfProof(answer: string): Outcome {
  switch (answer) {
    case "confirmed":
      return "confirmed";
    case "ambiguous":
      return "ambiguous";
    case "divergent":
    case "contradicting":
      return "divergent";
    case "no_candidate":
      return "orphan";
    case "restated":
      return "restated";
    default:
      // An answer this service does not know must not be read as anything: the message
      // stays pending and the failure is logged by the caller.
      throw new Error(`unknown proof answer from dispatch: ${answer}`);
  }
}

/**
 * The value dispatch matches by exactly: the amount of a deposit, the balance of a balance
 * reply (rule 6). Null means there is nothing to match by, and the message is an orphan.
 */
export function matchValueOf(m: {
  kind: MessageKind | null;
  amount: number | null;
  balance_after: number | null;
}): number | null {
  if (m.kind === "BAL") return m.balance_after;
  return m.amount;
}

/** The balance a proof writes to the SIM's mirror and the source fleet records it as. */
export function provenBalanceOf(m: {
  kind: MessageKind | null;
  balance_after: number | null;
}): { balance: number; source: "sms" | "balance_check" } | null {
  if (m.balance_after === null || m.balance_after < 0) return null;
  return { balance: m.balance_after, source: m.kind === "BAL" ? "balance_check" : "sms" };
}

/** `matched`: the message names an operation, by proof, restatement or a person's attach. */
export function isMatched(outcome: Outcome): boolean {
  return outcome === "confirmed" || outcome === "restated" || outcome === "attached";
}

export function isRestated(outcome: Outcome): boolean {
  return outcome === "restated";
}

/**
 * Kinds the unmatched queue shows while the message names no operation and nobody
 * dismissed it: what could have proved a transfer or a balance check (DEP, BAL, null), and
 * operator refusals (FAIL), which a person needs to settle a transfer that never arrived.
 * Movements have their own list; notices, marketing, templates and mini statements prove
 * nothing and would only bury the queue.
 */
export function inUnmatchedQueue(kind: MessageKind | null): boolean {
  return kind === null || canConfirm(kind) || canConfirmBalance(kind) || kind === "FAIL";
}

export const UNMATCHED_QUEUE_KINDS: readonly MessageKind[] = ["DEP", "BAL", "FAIL"];

export { MOVEMENT_KINDS };
