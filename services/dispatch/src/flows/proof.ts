import { check, proofDelay, type EntityManager } from "@transferops/kit";
import {
  ACTIVE_STATUSES,
  amountDivergence,
  checkAttachProof,
  checkAttachScope,
  decideProof,
  isWithinLateWindow,
  kindProves,
  normaliseMsisdn,
  OP_TYPES,
  PROVABLE_STATUSES,
  refusal,
  transition,
  unwrap,
  type Actor,
  type ProofCandidate,
  type ProofDecision,
  type ProofMessage,
} from "../domain/index.ts";
import { raiseAlert } from "../events/alerts.ts";
import { findOperation, type OperationChange, type OperationRecord } from "../store/operations.ts";
import {
  answeredBefore,
  insertProof,
  lockMessage,
  lockProofCandidates,
  operationProvenBy,
  proofCandidatesTo,
  type ProofOutcome,
} from "../store/proofs.ts";
import type { DispatchDeps } from "./ports.ts";
import { lockOrNotFound, move } from "./transitions.ts";

import type { EvidenceFacts } from "../domain/evidence-facts.ts";

/** A message offered as proof: the SIM it arrived on, what correlation reads, what a confirmation keeps. */
export interface ProofClaim {
  sim_id: string;
  message: ProofMessage;
  evidence: EvidenceFacts;
}

export interface ProofAnswer {
  /** `restated`: the message repeats the reference of an operation another message confirmed. */
  outcome: ProofOutcome | "restated";
  op: OperationRecord | undefined;
  candidates: string[];
  /** False when the answer is the one stored for an earlier request with this message. */
  changed: boolean;
}

type Candidate = ProofCandidate & { record: OperationRecord };

function evidenceColumns(e: EvidenceFacts): OperationChange {
  return {
    evidence_message_id: e.message_id,
    evidence_operator_ref: e.operator_ref,
    evidence_amount: e.amount,
    evidence_fee: e.fee,
    evidence_balance_after: e.balance_after,
    evidence_raw_text: e.raw_text,
    evidence_received_at: e.received_at,
    evidence_kind: e.kind,
    evidence_is_ambiguous: e.is_ambiguous,
  };
}

/**
 * The proof entry point (design.md §5). One transaction: the message's advisory lock
 * (a concurrent repeat waits, then reads the stored answer), the candidates' row locks
 * (a second message racing for the same operation re-reads it confirmed and drops it),
 * the confirmation with its evidence summary, and the stored answer.
 */
export async function proveOperation(deps: DispatchDeps, claim: ProofClaim): Promise<ProofAnswer> {
  const now = deps.now();
  const messageId = claim.evidence.message_id;
  const answer = await deps.db.tx(async (em): Promise<ProofAnswer> => {
    await lockMessage(em, messageId);
    // The operator's repeat of a text that already confirmed an operation on this SIM (same
    // reference and amount) proves nothing more, whatever else is now open for that amount:
    // evidence normally knows it first (its own proof by reference), but not when the first
    // text's answer was lost between the two services. Not stored: a repeat of this request
    // finds the same confirmed operation. Read with the stored answer, in one statement.
    const ref = claim.evidence.operator_ref;
    const { stored, restated } = await answeredBefore(
      em,
      messageId,
      ref && claim.message.kind !== "BAL"
        ? { sim_id: claim.sim_id, operator_ref: ref, amount: claim.message.amount }
        : null,
    );
    if (stored) {
      const op = stored.operation_id ? await findOperation(em, stored.operation_id) : undefined;
      return { outcome: stored.outcome, op, candidates: stored.candidate_operation_ids, changed: false };
    }
    if (restated) return { outcome: "restated", op: restated, candidates: [], changed: false };
    const { decision, candidates } = await decide(em, claim, now, deps.config.lateEvidenceS);
    const {
      op,
      candidateIds,
      stored: storedWithChange,
    } = await apply(em, claim, decision, candidates, now, deps.config.lateEvidenceS);
    if (!storedWithChange) {
      await insertProof(em, {
        message_id: messageId,
        sim_id: claim.sim_id,
        outcome: decision.outcome,
        operation_id: op?.operation_id ?? null,
        candidate_operation_ids: candidateIds,
      });
    }
    return { outcome: decision.outcome, op, candidates: candidateIds, changed: true };
  });
  if (answer.changed) deps.published();
  if (answer.changed && answer.outcome === "confirmed" && answer.op?.finished_at) {
    const { operator, op_type } = answer.op;
    proofDelay.observe({ operator, op_type }, Math.max(0, (now.getTime() - answer.op.finished_at.getTime()) / 1000));
  }
  return answer;
}

/**
 * Correlation over the SIM's locked candidates; when none matches and the message names
 * a counterparty, an operation to that number for another amount is reported divergent.
 */
async function decide(
  em: EntityManager,
  { sim_id, message }: ProofClaim,
  now: Date,
  lateEvidenceS: number,
): Promise<{ decision: ProofDecision; candidates: Candidate[] }> {
  const opTypes = OP_TYPES.filter((t) => kindProves(message.kind, t));
  const candidates = await lockProofCandidates(
    em,
    sim_id,
    PROVABLE_STATUSES,
    opTypes,
    message.kind === "BAL" ? null : message.amount,
  );
  const decision = decideProof(candidates, message, now, lateEvidenceS);
  if (decision.outcome !== "no_candidate" || !message.counterparty_msisdn) return { decision, candidates };
  const local = normaliseMsisdn(message.counterparty_msisdn.replace(/[^\d+]/g, ""));
  const sameDestination = local
    ? await proofCandidatesTo(em, sim_id, ACTIVE_STATUSES, opTypes, [local, `237${local}`])
    : [];
  return { decision: amountDivergence(sameDestination, message) ?? decision, candidates };
}

/**
 * What a decision does: confirms its operation, names the ambiguous candidates, or raises the
 * divergence. `stored`: the message's proof row was written with the confirmation (one
 * statement); otherwise the caller stores the answer.
 */
async function apply(
  em: EntityManager,
  claim: ProofClaim,
  decision: ProofDecision,
  candidates: Candidate[],
  now: Date,
  lateEvidenceS: number,
): Promise<{ op: OperationRecord | undefined; candidateIds: string[]; stored?: true }> {
  if (decision.outcome === "confirmed") {
    const before = candidates.find((c) => c.operation_id === decision.operation_id)!.record;
    const op = await move(
      em,
      before,
      { type: "proof", within_late_window: isWithinLateWindow(before.finished_at, now, lateEvidenceS) },
      { ...evidenceColumns(claim.evidence), confirmed_by: "proof", finished_at: before.finished_at ?? now },
      { trigger: "proof", evidence_message_id: claim.evidence.message_id, at: now },
      {
        message_id: claim.evidence.message_id,
        sim_id: claim.sim_id,
        outcome: "confirmed",
        operation_id: before.operation_id,
        candidate_operation_ids: [],
      },
    );
    return { op, candidateIds: [], stored: true };
  }
  if (decision.outcome === "ambiguous") return { op: undefined, candidateIds: [...decision.candidate_ids] };
  if (decision.outcome === "divergent") {
    const op =
      candidates.find((c) => c.operation_id === decision.operation_id)?.record ??
      (await findOperation(em, decision.operation_id))!;
    await raiseDivergence(em, claim, decision, op, now);
    return { op, candidateIds: [] };
  }
  return { op: undefined, candidateIds: [] };
}

async function raiseDivergence(
  em: EntityManager,
  claim: ProofClaim,
  divergent: Extract<ProofDecision, { outcome: "divergent" }>,
  op: OperationRecord,
  now: Date,
): Promise<void> {
  const messageId = claim.evidence.message_id;
  const byAmount = divergent.expected_amount !== undefined;
  await raiseAlert(em, {
    kind: "evidence_divergent",
    severity: "warning",
    message: byAmount
      ? `Message ${messageId} on SIM ${claim.sim_id} moved ${divergent.found_amount} to ${divergent.found_msisdn}, but operation ${op.operation_id} to that number is for ${divergent.expected_amount}`
      : `Message ${messageId} on SIM ${claim.sim_id} names ${divergent.found_msisdn}, but operation ${op.operation_id} was sent to ${divergent.expected_msisdn}`,
    sim_id: claim.sim_id,
    device_id: op.device_id,
    operation_id: op.operation_id,
    context: {
      message_id: messageId,
      amount: claim.message.amount,
      expected_msisdn: divergent.expected_msisdn,
      found_msisdn: divergent.found_msisdn,
      ...(byAmount ? { expected_amount: divergent.expected_amount!, found_amount: divergent.found_amount! } : {}),
    },
    dedupe_key: `evidence_divergent:${messageId}`,
    raised_at: now,
  });
}

/** What evidence knows of an attached message besides its evidence columns (domain/attach-proof.ts). */
export interface AttachedFacts {
  sender_is_operator: boolean;
  counterparty_msisdn: string | null;
}

/**
 * An agent attaches a message to an operation by hand (evidence checked the message);
 * attaching the same message again changes nothing. The message must be one that could have
 * proved the operation by itself (checkAttachProof): attach is proof, arbitration is word.
 */
export async function attachEvidence(
  deps: DispatchDeps,
  actor: Actor,
  operationId: string,
  simId: string,
  evidence: EvidenceFacts,
  facts: AttachedFacts,
): Promise<OperationRecord> {
  const now = deps.now();
  const messageId = evidence.message_id;
  const result = await deps.db.tx(async (em) => {
    const before = await lockOrNotFound(em, operationId);
    check(checkAttachScope(actor, before));
    // Idempotent: the same message attached again changes nothing.
    if (before.evidence_message_id === messageId) return { op: before, changed: false };
    unwrap(transition(before, { type: "attach", has_evidence: before.evidence_message_id !== null }));
    if (before.sim_id !== simId) {
      // The message's SIM is not named: it may be outside the caller's scope.
      throw refusal(
        "evidence_sim_mismatch",
        `Message ${messageId} did not arrive on the SIM of operation ${before.operation_id}`,
        { operation_id: before.operation_id, evidence_id: messageId },
      );
    }
    check(
      checkAttachProof(before, {
        message_id: messageId,
        sender_is_operator: facts.sender_is_operator,
        kind: evidence.kind,
        amount: evidence.amount,
        counterparty_msisdn: facts.counterparty_msisdn,
      }),
    );
    if (await operationProvenBy(em, messageId)) {
      // The other operation may be outside the caller's scope: it is not named.
      throw refusal("evidence_already_used", `Message ${messageId} already proves another operation`, {
        message_id: messageId,
      });
    }
    const op = await move(
      em,
      before,
      { type: "attach", has_evidence: false },
      {
        ...evidenceColumns(evidence),
        ...(before.status === "confirmed" ? {} : { confirmed_by: "attach" as const }),
        finished_at: before.finished_at ?? now,
      },
      { trigger: "attach", actor_agent_id: actor.agent_id, evidence_message_id: messageId, at: now },
    );
    return { op, changed: true };
  });
  if (result.changed) deps.published();
  return result.op;
}
