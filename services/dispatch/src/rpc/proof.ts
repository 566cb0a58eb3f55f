import type { ServiceImpl } from "@connectrpc/connect";
import { fromTs, type EntityManager, proofDelay, rows, check } from "@transferops/kit";
import type { EvidenceSummary } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_pb";
import type { DispatchService } from "@transferops/kit/gen/transferops/dispatch/v1/dispatch_service_pb";
import {
  ACTIVE_STATUSES,
  amountDivergence,
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
  type ProofDecision,
} from "../domain/index.ts";
import { raiseAlert } from "../events/alerts.ts";
import { findOperation, type OperationChange, type OperationRecord } from "../store/operations.ts";
import { findProof, insertProof, lockMessage, lockProofCandidates, proofCandidatesTo } from "../store/proofs.ts";
import { actorOf, toOperation } from "../flows/mappers.ts";
import type { DispatchDeps } from "../flows/ports.ts";
import { isUuid, lockOrNotFound, move, notFound } from "../flows/transitions.ts";

type Impl = Pick<ServiceImpl<typeof DispatchService>, "proveOperation" | "attachEvidence">;

interface EvidenceFacts {
  message_id: string;
  operator_ref: string | null;
  amount: number;
  fee: number | null;
  balance_after: number | null;
  raw_text: string;
  received_at: Date | null;
  kind: string | null;
  is_ambiguous: boolean;
}

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

function factsOfSummary(messageId: string, e: EvidenceSummary | undefined): EvidenceFacts {
  return {
    message_id: messageId,
    operator_ref: e?.operatorRef || null,
    amount: Number(e?.amount ?? 0n),
    fee: e?.fee === undefined ? null : Number(e.fee),
    balance_after: e?.balanceAfter === undefined ? null : Number(e.balanceAfter),
    raw_text: e?.rawText ?? "",
    received_at: fromTs(e?.receivedAt) ?? null,
    kind: e?.kind || null,
    is_ambiguous: e?.isAmbiguous ?? false,
  };
}

/** The operation an earlier message already proves, other than `operationId`. */
async function operationProvenBy(em: EntityManager, messageId: string): Promise<string | undefined> {
  const found = await rows<{ operation_id: string }>(
    em,
    `select operation_id from dispatch.operations where evidence_message_id = ?`,
    [messageId],
  );
  return found[0]?.operation_id;
}

export function proofHandlers(deps: DispatchDeps): Impl {
  const { db, config } = deps;

  return {
    /**
     * The proof entry point (design.md §5). One transaction: the message's advisory lock
     * (a concurrent repeat waits, then reads the stored answer), the candidates' row locks
     * (a second message racing for the same operation re-reads it confirmed and drops it),
     * the confirmation with its evidence summary, and the stored answer.
     */
    async proveOperation(req) {
      if (!req.messageId) throw refusal("invalid_request", "message_id is required", { field: "message_id" });
      if (!req.simId) throw refusal("invalid_request", "sim_id is required", { field: "sim_id" });
      const now = deps.now();
      const kind = req.kind || null;
      const evidence: EvidenceFacts = {
        message_id: req.messageId,
        operator_ref: req.operatorRef || null,
        amount: Number(req.amount),
        fee: req.fee === undefined ? null : Number(req.fee),
        balance_after: req.balanceAfter === undefined ? null : Number(req.balanceAfter),
        raw_text: req.rawText,
        received_at: fromTs(req.receivedAt) ?? null,
        kind,
        is_ambiguous: req.isAmbiguousHint,
      };
      const answer = await db.tx(async (em) => {
        await lockMessage(em, req.messageId);
        const stored = await findProof(em, req.messageId);
        if (stored) {
          const op = stored.operation_id ? await findOperation(em, stored.operation_id) : undefined;
          return { outcome: stored.outcome, op, candidates: stored.candidate_operation_ids, changed: false };
        }
        const opTypes = OP_TYPES.filter((t) => kindProves(kind, t));
        const candidates = await lockProofCandidates(
          em,
          req.simId,
          PROVABLE_STATUSES,
          opTypes,
          kind === "BAL" ? null : Number(req.amount),
        );
        let decision: ProofDecision = decideProof(
          candidates,
          {
            kind,
            amount: Number(req.amount),
            counterparty_msisdn: req.counterpartyMsisdn || null,
            device_received_at: fromTs(req.deviceReceivedAt) ?? null,
          },
          now,
          config.lateEvidenceS,
        );
        if (decision.outcome === "no_candidate" && req.counterpartyMsisdn) {
          const local = normaliseMsisdn(req.counterpartyMsisdn.replace(/[^\d+]/g, ""));
          const sameDestination = local
            ? await proofCandidatesTo(em, req.simId, ACTIVE_STATUSES, opTypes, [local, `237${local}`])
            : [];
          decision =
            amountDivergence(sameDestination, {
              kind,
              amount: Number(req.amount),
              counterparty_msisdn: req.counterpartyMsisdn,
              device_received_at: fromTs(req.deviceReceivedAt) ?? null,
            }) ?? decision;
        }
        let op: OperationRecord | undefined;
        let candidateIds: string[] = [];
        if (decision.outcome === "confirmed") {
          const before = candidates.find((c) => c.operation_id === decision.operation_id)!.record;
          op = await move(
            em,
            before,
            { type: "proof", within_late_window: isWithinLateWindow(before.finished_at, now, config.lateEvidenceS) },
            { ...evidenceColumns(evidence), confirmed_by: "proof", finished_at: before.finished_at ?? now },
            { trigger: "proof", evidence_message_id: req.messageId, at: now },
          );
        } else if (decision.outcome === "ambiguous") {
          candidateIds = [...decision.candidate_ids];
        } else if (decision.outcome === "divergent") {
          const divergent = decision;
          op =
            candidates.find((c) => c.operation_id === divergent.operation_id)?.record ??
            (await findOperation(em, divergent.operation_id))!;
          const byAmount = divergent.expected_amount !== undefined;
          await raiseAlert(em, {
            kind: "evidence_divergent",
            severity: "warning",
            message: byAmount
              ? `Message ${req.messageId} on SIM ${req.simId} moved ${divergent.found_amount} to ${divergent.found_msisdn}, but operation ${op.operation_id} to that number is for ${divergent.expected_amount}`
              : `Message ${req.messageId} on SIM ${req.simId} names ${divergent.found_msisdn}, but operation ${op.operation_id} was sent to ${divergent.expected_msisdn}`,
            sim_id: req.simId,
            device_id: op.device_id,
            operation_id: op.operation_id,
            context: {
              message_id: req.messageId,
              amount: Number(req.amount),
              expected_msisdn: divergent.expected_msisdn,
              found_msisdn: divergent.found_msisdn,
              ...(byAmount
                ? { expected_amount: divergent.expected_amount!, found_amount: divergent.found_amount! }
                : {}),
            },
            dedupe_key: `evidence_divergent:${req.messageId}`,
            raised_at: now,
          });
        }
        await insertProof(em, {
          message_id: req.messageId,
          sim_id: req.simId,
          outcome: decision.outcome,
          operation_id: op?.operation_id ?? null,
          candidate_operation_ids: candidateIds,
        });
        return { outcome: decision.outcome, op, candidates: candidateIds, changed: true };
      });
      if (answer.changed) deps.published();
      if (answer.changed && answer.outcome === "confirmed" && answer.op?.finished_at) {
        const { operator, op_type } = answer.op;
        proofDelay.observe(
          { operator, op_type },
          Math.max(0, (now.getTime() - answer.op.finished_at.getTime()) / 1000),
        );
      }
      return {
        outcome: answer.outcome,
        operation: answer.op ? toOperation(answer.op) : undefined,
        candidateOperationIds: answer.candidates,
      };
    },

    async attachEvidence(req) {
      const actor = actorOf(req.caller);
      if (!isUuid(req.operationId)) throw notFound(req.operationId);
      if (req.scopeOnly) {
        const found = await findOperation(db.em(), req.operationId);
        if (!found) throw notFound(req.operationId);
        check(checkAttachScope(actor, found));
        return {};
      }
      if (!req.messageId) throw refusal("invalid_request", "message_id is required", { field: "message_id" });
      const now = deps.now();
      const evidence = factsOfSummary(req.messageId, req.evidence);
      const result = await db.tx(async (em) => {
        const before = await lockOrNotFound(em, req.operationId);
        check(checkAttachScope(actor, before));
        // Idempotent: the same message attached again changes nothing.
        if (before.evidence_message_id === req.messageId) return { op: before, changed: false };
        unwrap(transition(before, { type: "attach", has_evidence: before.evidence_message_id !== null }));
        if (before.sim_id !== req.simId) {
          throw refusal(
            "evidence_sim_mismatch",
            `Message ${req.messageId} arrived on SIM ${req.simId}, not on SIM ${before.sim_id ?? "(deleted)"} of operation ${before.operation_id}`,
            { operation_id: before.operation_id, operation_sim_id: before.sim_id, evidence_sim_id: req.simId },
          );
        }
        const other = await operationProvenBy(em, req.messageId);
        if (other) {
          // The other operation may be outside the caller's scope: it is not named.
          throw refusal("evidence_already_used", `Message ${req.messageId} already proves another operation`, {
            message_id: req.messageId,
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
          { trigger: "attach", actor_agent_id: actor.agent_id, evidence_message_id: req.messageId, at: now },
        );
        return { op, changed: true };
      });
      if (result.changed) deps.published();
      return { operation: toOperation(result.op) };
    },
  };
}
