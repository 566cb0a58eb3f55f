// Proof: which operation an operator message proves (design.md §5). Evidence parses and
// stores the message, then asks dispatch; dispatch gathers the candidate operations of
// the message's SIM under row locks and this function decides. The rules, in order:
//
//   1. Kind. A balance reply (BAL) proves only a balance check, whatever its amount (the
//      operation carries the placeholder 1, the message the balance read). A deposit
//      (DEP) proves only a transfer (deposit, withdrawal, float_deposit), by EXACT amount.
//      Every other kind (unrecognised texts, movements, notices, mini statements,
//      refusals) proves nothing.
//   2. Time. When the handset said when it received the message, an operation created
//      after that instant cannot be what the message answers.
//   3. Number, then status tiers. When the message names a counterparty number, operations
//      sent to a number it contradicts are set aside (unless that leaves none: rule 5).
//      Then active operations (queued, running, awaiting_evidence, awaiting_manual_dial)
//      first; only when none fits, no_evidence operations whose finished_at is still
//      inside the late evidence window.
//   4. Dialled first, inside the active tier (docs/decisions/evidence.md, "Coherent
//      match"): operations a handset has claimed (running, awaiting_evidence: dialled or
//      being dialled) first, since the message arrives on the handset that dialled them;
//      then matching operations (awaiting_manual_dial: a person may have dialled them by
//      hand); queued operations, which no handset ever claimed, last. So a message is
//      never given to a same-amount operation nobody dialled while one that was dialled
//      explains it. Inside the late tier, handset origins before matching ones.
//   5. One candidate left: confirmed, unless the message names a counterparty number
//      that is not the operation's destination in any reading (another or a foreign
//      number, a mask whose visible digits disagree): divergent (nothing confirmed, an
//      alert is raised). Several: ambiguous (nothing confirmed; a person decides).
//      None: no_candidate (evidence keeps the message as an orphan), unless an active
//      operation of the SIM was sent to the number the message names for another amount:
//      divergent too (amountDivergence).

import { isSameNumber, PROVABLE_OPERATION_STATUSES } from "@transferops/kit/pure";
import { normaliseMsisdn } from "./operators.ts";
import { ACTIVE_STATUSES, type OperationStatus } from "./operation-state.ts";
import { isAccountQuery, type Origin, type OpType } from "./vocabulary.ts";
import { isWithinLateWindow } from "./windows.ts";

export interface ProofCandidate {
  readonly operation_id: string;
  readonly status: OperationStatus;
  readonly origin: Origin;
  readonly op_type: OpType;
  readonly montant: number;
  readonly msisdn_dest: string;
  readonly created_at: Date;
  readonly finished_at: Date | null;
}

export interface ProofMessage {
  /** `DEP`, `BAL`, ...; null when no rule recognised the text. */
  readonly kind: string | null;
  readonly amount: number;
  readonly counterparty_msisdn: string | null;
  readonly device_received_at: Date | null;
}

export type ProofDecision =
  | { readonly outcome: "confirmed"; readonly operation_id: string }
  | { readonly outcome: "ambiguous"; readonly candidate_ids: readonly string[] }
  | { readonly outcome: "no_candidate" }
  | {
      readonly outcome: "divergent";
      readonly operation_id: string;
      readonly expected_msisdn: string;
      readonly found_msisdn: string;
      /** Set when the amount diverges (the message names the operation's destination). */
      readonly expected_amount?: number;
      readonly found_amount?: number;
    };

/** Handset-dialled origins, tried before the hand-dialled matching operations. */
const HANDSET_ORIGINS: readonly Origin[] = ["aggregated", "assisted"];

/** The statuses worth loading as candidates: every active one, and no_evidence (late window checked here). */
export const PROVABLE_STATUSES: readonly OperationStatus[] = PROVABLE_OPERATION_STATUSES;

/** Whether a message of this kind can prove an operation of this type (rule 1). */
export function kindProves(kind: string | null, opType: OpType): boolean {
  if (kind === "BAL") return opType === "balance";
  // An unrecognised text (kind null) proves nothing: nothing in it says it is a deposit.
  if (kind === "DEP") return !isAccountQuery(opType);
  return false;
}

/** Whether the amount must match exactly; a balance reply carries the balance, not the placeholder. */
export function matchesAmount(
  kind: string | null,
  candidate: Pick<ProofCandidate, "montant">,
  amount: number,
): boolean {
  return kind === "BAL" || candidate.montant === amount;
}

export function decideProof(
  candidates: readonly ProofCandidate[],
  message: ProofMessage,
  now: Date,
  lateEvidenceS: number,
): ProofDecision {
  const fitting = candidates.filter(
    (c) =>
      kindProves(message.kind, c.op_type) &&
      matchesAmount(message.kind, c, message.amount) &&
      (message.device_received_at === null || c.created_at.getTime() <= message.device_received_at.getTime()),
  );
  // Rule 3, the number: an operation sent to a number the message contradicts is not what it
  // proves, so it is set aside before the tiers (a same-amount operation to another number
  // neither takes the proof nor hides the one it names). When every fitting operation is
  // contradicted, they all stay, and rule 5 names the divergence.
  const coherent = fitting.filter((c) => divergentNumber(message, c) === null);
  const considered = coherent.length > 0 ? coherent : fitting;
  const active = considered.filter((c) => ACTIVE_STATUSES.includes(c.status));
  const late = considered.filter(
    (c) => c.status === "no_evidence" && isWithinLateWindow(c.finished_at, now, lateEvidenceS),
  );
  const tier = active.length > 0 ? active : late;
  if (tier.length === 0) return { outcome: "no_candidate" };
  const pool = firstNonEmpty(active.length > 0 ? dialledFirst(tier) : originFirst(tier));
  if (pool.length > 1) {
    return { outcome: "ambiguous", candidate_ids: pool.map((c) => c.operation_id).sort() };
  }
  const [single] = pool as [ProofCandidate];
  const divergence = divergentNumber(message, single);
  if (divergence !== null) {
    return {
      outcome: "divergent",
      operation_id: single.operation_id,
      expected_msisdn: single.msisdn_dest,
      found_msisdn: divergence,
    };
  }
  return { outcome: "confirmed", operation_id: single.operation_id };
}

/** The active tier's preference groups, most likely dialled first (rule 4). */
function dialledFirst(tier: readonly ProofCandidate[]): ProofCandidate[][] {
  const claimed = (c: ProofCandidate) => c.status === "running" || c.status === "awaiting_evidence";
  // Only handset-dialled origins are ever claimed; matching operations await a manual dial.
  return [
    tier.filter(claimed),
    tier.filter((c) => c.status === "awaiting_manual_dial"),
    tier.filter((c) => c.status === "queued"),
  ];
}

/** The late tier's preference groups: handset origins, then every origin. */
function originFirst(tier: readonly ProofCandidate[]): ProofCandidate[][] {
  return [tier.filter((c) => HANDSET_ORIGINS.includes(c.origin)), [...tier]];
}

function firstNonEmpty(groups: readonly ProofCandidate[][]): ProofCandidate[] {
  return groups.find((g) => g.length > 0) ?? [];
}

/**
 * The counterparty number when it contradicts the destination, else null. A balance reply
 * has no counterparty. A number the message names must be the destination in some reading
 * (local, international, partly masked); a foreign number, another local one or a mask whose
 * visible digits disagree is a divergence: the message proves money went elsewhere. Text
 * with no digit names no number and is ignored.
 */
export function divergentNumber(
  message: Pick<ProofMessage, "kind" | "counterparty_msisdn">,
  candidate: Pick<ProofCandidate, "msisdn_dest">,
): string | null {
  if (message.kind === "BAL" || message.counterparty_msisdn == null) return null;
  const printed = message.counterparty_msisdn;
  if (isSameNumber(printed, candidate.msisdn_dest) !== false) return null;
  return normaliseMsisdn(printed.replace(/[^\d+]/g, "")) ?? printed.replace(/\s+/g, "");
}

/**
 * Amount divergence (contract: "Divergent amount or MSISDN: no confirmation, alert"): when no
 * operation matched the message's amount, an active operation of the same SIM sent to the
 * number the message names, for another amount, is divergent. `sameDestination` are the SIM's
 * operations to that number (any amount); the newest that the message could answer is named.
 */
export function amountDivergence(
  sameDestination: readonly ProofCandidate[],
  message: ProofMessage,
): Extract<ProofDecision, { outcome: "divergent" }> | null {
  if (message.kind === "BAL" || message.counterparty_msisdn == null) return null;
  const found = normaliseMsisdn(message.counterparty_msisdn.replace(/[^\d+]/g, ""));
  if (found === null) return null;
  const named = sameDestination
    .filter(
      (c) =>
        kindProves(message.kind, c.op_type) &&
        ACTIVE_STATUSES.includes(c.status) &&
        (normaliseMsisdn(c.msisdn_dest) ?? c.msisdn_dest) === found &&
        c.montant !== message.amount &&
        (message.device_received_at === null || c.created_at.getTime() <= message.device_received_at.getTime()),
    )
    .sort((a, b) => b.created_at.getTime() - a.created_at.getTime());
  const op = named[0];
  if (!op) return null;
  return {
    outcome: "divergent",
    operation_id: op.operation_id,
    expected_msisdn: op.msisdn_dest,
    found_msisdn: found,
    expected_amount: op.montant,
    found_amount: message.amount,
  };
}
