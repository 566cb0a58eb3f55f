import { check, proofDelay, type EntityManager } from "@transferops/kit";
import {
  ACTIVE_STATUSES,
  amountDivergence,
  checkAttachProof,
  checkAttachScope,
  decideProof,
  isDebiting,
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
import { publishChange } from "../events/operations.ts";
import { findOperation, updateOperation, type OperationChange, type OperationRecord } from "../store/operations.ts";
import {
  answeredBefore,
  insertProof,
  lockDialledDebit,
  type DialledDebit,
  lockMessage,
  lockProofCandidates,
  lockRetryOf,
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

/** What correlation decided, or a message that proves an operation already failed or rejected. */
type Decided = ProofDecision | { readonly outcome: "contradicting"; readonly operation: OperationRecord };

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
 * Correlation over the SIM's locked candidates; when none matches, a failed or rejected
 * operation of that amount (and number, when the message names one) is contradicted (it
 * went after all: `contradict`); otherwise, when the message names a counterparty, an
 * operation to that number for another amount is reported divergent.
 */
async function decide(
  em: EntityManager,
  { sim_id, message }: ProofClaim,
  now: Date,
  lateEvidenceS: number,
): Promise<{ decision: Decided; candidates: Candidate[] }> {
  const opTypes = OP_TYPES.filter((t) => kindProves(message.kind, t));
  const candidates = await lockProofCandidates(
    em,
    sim_id,
    PROVABLE_STATUSES,
    opTypes,
    message.kind === "BAL" ? null : message.amount,
  );
  const decision = decideProof(candidates, message, now, lateEvidenceS);
  const local = message.counterparty_msisdn
    ? normaliseMsisdn(message.counterparty_msisdn.replace(/[^\d+]/g, ""))
    : null;
  // The SIM's newest dialled debit of the text's amount (and number, when it names one), as
  // `which` finds it: failed or rejected (contradicted), or confirmed on word.
  const dialledDebit = (which: DialledDebit) =>
    message.kind !== "BAL" && (local || !message.counterparty_msisdn)
      ? lockDialledDebit(em, which, {
          simId: sim_id,
          opTypes: opTypes.filter(isDebiting),
          amount: message.amount,
          msisdns: local ? [local, `237${local}`] : null,
          withinS: lateEvidenceS,
        })
      : Promise.resolve(undefined);
  const contradicted = () => dialledDebit("failed");
  if (decision.outcome === "confirmed") {
    // A retry no handset has claimed yet did not send this: the parent it retries did, when
    // the parent failed or was rejected for this amount and number.
    const chosen = candidates.find((c) => c.operation_id === decision.operation_id)!.record;
    if (chosen.status !== "queued" || !chosen.parent_operation_id) return { decision, candidates };
    const parent = await contradicted();
    return parent?.operation_id === chosen.parent_operation_id
      ? { decision: { outcome: "contradicting", operation: parent }, candidates }
      : { decision, candidates };
  }
  if (decision.outcome !== "no_candidate") return { decision, candidates };
  // The text of an operation a person already confirmed on word proves that one, not the
  // contradiction of another: a retry's late receipt, settled `arrived` before it came, had
  // contradicted its failed parent (found by the seeded simulation, seed 42).
  const onWord = await dialledDebit("confirmed_on_word");
  if (onWord) {
    const candidate: Candidate = { ...onWord, record: onWord };
    return { decision: { outcome: "confirmed", operation_id: onWord.operation_id }, candidates: [candidate] };
  }
  const operation = await contradicted();
  if (operation) return { decision: { outcome: "contradicting", operation }, candidates };
  if (!message.counterparty_msisdn) return { decision, candidates };
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
  decision: Decided,
  candidates: Candidate[],
  now: Date,
  lateEvidenceS: number,
): Promise<{ op: OperationRecord | undefined; candidateIds: string[]; stored?: true }> {
  if (decision.outcome === "contradicting")
    return { op: await contradict(em, claim, decision.operation, now), candidateIds: [] };
  if (decision.outcome === "confirmed") {
    const before = candidates.find((c) => c.operation_id === decision.operation_id)!.record;
    // Confirmed on word before its text came: it keeps who confirmed it, and gets its proof.
    const onWord = before.status === "confirmed";
    const op = await move(
      em,
      before,
      {
        type: "proof",
        within_late_window: isWithinLateWindow(before.finished_at, now, lateEvidenceS),
        has_evidence: before.evidence_message_id !== null,
      },
      {
        ...evidenceColumns(claim.evidence),
        ...(onWord ? {} : { confirmed_by: "proof" as const }),
        finished_at: before.finished_at ?? now,
      },
      { trigger: "proof", evidence_message_id: claim.evidence.message_id, at: now },
      {
        message_id: claim.evidence.message_id,
        sim_id: claim.sim_id,
        outcome: "confirmed",
        operation_id: before.operation_id,
        candidate_operation_ids: [],
      },
    );
    // The decision on word already watched the retry chain.
    if (!onWord) await watchRetryChain(em, op, claim.evidence, now);
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

/**
 * An operator's proof of an operation that failed or was rejected (settled did_not_arrive,
 * arbitrated failed, cancelled while its handset dialled, or failed by its handset): the
 * money went. The message is linked to it as contradicting evidence (its proof row, and
 * `contradicting_message_id` on the operation, which refuses its retry and keeps its debit
 * held: store/operations.ts `HELD_DEBITS`); a retry still queued is withdrawn before any
 * handset dials it; a critical alert names the operation, who decided it, the text and the
 * retry. The status stays what the person or the handset decided: it is their word, and
 * the arbitration queue shows it first for a person to look at.
 */
async function contradict(
  em: EntityManager,
  claim: ProofClaim,
  before: OperationRecord,
  now: Date,
): Promise<OperationRecord> {
  const messageId = claim.evidence.message_id;
  const op = await updateOperation(em, before, { contradicting_message_id: messageId });
  // The status stays, but the operation changed: the board, analytics and intake hear it.
  await publishChange(em, op, {
    trigger: "contradicted",
    previous_status: op.status,
    evidence_message_id: messageId,
    at: now,
  });
  const retry = await lockRetryOf(em, op.operation_id);
  const withdrawn =
    retry?.status === "queued"
      ? await withdrawRetry(em, retry, op, `the operator's message ${messageId}`, now, messageId)
      : undefined;
  const decidedBy = op.decided_by_name ?? op.decided_by ?? op.reject_reason ?? op.failure_reason ?? op.device_outcome;
  const retryText = retry
    ? withdrawn
      ? ` Its retry ${retry.operation_id} was withdrawn before any handset dialled it.`
      : ` Its retry ${retry.operation_id} is ${retry.status}: it may pay a second time.`
    : " Its retry is refused.";
  await raiseAlert(em, {
    kind: "proof_contradicts_decision",
    severity: "critical",
    message: `Operation ${op.operation_id} is ${op.status} (decided by ${decidedBy ?? "nobody"}), but the operator's message ${messageId} on SIM ${claim.sim_id} proves it: "${claim.evidence.raw_text}".${retryText}`,
    sim_id: claim.sim_id,
    device_id: op.device_id,
    operation_id: op.operation_id,
    context: {
      message_id: messageId,
      raw_text: claim.evidence.raw_text,
      amount: claim.message.amount,
      operation_status: op.status,
      decision: op.decision,
      decided_by: op.decided_by,
      decided_by_name: op.decided_by_name,
      decision_note: op.decision_note,
      reject_reason: op.reject_reason,
      device_outcome: op.device_outcome,
      retry_operation_id: retry?.operation_id ?? null,
      retry_status: withdrawn?.status ?? retry?.status ?? null,
      retry_withdrawn: withdrawn !== undefined,
    },
    dedupe_key: `proof_contradicts_decision:${messageId}`,
    raised_at: now,
  });
  return op;
}

/** A retry no handset has claimed, withdrawn because its parent went through after all (`cause`). */
function withdrawRetry(
  em: EntityManager,
  retry: OperationRecord,
  parent: OperationRecord,
  cause: string,
  now: Date,
  messageId: string | null,
): Promise<OperationRecord> {
  return move(
    em,
    retry,
    { type: "cancel" },
    {
      reject_reason: `Withdrawn: its parent ${parent.operation_id} went through (${cause}).`,
      failure_reason: "parent_went_through",
      finished_at: now,
      contradicting_message_id: messageId,
    },
    { trigger: "cancel", actor_agent_id: null, failure_reason: "parent_went_through", at: now },
  );
}

/** What confirmed an operation, as `watchRetryChain` names it. */
export type ConfirmedBy =
  | { readonly message_id: string; readonly raw_text: string | null }
  | { readonly decided_by_name: string | null; readonly decision: string };

/**
 * After `op` was confirmed (by an operator's message, an attach, or a person's settle or
 * arbitration): the other operations of its retry chain. A retry of a `no_evidence` operation
 * is allowed (the contract asks the board to confirm it first), so its parent can still turn
 * out to have gone: a retry still queued is withdrawn before any handset dials it; one dialled,
 * or confirmed, may have paid (or did pay) a second time, and so does a retry confirmed after
 * its parent was. Each raises a critical alert naming both operations and what confirmed it,
 * for a person to recover the second payment. The confirmations stand.
 */
export async function watchRetryChain(
  em: EntityManager,
  op: OperationRecord,
  by: ConfirmedBy,
  now: Date,
): Promise<void> {
  // Most operations are neither a retry nor retried: no statement for them.
  const retry = op.has_retry ? await lockRetryOf(em, op.operation_id) : undefined;
  const parent = op.parent_operation_id ? await findOperation(em, op.parent_operation_id) : undefined;
  const proof = "message_id" in by;
  const cause = proof
    ? `the operator's message ${by.message_id}`
    : `${by.decision} on the word of ${by.decided_by_name ?? "a person"}`;
  const alert = (other: OperationRecord, text: string, context: Record<string, unknown>) =>
    raiseAlert(em, {
      kind: "retry_chain_paid_twice",
      severity: "critical",
      message: text,
      sim_id: op.sim_id,
      device_id: op.device_id,
      operation_id: op.operation_id,
      context: {
        ...(proof ? { message_id: by.message_id, raw_text: by.raw_text } : { decided_by_name: by.decided_by_name }),
        other_operation_id: other.operation_id,
        other_status: other.status,
        ...context,
      },
      dedupe_key: `retry_chain_paid_twice:${proof ? by.message_id : op.operation_id}`,
      raised_at: now,
    });
  if (retry && retry.status === "queued") {
    const withdrawn = await withdrawRetry(em, retry, op, cause, now, proof ? by.message_id : null);
    await alert(
      withdrawn,
      `Operation ${op.operation_id} went through after all (${cause}); its retry ${retry.operation_id} was withdrawn before any handset dialled it.`,
      { retry_withdrawn: true },
    );
  } else if (retry && (retry.started_at !== null || retry.status === "confirmed") && !endedUndialled(retry)) {
    await alert(
      retry,
      `Operation ${op.operation_id} went through after all (${cause}), and its retry ${retry.operation_id} is ${retry.status}: the customer ${retry.status === "confirmed" ? "was" : "may have been"} paid twice.`,
      { retry_withdrawn: false },
    );
  }
  if (parent?.status === "confirmed") {
    await alert(
      parent,
      `Operation ${op.operation_id} is a retry of ${parent.operation_id}, and both went through (${cause} confirms the retry): the customer was paid twice.`,
      {},
    );
  }
}

/**
 * A person's word never records a second payment of one transfer: an operation whose retry or
 * parent was proven, or was dialled and has not ended, is not confirmed on word (settle `arrived`:
 * `retry_chain_may_have_paid`, 409; arbitrate `confirmed`: its `arbitration_` twin, 422). The
 * person settles the other one first, or attaches the operator's text of a second payment, which
 * is proof. Found by the seeded simulation (seed 42): a parent settled `arrived` after its retry
 * was proven left two confirmed operations for one transfer.
 */
export async function refuseWordOverPaidChain(
  em: EntityManager,
  op: OperationRecord,
  reason: "retry_chain_may_have_paid" | "arbitration_retry_chain_may_have_paid",
): Promise<void> {
  const retry = op.has_retry ? await lockRetryOf(em, op.operation_id) : undefined;
  const parent = op.parent_operation_id ? await findOperation(em, op.parent_operation_id) : undefined;
  const other = [retry, parent].find((o) => o && mayHavePaid(o));
  if (!other) return;
  throw refusal(
    reason,
    `Operation ${other.operation_id} of the same transfer (its ${other === retry ? "retry" : "parent"}) is ${other.status}` +
      `${other.status === "confirmed" ? "" : " after a dial"}: confirming ${op.operation_id} on word would record a second payment`,
    { operation_id: op.operation_id, other_operation_id: other.operation_id, other_status: other.status },
  );
}

/** Proven (or contradicted), or dialled and not ended without its money leaving. */
function mayHavePaid(op: OperationRecord): boolean {
  if (op.status === "confirmed" || op.contradicting_message_id !== null) return true;
  return (op.started_at !== null || op.origin === "matching") && !endedUndialled(op);
}

/**
 * A retry that ended without its money leaving, by the handset's, the operator's or a person's
 * word: failed (unless a proof contradicts it), or rejected before dialling or on a refused dial.
 */
function endedUndialled(op: OperationRecord): boolean {
  if (op.contradicting_message_id !== null) return false;
  if (op.status === "failed") return true;
  return (
    op.status === "rejected" &&
    (op.started_at === null || ["ussd_failed", "name_mismatch", "sim_absent"].includes(op.device_outcome ?? ""))
  );
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
    if (before.status !== "confirmed") await watchRetryChain(em, op, evidence, now);
    return { op, changed: true };
  });
  if (result.changed) deps.published();
  return result.op;
}
